-- Northwind reports: the views and stored procedures of Microsoft's instnwnd.sql, rewritten for our SQLite schema.
--
-- Conventions (read before using any query)
-- * One statement per report, introduced by `-- name: <key>`. Column aliases are the original column labels.
-- * Money columns hold INTEGER CENTS (feed them to Money(cents:)); the comment of each query lists them.
--   Every money value these reports produce is a whole number of cents, also on SQL Server.
-- * OrderID is orders.number (the classic OrderID as text for imported orders); CustomerID is customers.code;
--   ProductID, CategoryID, EmployeeID, ShipVia, SupplierID are our integer ids (equal to the classic ids on import).
-- * Dates are 'yyyy-MM-dd' text. Parameters :from/:to are day strings and are INCLUSIVE of both days.
-- * Parameters: :year (integer or '1997'; NULL = the original's default), :customer (code, case-insensitive as
--   customers.code is NOCASE), :order (orders.number, e.g. '10248'), :from, :to, :category (category name, NOCASE).
-- * Two functions must be registered on the connection (GRDB: db.add(function:)):
--     f32(x)            -> x rounded to the nearest IEEE-754 binary32 value, returned as a double
--                          (Swift: Double(Float(x)); NULL -> NULL). SQL Server's `real` is binary32, and every
--                          real-typed step of the original expressions is rounded to it.
--     sqlserver_key(s)  -> the sort key of SQL Server's default CI_AS order, approximated: fold(s) = NFD, drop
--                          combining marks U+0300..U+036F, lowercase, drop apostrophes (U+0027) and hyphens (U+002D).
--                          ORDER BY sqlserver_key(x), x sorts on the folded text and breaks ties on the raw text.
--                          A key computed once per row is far cheaper than a collation that folds at every
--                          comparison. (Plain BINARY puts 'Pâté chinois' after 'Perth Pasties'.)
--
-- The money rules (verified in FINDINGS.md against Microsoft's published figures):
--   ExtendedPrice = CONVERT(money, UnitPrice*Quantity*(1-Discount)/100)*100 on SQL Server means
--     a = real(UnitPrice*Quantity)            money*smallint is exact money, then converted to real
--     b = real(1 - real(Discount))            Discount is a real column
--     y = real(real(a*b) / 100)
--     money(y) = y rounded half away from zero to 4 decimals, from y's EXACT binary value
--     *100     = exact, so ExtendedPrice in cents = y * 10000 rounded half away from zero
--   In SQLite:  CAST(f32(f32(f32(ol.unitPriceCents * ol.quantity / 100.0) * f32(1 - f32(ol.discount))) / 100) * 10000 + 0.5 AS INTEGER)
--   y * 10000 is exact in a double (a 24-bit significand times 10000 needs < 53 bits) and so is + 0.5 at these
--   magnitudes; CAST truncates, so for the non-negative values the CHECK constraints guarantee (price >= 0,
--   quantity > 0, 0 <= discount <= 1) this is exactly "half away from zero" -- no dependence on SQLite's round().
--   Sums of money stay exact (integer cents).

-- name: alphabetical_list_of_products
-- original: view "Alphabetical list of products" (Products.*, CategoryName WHERE Discontinued = 0)
-- params: none. money: UnitPrice. rounding: none.
-- order: the view has none; ProductName (CI_AS), ProductID.
SELECT p.id AS "ProductID", p.name AS "ProductName", p.supplierID AS "SupplierID", p.categoryID AS "CategoryID",
       p.quantityPerUnit AS "QuantityPerUnit", p.unitPriceCents AS "UnitPrice", p.unitsInStock AS "UnitsInStock",
       p.unitsOnOrder AS "UnitsOnOrder", p.reorderLevel AS "ReorderLevel", p.discontinued AS "Discontinued",
       c.name AS "CategoryName"
FROM categories c
JOIN products p ON c.id = p.categoryID
WHERE p.discontinued = 0
ORDER BY sqlserver_key(p.name), p.name, p.id;

-- name: current_product_list
-- original: view "Current Product List"
-- params: none. money: none. rounding: none.
-- order: the view's commented ORDER BY ProductName (CI_AS), then ProductID.
SELECT p.id AS "ProductID", p.name AS "ProductName"
FROM products p
WHERE p.discontinued = 0
ORDER BY sqlserver_key(p.name), p.name, p.id;

-- name: products_above_average_price
-- original: view "Products Above Average Price" (UnitPrice > (SELECT AVG(UnitPrice) FROM Products))
-- params: none. money: UnitPrice.
-- rounding: SQL Server's AVG(money) is money (4 decimals); comparing whole cents against the exact average gives
--   the same answer unless the exact average lies within 0.00005 below a whole cent (see FINDINGS.md).
-- order: the view's commented ORDER BY UnitPrice DESC, then ProductName.
SELECT p.name AS "ProductName", p.unitPriceCents AS "UnitPrice"
FROM products p
WHERE p.unitPriceCents > (SELECT AVG(unitPriceCents) FROM products)
ORDER BY p.unitPriceCents DESC, sqlserver_key(p.name), p.name, p.id;

-- name: products_by_category
-- original: view "Products by Category" (WHERE Discontinued <> 1)
-- params: none. money: none. rounding: none.
-- order: the view's commented ORDER BY CategoryName, ProductName (CI_AS).
SELECT c.name AS "CategoryName", p.name AS "ProductName", p.quantityPerUnit AS "QuantityPerUnit",
       p.unitsInStock AS "UnitsInStock", p.discontinued AS "Discontinued"
FROM categories c
JOIN products p ON c.id = p.categoryID
WHERE p.discontinued <> 1
ORDER BY sqlserver_key(c.name), c.name, sqlserver_key(p.name), p.name, p.id;

-- name: customer_and_suppliers_by_city
-- original: view "Customer and Suppliers by City" (UNION, so duplicate rows collapse)
-- params: none. money: none. rounding: none.
-- order: the view's commented ORDER BY City, CompanyName (CI_AS; NULL City first, as on SQL Server), then
--   Relationship, ContactName.
SELECT City, CompanyName, ContactName, Relationship FROM (
    SELECT city AS City, companyName AS CompanyName, contactName AS ContactName, 'Customers' AS Relationship
    FROM customers
    UNION
    SELECT city, companyName, contactName, 'Suppliers'
    FROM suppliers)
ORDER BY sqlserver_key(City), City, sqlserver_key(CompanyName), CompanyName, Relationship,
         sqlserver_key(ContactName), ContactName;

-- name: invoices
-- original: view "Invoices" (inner joins: orders without a shipper or an employee drop out)
-- params: none. money: UnitPrice, ExtendedPrice, Freight. Discount is the stored fraction (a double).
-- rounding: ExtendedPrice = CONVERT(money, UnitPrice*Quantity*(1-Discount)/100)*100, float32 steps (header).
-- Salesperson = FirstName + ' ' + LastName.
-- order: OrderID, ProductID.
SELECT o.shipName AS "ShipName", o.shipAddress AS "ShipAddress", o.shipCity AS "ShipCity",
       o.shipRegion AS "ShipRegion", o.shipPostalCode AS "ShipPostalCode", o.shipCountry AS "ShipCountry",
       c.code AS "CustomerID", c.companyName AS "CustomerName", c.address AS "Address", c.city AS "City",
       c.region AS "Region", c.postalCode AS "PostalCode", c.country AS "Country",
       e.firstName || ' ' || e.lastName AS "Salesperson",
       o.number AS "OrderID", o.orderDate AS "OrderDate", o.requiredDate AS "RequiredDate",
       o.shippedDate AS "ShippedDate", s.companyName AS "ShipperName",
       ol.productID AS "ProductID", p.name AS "ProductName", ol.unitPriceCents AS "UnitPrice",
       ol.quantity AS "Quantity", ol.discount AS "Discount",
       CAST(f32(f32(f32(ol.unitPriceCents * ol.quantity / 100.0) * f32(1 - f32(ol.discount))) / 100) * 10000 + 0.5 AS INTEGER) AS "ExtendedPrice",
       o.freightCents AS "Freight"
FROM orders o
JOIN customers c ON c.id = o.customerID
JOIN employees e ON e.id = o.employeeID
JOIN shippers s ON s.id = o.shipVia
JOIN order_lines ol ON ol.orderID = o.id
JOIN products p ON p.id = ol.productID
ORDER BY o.id, ol.productID;

-- name: order_details_extended
-- original: view "Order Details Extended"
-- params: none. money: UnitPrice, ExtendedPrice. Discount is the stored fraction (a double).
-- rounding: ExtendedPrice as in the header (float32 steps, real->money half away from zero on the exact value).
-- order: the view's commented ORDER BY OrderID, then ProductID.
SELECT o.number AS "OrderID", ol.productID AS "ProductID", p.name AS "ProductName",
       ol.unitPriceCents AS "UnitPrice", ol.quantity AS "Quantity", ol.discount AS "Discount",
       CAST(f32(f32(f32(ol.unitPriceCents * ol.quantity / 100.0) * f32(1 - f32(ol.discount))) / 100) * 10000 + 0.5 AS INTEGER) AS "ExtendedPrice"
FROM order_lines ol
JOIN orders o ON o.id = ol.orderID
JOIN products p ON p.id = ol.productID
ORDER BY o.id, ol.productID;

-- name: order_subtotals
-- original: view "Order Subtotals" (orders without lines have no row)
-- params: none. money: Subtotal.
-- rounding: Subtotal = SUM of ExtendedPrice (each line rounded as in the header; the sum is exact).
-- order: OrderID.
SELECT o.number AS "OrderID",
       SUM(CAST(f32(f32(f32(ol.unitPriceCents * ol.quantity / 100.0) * f32(1 - f32(ol.discount))) / 100) * 10000 + 0.5 AS INTEGER)) AS "Subtotal"
FROM order_lines ol
JOIN orders o ON o.id = ol.orderID
GROUP BY o.id
ORDER BY o.id;

-- name: orders_qry
-- original: view "Orders Qry"
-- params: none. money: Freight. rounding: none.
-- order: OrderID.
SELECT o.number AS "OrderID", c.code AS "CustomerID", o.employeeID AS "EmployeeID", o.orderDate AS "OrderDate",
       o.requiredDate AS "RequiredDate", o.shippedDate AS "ShippedDate", o.shipVia AS "ShipVia",
       o.freightCents AS "Freight", o.shipName AS "ShipName", o.shipAddress AS "ShipAddress",
       o.shipCity AS "ShipCity", o.shipRegion AS "ShipRegion", o.shipPostalCode AS "ShipPostalCode",
       o.shipCountry AS "ShipCountry", c.companyName AS "CompanyName", c.address AS "Address", c.city AS "City",
       c.region AS "Region", c.postalCode AS "PostalCode", c.country AS "Country"
FROM customers c
JOIN orders o ON c.id = o.customerID
ORDER BY o.id;

-- name: quarterly_orders
-- original: view "Quarterly Orders" (SELECT DISTINCT ... Customers RIGHT JOIN Orders, OrderDate in 1997)
-- params: :year (NULL = 1997). money: none. rounding: none.
-- order: CustomerID.
SELECT DISTINCT c.code AS "CustomerID", c.companyName AS "CompanyName", c.city AS "City", c.country AS "Country"
FROM orders o
LEFT JOIN customers c ON c.id = o.customerID
WHERE o.orderDate BETWEEN printf('%04d-01-01', coalesce(:year, 1997)) AND printf('%04d-12-31', coalesce(:year, 1997))
ORDER BY c.code;

-- name: product_sales_for_1997
-- original: view "Product Sales for 1997" (ShippedDate in 1997; grouped by the two NAMES, as the original)
-- params: :year (NULL = 1997). money: ProductSales.
-- rounding: SUM of ExtendedPrice per line (header rule).
-- order: CategoryName, ProductName (CI_AS).
SELECT c.name AS "CategoryName", p.name AS "ProductName",
       SUM(CAST(f32(f32(f32(ol.unitPriceCents * ol.quantity / 100.0) * f32(1 - f32(ol.discount))) / 100) * 10000 + 0.5 AS INTEGER)) AS "ProductSales"
FROM orders o
JOIN order_lines ol ON ol.orderID = o.id
JOIN products p ON p.id = ol.productID
JOIN categories c ON c.id = p.categoryID
WHERE o.shippedDate BETWEEN printf('%04d-01-01', coalesce(:year, 1997)) AND printf('%04d-12-31', coalesce(:year, 1997))
GROUP BY c.name, p.name
ORDER BY sqlserver_key(c.name), c.name, sqlserver_key(p.name), p.name;

-- name: category_sales_for_1997
-- original: view "Category Sales for 1997" (SUM over "Product Sales for 1997")
-- params: :year (NULL = 1997). money: CategorySales.
-- rounding: SUM of ExtendedPrice per line (header rule); exact integer sums.
-- order: CategoryName (CI_AS).
SELECT c.name AS "CategoryName",
       SUM(CAST(f32(f32(f32(ol.unitPriceCents * ol.quantity / 100.0) * f32(1 - f32(ol.discount))) / 100) * 10000 + 0.5 AS INTEGER)) AS "CategorySales"
FROM orders o
JOIN order_lines ol ON ol.orderID = o.id
JOIN products p ON p.id = ol.productID
JOIN categories c ON c.id = p.categoryID
WHERE o.shippedDate BETWEEN printf('%04d-01-01', coalesce(:year, 1997)) AND printf('%04d-12-31', coalesce(:year, 1997))
GROUP BY c.name
ORDER BY sqlserver_key(c.name), c.name;

-- name: sales_by_category
-- original: view "Sales by Category" (OrderDate -- not ShippedDate -- in 1997; SUM of "Order Details Extended")
-- params: :year (NULL = 1997). money: ProductSales.
-- rounding: SUM of ExtendedPrice per line (header rule).
-- order: the view's commented ORDER BY ProductName (CI_AS), then CategoryID.
SELECT c.id AS "CategoryID", c.name AS "CategoryName", p.name AS "ProductName",
       SUM(CAST(f32(f32(f32(ol.unitPriceCents * ol.quantity / 100.0) * f32(1 - f32(ol.discount))) / 100) * 10000 + 0.5 AS INTEGER)) AS "ProductSales"
FROM orders o
JOIN order_lines ol ON ol.orderID = o.id
JOIN products p ON p.id = ol.productID
JOIN categories c ON c.id = p.categoryID
WHERE o.orderDate BETWEEN printf('%04d-01-01', coalesce(:year, 1997)) AND printf('%04d-12-31', coalesce(:year, 1997))
GROUP BY c.id, c.name, p.name
ORDER BY sqlserver_key(p.name), p.name, c.id;

-- name: sales_totals_by_amount
-- original: view "Sales Totals by Amount" (Subtotal > 2500 and ShippedDate in 1997)
-- params: :year (NULL = 1997). money: SaleAmount (the threshold 2500.00 is 250000 cents).
-- rounding: SaleAmount = "Order Subtotals".Subtotal (header rule per line, exact sum).
-- order: SaleAmount DESC, OrderID (the view has none).
SELECT SUM(CAST(f32(f32(f32(ol.unitPriceCents * ol.quantity / 100.0) * f32(1 - f32(ol.discount))) / 100) * 10000 + 0.5 AS INTEGER)) AS "SaleAmount",
       o.number AS "OrderID", c.companyName AS "CompanyName", o.shippedDate AS "ShippedDate"
FROM orders o
JOIN customers c ON c.id = o.customerID
JOIN order_lines ol ON ol.orderID = o.id
WHERE o.shippedDate BETWEEN printf('%04d-01-01', coalesce(:year, 1997)) AND printf('%04d-12-31', coalesce(:year, 1997))
GROUP BY o.id
HAVING SUM(CAST(f32(f32(f32(ol.unitPriceCents * ol.quantity / 100.0) * f32(1 - f32(ol.discount))) / 100) * 10000 + 0.5 AS INTEGER)) > 250000
ORDER BY 1 DESC, o.id;

-- name: summary_of_sales_by_quarter
-- original: view "Summary of Sales by Quarter" (every shipped order with its subtotal)
-- params: none. money: Subtotal. rounding: "Order Subtotals" (header rule per line, exact sum).
-- order: the view's commented ORDER BY ShippedDate, then OrderID.
SELECT o.shippedDate AS "ShippedDate", o.number AS "OrderID",
       SUM(CAST(f32(f32(f32(ol.unitPriceCents * ol.quantity / 100.0) * f32(1 - f32(ol.discount))) / 100) * 10000 + 0.5 AS INTEGER)) AS "Subtotal"
FROM orders o
JOIN order_lines ol ON ol.orderID = o.id
WHERE o.shippedDate IS NOT NULL
GROUP BY o.shippedDate, o.id
ORDER BY o.shippedDate, o.id;

-- name: summary_of_sales_by_year
-- original: view "Summary of Sales by Year" (same definition as the quarter view; the reports group it)
-- params: none. money: Subtotal. rounding: "Order Subtotals" (header rule per line, exact sum).
-- order: the view's commented ORDER BY ShippedDate, then OrderID.
SELECT o.shippedDate AS "ShippedDate", o.number AS "OrderID",
       SUM(CAST(f32(f32(f32(ol.unitPriceCents * ol.quantity / 100.0) * f32(1 - f32(ol.discount))) / 100) * 10000 + 0.5 AS INTEGER)) AS "Subtotal"
FROM orders o
JOIN order_lines ol ON ol.orderID = o.id
WHERE o.shippedDate IS NOT NULL
GROUP BY o.shippedDate, o.id
ORDER BY o.shippedDate, o.id;

-- name: ten_most_expensive_products
-- original: procedure "Ten Most Expensive Products" (SET ROWCOUNT 10 ... ORDER BY UnitPrice DESC)
-- params: none. money: UnitPrice. rounding: none.
-- order: UnitPrice DESC as the original; ties (none in the canonical data) by ProductName, ProductID.
SELECT p.name AS "TenMostExpensiveProducts", p.unitPriceCents AS "UnitPrice"
FROM products p
ORDER BY p.unitPriceCents DESC, sqlserver_key(p.name), p.name, p.id
LIMIT 10;

-- name: cust_order_hist
-- original: procedure CustOrderHist @CustomerID (ProductName, Total = SUM(Quantity), grouped by ProductName)
-- params: :customer (required). money: none. rounding: none.
-- order: the original has none; ProductName (CI_AS).
SELECT p.name AS "ProductName", SUM(ol.quantity) AS "Total"
FROM customers c
JOIN orders o ON o.customerID = c.id
JOIN order_lines ol ON ol.orderID = o.id
JOIN products p ON p.id = ol.productID
WHERE c.code = :customer
GROUP BY p.name
ORDER BY sqlserver_key(p.name), p.name;

-- name: cust_orders_detail
-- original: procedure CustOrdersDetail @OrderID
-- params: :order (required, orders.number). money: UnitPrice, ExtendedPrice. Discount is a whole percent.
-- rounding: UnitPrice = ROUND(UnitPrice, 2) (already cents);
--   Discount = CONVERT(int, Discount * 100): real product, truncated -> CAST(f32(f32(d) * 100) AS INTEGER);
--   ExtendedPrice = ROUND(CONVERT(money, Quantity * (1 - Discount) * UnitPrice), 2): float32 steps in THIS order
--   (smallint*real, then *real(UnitPrice)), real->money half away from zero to 4 decimals on the exact value
--   (M = CAST(x * 10000 + 0.5 AS INTEGER) ten-thousandths), then ROUND(money, 2) half away from zero:
--   cents = (M + 50) / 100 (integer division).
-- order: ProductID (the clustered key order of "Order Details").
SELECT p.name AS "ProductName", ol.unitPriceCents AS "UnitPrice", ol.quantity AS "Quantity",
       CAST(f32(f32(ol.discount) * 100) AS INTEGER) AS "Discount",
       (CAST(f32(f32(ol.quantity * f32(1 - f32(ol.discount))) * f32(ol.unitPriceCents / 100.0)) * 10000 + 0.5 AS INTEGER) + 50) / 100 AS "ExtendedPrice"
FROM orders o
JOIN order_lines ol ON ol.orderID = o.id
JOIN products p ON p.id = ol.productID
WHERE o.number = :order
ORDER BY ol.productID;

-- name: cust_orders_orders
-- original: procedure CustOrdersOrders @CustomerID (ORDER BY OrderID)
-- params: :customer (required). money: none. rounding: none.
-- order: OrderID; orders.id follows creation order and equals the classic OrderID on import, whereas
--   orders.number of new orders ('SITE-n') does not sort numerically.
SELECT o.number AS "OrderID", o.orderDate AS "OrderDate", o.requiredDate AS "RequiredDate",
       o.shippedDate AS "ShippedDate"
FROM customers c
JOIN orders o ON o.customerID = c.id
WHERE c.code = :customer
ORDER BY o.id;

-- name: employee_sales_by_country
-- original: procedure "Employee Sales by Country" @Beginning_Date, @Ending_Date (ShippedDate BETWEEN them)
-- params: :from, :to (required, inclusive day strings). money: SaleAmount.
-- rounding: SaleAmount = "Order Subtotals".Subtotal (header rule per line, exact sum).
-- order: the original has none; Country, LastName, FirstName, ShippedDate, OrderID.
SELECT e.country AS "Country", e.lastName AS "LastName", e.firstName AS "FirstName",
       o.shippedDate AS "ShippedDate", o.number AS "OrderID",
       SUM(CAST(f32(f32(f32(ol.unitPriceCents * ol.quantity / 100.0) * f32(1 - f32(ol.discount))) / 100) * 10000 + 0.5 AS INTEGER)) AS "SaleAmount"
FROM orders o
JOIN employees e ON e.id = o.employeeID
JOIN order_lines ol ON ol.orderID = o.id
WHERE o.shippedDate BETWEEN :from AND :to
GROUP BY o.id
ORDER BY sqlserver_key(e.country), e.country, sqlserver_key(e.lastName), e.lastName, sqlserver_key(e.firstName), e.firstName,
         o.shippedDate, o.id;

-- name: sales_by_year
-- original: procedure "Sales by Year" @Beginning_Date, @Ending_Date (ShippedDate BETWEEN them;
--   Year = DATENAME(yy, ShippedDate), a string)
-- params: :from, :to (required, inclusive day strings). money: Subtotal.
-- rounding: "Order Subtotals" (header rule per line, exact sum).
-- order: ShippedDate, OrderID.
SELECT o.shippedDate AS "ShippedDate", o.number AS "OrderID",
       SUM(CAST(f32(f32(f32(ol.unitPriceCents * ol.quantity / 100.0) * f32(1 - f32(ol.discount))) / 100) * 10000 + 0.5 AS INTEGER)) AS "Subtotal",
       substr(o.shippedDate, 1, 4) AS "Year"
FROM orders o
JOIN order_lines ol ON ol.orderID = o.id
WHERE o.shippedDate BETWEEN :from AND :to
GROUP BY o.shippedDate, o.id
ORDER BY o.shippedDate, o.id;

-- name: sales_by_category_proc
-- original: procedure SalesByCategory @CategoryName, @OrdYear = '1998'
--   TotalPurchase = ROUND(SUM(CONVERT(decimal(14,2), OD.Quantity * (1-OD.Discount) * OD.UnitPrice)), 0)
-- params: :category (required, NOCASE), :year (NULL = 1998, the procedure's default). money: TotalPurchase
--   (whole dollars, returned in cents so it is a Money like the rest; SQL Server shows e.g. 4887.00).
--   Unlike the original, a year outside 1996..1998 is NOT replaced by 1998.
-- rounding: x = real(real(Quantity * real(1 - real(Discount))) * real(UnitPrice)) (float32 steps in this order);
--   decimal(14,2) = x rounded half away from zero to cents from its exact value: CAST(x * 100 + 0.5 AS INTEGER);
--   SUM exact; ROUND(.., 0) half away from zero: dollars = (cents + 50) / 100.
-- order: ProductName (CI_AS), as the original.
SELECT p.name AS "ProductName",
       ((SUM(CAST(f32(f32(ol.quantity * f32(1 - f32(ol.discount))) * f32(ol.unitPriceCents / 100.0)) * 100 + 0.5 AS INTEGER)) + 50) / 100) * 100 AS "TotalPurchase"
FROM orders o
JOIN order_lines ol ON ol.orderID = o.id
JOIN products p ON p.id = ol.productID
JOIN categories c ON c.id = p.categoryID
WHERE c.name = :category
  AND o.orderDate BETWEEN printf('%04d-01-01', coalesce(:year, 1998)) AND printf('%04d-12-31', coalesce(:year, 1998))
GROUP BY p.name
ORDER BY sqlserver_key(p.name), p.name;
