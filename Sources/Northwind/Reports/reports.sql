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
-- * Three functions must be registered on the connection (GRDB: db.add(function:)); sqlserver_line_cents is
--   only called when an order line is written (see the money rules below):
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
--   In SQLite:  CAST(f32(f32(f32(unitPriceCents * quantity / 100.0) * f32(1 - f32(discount))) / 100) * 10000 + 0.5 AS INTEGER)
--   which the store keeps in order_lines.extendedPriceCents: written with the line and CHECKed against
--   sqlserver_line_cents(unitPriceCents, quantity, discount) (migration "v4: order line amounts"). The queries below
--   read that column, through the index order_lines(orderID, productID, extendedPriceCents, quantity) where they can.
--   Summaries kept by triggers in the writer's transaction spare the big reports most of that reading:
--   order_totals(orderID, lineCount, amountCents) (migration "v5: report summaries") holds each order's SUM of
--   ExtendedPrice (orders without lines have no row, as with an inner join); migration "v26: sales per year" keeps
--   product_year_sales(basis 'ordered' or 'shipped', year, productID, cancelled, lineCount, quantity, amountCents),
--   customer_year_sales(year, customerID, cancelled, orders, linedOrders, amountCents) and
--   employee_year_sales(year, employeeID, cancelled, linedOrders, amountCents): a year's sums per product, customer
--   and employee. A row whose counts fell to zero stays; queries skip it. A period of days that is not whole years
--   takes its whole years from these and its other days from the orders. Migration v29 keeps the gross margin's
--   product_year_margin(year shipped, productID, lineCount, quantity, salesCents, costCents, uncostedLines) and the
--   fill rate's order_day_fill(orderDate, orders, orderedUnits) and shipped_day_fill(orderDate, lagDays, units).
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
       ol.extendedPriceCents AS "ExtendedPrice",
       o.freightCents AS "Freight"
FROM orders o
JOIN customers c ON c.id = o.customerID
JOIN employees e ON e.id = o.employeeID
JOIN shippers s ON s.id = o.shipVia
JOIN order_lines ol ON ol.orderID = o.id
JOIN products p ON p.id = ol.productID
ORDER BY ol.orderID, ol.productID;

-- name: order_details_extended
-- original: view "Order Details Extended"
-- params: none. money: UnitPrice, ExtendedPrice. Discount is the stored fraction (a double).
-- rounding: ExtendedPrice as in the header (float32 steps, real->money half away from zero on the exact value).
-- order: the view's commented ORDER BY OrderID, then ProductID.
SELECT o.number AS "OrderID", ol.productID AS "ProductID", p.name AS "ProductName",
       ol.unitPriceCents AS "UnitPrice", ol.quantity AS "Quantity", ol.discount AS "Discount",
       ol.extendedPriceCents AS "ExtendedPrice"
FROM order_lines ol
JOIN orders o ON o.id = ol.orderID
JOIN products p ON p.id = ol.productID
ORDER BY ol.orderID, ol.productID;

-- guide: begin order-subtotals
-- name: order_subtotals
-- original: view "Order Subtotals" (orders without lines have no row)
-- params: none. money: Subtotal.
-- rounding: Subtotal = SUM of ExtendedPrice (each line rounded as in the header; the sum is exact).
-- order: OrderID.
SELECT o.number AS "OrderID", t.amountCents AS "Subtotal"
FROM order_totals t
JOIN orders o ON o.id = t.orderID
ORDER BY t.orderID;
-- guide: end order-subtotals

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
FROM customer_year_sales s
LEFT JOIN customers c ON c.id = s.customerID
WHERE s.year = coalesce(:year, 1997) AND s.orders > 0
ORDER BY c.code;

-- name: product_sales_for_1997
-- original: view "Product Sales for 1997" (ShippedDate in 1997; grouped by the two NAMES, as the original)
-- params: :year (NULL = 1997). money: ProductSales.
-- rounding: SUM of ExtendedPrice per line (header rule).
-- order: CategoryName, ProductName (CI_AS).
SELECT c.name AS "CategoryName", p.name AS "ProductName", SUM(sold.cents) AS "ProductSales"
FROM (SELECT productID, SUM(amountCents) AS cents
      FROM product_year_sales
      WHERE basis = 'shipped' AND year = coalesce(:year, 1997) AND lineCount > 0
      GROUP BY productID) sold
JOIN products p ON p.id = sold.productID
JOIN categories c ON c.id = p.categoryID
GROUP BY c.name, p.name
ORDER BY sqlserver_key(c.name), c.name, sqlserver_key(p.name), p.name;

-- guide: begin category-sales
-- name: category_sales_for_1997
-- original: view "Category Sales for 1997" (SUM over "Product Sales for 1997")
-- params: :year (NULL = 1997). money: CategorySales.
-- rounding: SUM of ExtendedPrice per line (header rule); exact integer sums.
-- order: CategoryName (CI_AS).
SELECT c.name AS "CategoryName", SUM(sold.cents) AS "CategorySales"
FROM (SELECT productID, SUM(amountCents) AS cents
      FROM product_year_sales
      WHERE basis = 'shipped' AND year = coalesce(:year, 1997) AND lineCount > 0
      GROUP BY productID) sold
JOIN products p ON p.id = sold.productID
JOIN categories c ON c.id = p.categoryID
GROUP BY c.name
ORDER BY sqlserver_key(c.name), c.name;
-- guide: end category-sales

-- name: sales_by_category
-- original: view "Sales by Category" (OrderDate -- not ShippedDate -- in 1997; SUM of "Order Details Extended")
-- params: :year (NULL = 1997). money: ProductSales.
-- rounding: SUM of ExtendedPrice per line (header rule).
-- order: the view's commented ORDER BY ProductName (CI_AS), then CategoryID.
SELECT c.id AS "CategoryID", c.name AS "CategoryName", p.name AS "ProductName", SUM(sold.cents) AS "ProductSales"
FROM (SELECT productID, SUM(amountCents) AS cents
      FROM product_year_sales
      WHERE basis = 'ordered' AND year = coalesce(:year, 1997) AND lineCount > 0
      GROUP BY productID) sold
JOIN products p ON p.id = sold.productID
JOIN categories c ON c.id = p.categoryID
GROUP BY c.id, c.name, p.name
ORDER BY sqlserver_key(p.name), p.name, c.id;

-- name: sales_totals_by_amount
-- original: view "Sales Totals by Amount" (Subtotal > 2500 and ShippedDate in 1997)
-- params: :year (NULL = 1997). money: SaleAmount (the threshold 2500.00 is 250000 cents).
-- rounding: SaleAmount = "Order Subtotals".Subtotal (header rule per line, exact sum).
-- order: SaleAmount DESC, OrderID (the view has none).
SELECT t.amountCents AS "SaleAmount",
       o.number AS "OrderID", c.companyName AS "CompanyName", o.shippedDate AS "ShippedDate"
FROM orders o
JOIN order_totals t ON t.orderID = o.id
JOIN customers c ON c.id = o.customerID
WHERE o.shippedDate BETWEEN printf('%04d-01-01', coalesce(:year, 1997)) AND printf('%04d-12-31', coalesce(:year, 1997))
  AND t.amountCents > 250000
ORDER BY 1 DESC, o.id;

-- name: summary_of_sales_by_quarter
-- original: view "Summary of Sales by Quarter" (every shipped order with its subtotal)
-- params: none. money: Subtotal. rounding: "Order Subtotals" (header rule per line, exact sum).
-- order: the view's commented ORDER BY ShippedDate, then OrderID.
SELECT o.shippedDate AS "ShippedDate", o.number AS "OrderID", t.amountCents AS "Subtotal"
FROM orders o
JOIN order_totals t ON t.orderID = o.id
WHERE o.shippedDate IS NOT NULL
ORDER BY o.shippedDate, o.id;

-- name: summary_of_sales_by_year
-- original: view "Summary of Sales by Year" (same definition as the quarter view; the reports group it)
-- params: none. money: Subtotal. rounding: "Order Subtotals" (header rule per line, exact sum).
-- order: the view's commented ORDER BY ShippedDate, then OrderID.
SELECT o.shippedDate AS "ShippedDate", o.number AS "OrderID", t.amountCents AS "Subtotal"
FROM orders o
JOIN order_totals t ON t.orderID = o.id
WHERE o.shippedDate IS NOT NULL
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
-- order: the original has none; Country, LastName, FirstName (CI_AS), ShippedDate, OrderID. The employees are
--   ranked once in that order (MATERIALIZED keeps SQLite from computing the sort keys again for every order).
WITH staff AS MATERIALIZED (
    SELECT id, country, lastName, firstName,
           row_number() OVER (ORDER BY sqlserver_key(country), country, sqlserver_key(lastName), lastName,
                                       sqlserver_key(firstName), firstName, id) AS rank
    FROM employees)
SELECT e.country AS "Country", e.lastName AS "LastName", e.firstName AS "FirstName",
       o.shippedDate AS "ShippedDate", o.number AS "OrderID",
       t.amountCents AS "SaleAmount"
FROM orders o
JOIN staff e ON e.id = o.employeeID
JOIN order_totals t ON t.orderID = o.id
WHERE o.shippedDate BETWEEN :from AND :to
ORDER BY e.rank, o.shippedDate, o.id;

-- name: sales_by_year
-- original: procedure "Sales by Year" @Beginning_Date, @Ending_Date (ShippedDate BETWEEN them;
--   Year = DATENAME(yy, ShippedDate), a string)
-- params: :from, :to (required, inclusive day strings). money: Subtotal.
-- rounding: "Order Subtotals" (header rule per line, exact sum).
-- order: ShippedDate, OrderID.
SELECT o.shippedDate AS "ShippedDate", o.number AS "OrderID",
       t.amountCents AS "Subtotal",
       substr(o.shippedDate, 1, 4) AS "Year"
FROM orders o
JOIN order_totals t ON t.orderID = o.id
WHERE o.shippedDate BETWEEN :from AND :to
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

-- The manager's reports. Not in the original; they follow the same conventions. Their amounts are sums of the
-- lines' ExtendedPrice (the classic views' rule above), so they agree with the classic sales reports; an order
-- page's total rounds each line once, without float32 steps, and can differ by a cent per line.
-- A period (:from, :to) is of order dates, inclusive, and either end may be NULL (open). Cancelled orders never count.

-- name: reorder_list
-- params: none. money: none.
-- Products still sold whose stock plus units on order is at or below their reorder level plus the shop's low-stock
-- margin (stock.lowStockMargin, bound as :margin; 0 by default), grouped by supplier (products without one last).
-- SuggestedQuantity brings stock plus units on order up to twice the reorder level, and is at least one unit.
SELECT coalesce(s.companyName, '(no supplier)') AS "Supplier", s.phone AS "Phone", p.id AS "ProductID",
       p.name AS "ProductName", p.unitsInStock AS "UnitsInStock", p.unitsOnOrder AS "UnitsOnOrder",
       p.reorderLevel AS "ReorderLevel", max(2 * p.reorderLevel - p.unitsInStock - p.unitsOnOrder, 1) AS "SuggestedQuantity"
FROM products p
LEFT JOIN suppliers s ON s.id = p.supplierID
WHERE p.discontinued = 0 AND p.unitsInStock + p.unitsOnOrder <= p.reorderLevel + :margin
ORDER BY s.id IS NULL, sqlserver_key(s.companyName), s.companyName, s.id, sqlserver_key(p.name), p.name, p.id;

-- name: order_backlog
-- params: none. money: Amount.
-- Orders not yet shipped or cancelled, the oldest required date first (none last). An order is supplyable when stock
-- covers every line now, as the Execute button requires; otherwise BlockedBy names the first short product (by
-- name) and how short it is, and ShortLines counts the short lines. Orders compete for the same stock: each is
-- judged alone, as staff see it on its page.
SELECT o.number AS "OrderID", c.code AS "CustomerID", c.companyName AS "CompanyName", o.orderDate AS "OrderDate",
       o.requiredDate AS "RequiredDate", count(*) AS "Lines", SUM(ol.extendedPriceCents) AS "Amount",
       CASE WHEN SUM(ol.quantity > p.unitsInStock) = 0 THEN 'supplyable' ELSE 'blocked' END AS "Status",
       (SELECT bp.name || ' (short by ' || (bl.quantity - bp.unitsInStock) || ')'
        FROM order_lines bl JOIN products bp ON bp.id = bl.productID
        WHERE bl.orderID = o.id AND bl.quantity > bp.unitsInStock
        ORDER BY sqlserver_key(bp.name), bp.name, bp.id LIMIT 1) AS "BlockedBy",
       SUM(ol.quantity > p.unitsInStock) AS "ShortLines"
FROM orders o
JOIN customers c ON c.id = o.customerID
JOIN order_lines ol ON ol.orderID = o.id
JOIN products p ON p.id = ol.productID
WHERE o.status = 'new'
GROUP BY o.id
ORDER BY o.requiredDate IS NULL, o.requiredDate, o.id;

-- name: top_customers
-- params: :from, :to (optional), :top (how many). money: Sales, AverageOrder.
-- Sales per customer of the orders placed in the period; AverageOrder rounds half up to the cent.
-- order: Sales descending, then CustomerID.
WITH periods AS (
    -- Whole years y1..y2 come from the summaries; the days before y1 and after y2 from the orders.
    SELECT f, t, CAST(substr(f, 1, 4) AS INTEGER) + (substr(f, 6) <> '01-01') AS y1,
           CAST(substr(t, 1, 4) AS INTEGER) - (substr(t, 6) <> '12-31') AS y2
    FROM (SELECT coalesce(:from, '0000-01-01') AS f, coalesce(:to, '9999-12-31') AS t)),
days AS (
    SELECT f AS first, min(t, printf('%04d-12-31', y1 - 1)) AS last FROM periods WHERE y1 > 0
    UNION ALL
    SELECT max(f, printf('%04d-01-01', max(y1, y2 + 1))), t FROM periods WHERE max(y1, y2 + 1) <= 9999),
bought AS (
    SELECT customerID, SUM(orders) AS orders, SUM(cents) AS cents FROM (
        SELECT s.customerID, s.linedOrders AS orders, s.amountCents AS cents
        FROM periods p JOIN customer_year_sales s ON s.year BETWEEN p.y1 AND p.y2
        WHERE s.cancelled = 0 AND s.linedOrders > 0
        UNION ALL
        SELECT o.customerID, 1, t.amountCents
        FROM days d JOIN orders o ON o.orderDate BETWEEN d.first AND d.last JOIN order_totals t ON t.orderID = o.id
        WHERE o.status <> 'cancelled')
    GROUP BY customerID)
SELECT row_number() OVER (ORDER BY b.cents DESC, c.code) AS "Rank", c.code AS "CustomerID",
       c.companyName AS "CompanyName", c.country AS "Country", b.orders AS "Orders", b.cents AS "Sales",
       (2 * b.cents + b.orders) / (2 * b.orders) AS "AverageOrder"
FROM bought b
JOIN customers c ON c.id = b.customerID
ORDER BY b.cents DESC, c.code
LIMIT :top;

-- name: top_products
-- params: :from, :to (optional), :top (how many). money: Sales.
-- Units and sales per product of the orders placed in the period.
-- order: Sales descending, then ProductID.
WITH periods AS (
    -- Whole years y1..y2 come from the summaries; the days before y1 and after y2 from the orders.
    SELECT f, t, CAST(substr(f, 1, 4) AS INTEGER) + (substr(f, 6) <> '01-01') AS y1,
           CAST(substr(t, 1, 4) AS INTEGER) - (substr(t, 6) <> '12-31') AS y2
    FROM (SELECT coalesce(:from, '0000-01-01') AS f, coalesce(:to, '9999-12-31') AS t)),
days AS (
    SELECT f AS first, min(t, printf('%04d-12-31', y1 - 1)) AS last FROM periods WHERE y1 > 0
    UNION ALL
    SELECT max(f, printf('%04d-01-01', max(y1, y2 + 1))), t FROM periods WHERE max(y1, y2 + 1) <= 9999),
sold AS (
    SELECT productID, SUM(quantity) AS quantity, SUM(lines) AS lines, SUM(cents) AS cents FROM (
        SELECT s.productID, s.quantity, s.lineCount AS lines, s.amountCents AS cents
        FROM periods p JOIN product_year_sales s ON s.basis = 'ordered' AND s.year BETWEEN p.y1 AND p.y2
        WHERE s.cancelled = 0 AND s.lineCount > 0
        UNION ALL
        SELECT ol.productID, ol.quantity, 1, ol.extendedPriceCents
        FROM days d JOIN orders o ON o.orderDate BETWEEN d.first AND d.last JOIN order_lines ol ON ol.orderID = o.id
        WHERE o.status <> 'cancelled')
    GROUP BY productID)
SELECT row_number() OVER (ORDER BY s.cents DESC, p.id) AS "Rank", p.id AS "ProductID", p.name AS "ProductName",
       c.name AS "CategoryName", s.lines AS "Orders", s.quantity AS "Quantity", s.cents AS "Sales"
FROM sold s
JOIN products p ON p.id = s.productID
LEFT JOIN categories c ON c.id = p.categoryID
ORDER BY s.cents DESC, p.id
LIMIT :top;

-- name: sales_per_employee
-- params: :from, :to (optional). money: Sales, AverageOrder.
-- Orders taken and their sales per employee in the period (orders without an employee are left out).
-- order: Sales descending, then EmployeeID.
WITH periods AS (
    -- Whole years y1..y2 come from the summaries; the days before y1 and after y2 from the orders.
    SELECT f, t, CAST(substr(f, 1, 4) AS INTEGER) + (substr(f, 6) <> '01-01') AS y1,
           CAST(substr(t, 1, 4) AS INTEGER) - (substr(t, 6) <> '12-31') AS y2
    FROM (SELECT coalesce(:from, '0000-01-01') AS f, coalesce(:to, '9999-12-31') AS t)),
days AS (
    SELECT f AS first, min(t, printf('%04d-12-31', y1 - 1)) AS last FROM periods WHERE y1 > 0
    UNION ALL
    SELECT max(f, printf('%04d-01-01', max(y1, y2 + 1))), t FROM periods WHERE max(y1, y2 + 1) <= 9999),
totals AS (
    SELECT employeeID, SUM(orders) AS orders, SUM(cents) AS cents FROM (
        SELECT s.employeeID, s.linedOrders AS orders, s.amountCents AS cents
        FROM periods p JOIN employee_year_sales s ON s.year BETWEEN p.y1 AND p.y2
        WHERE s.cancelled = 0 AND s.linedOrders > 0
        UNION ALL
        SELECT o.employeeID, 1, t.amountCents
        FROM days d JOIN orders o ON o.orderDate BETWEEN d.first AND d.last JOIN order_totals t ON t.orderID = o.id
        WHERE o.status <> 'cancelled' AND o.employeeID IS NOT NULL)
    GROUP BY employeeID)
SELECT e.id AS "EmployeeID", e.firstName || ' ' || e.lastName AS "Employee", e.title AS "Title",
       e.country AS "Country", t.orders AS "Orders", t.cents AS "Sales",
       (2 * t.cents + t.orders) / (2 * t.orders) AS "AverageOrder"
FROM totals t
JOIN employees e ON e.id = t.employeeID
ORDER BY t.cents DESC, e.id;

-- name: stock_movements
-- params: :product (optional, a product id), :from, :to (optional days of the movement, UTC, inclusive). money: none.
-- Every change to stock: Change is signed; Reason is initial, received, stockTake, shipped, transferOut, transferIn,
-- purchaseReceipt or receiptReversal.
-- order: when, then the movement's id.
SELECT m.createdAt AS "When", p.id AS "ProductID", p.name AS "ProductName", m.delta AS "Change",
       m.reason AS "Reason", o.number AS "OrderID", e.firstName || ' ' || e.lastName AS "Employee", m.note AS "Note"
FROM stock_movements m
JOIN products p ON p.id = m.productID
LEFT JOIN orders o ON o.id = m.orderID
LEFT JOIN employees e ON e.id = m.employeeID
WHERE m.productID BETWEEN coalesce(:product, 0) AND coalesce(:product, 9223372036854775807)
  AND m.createdAt >= coalesce(:from, '') AND m.createdAt < coalesce(date(:to, '+1 day'), '9999')
ORDER BY m.createdAt, m.id;

-- Purchasing's reports (docs/purchasing.md). A cost is a product's moving average at a location: the one its latest
-- costed movement there left. Stock that has no cost is never valued at 0: it is counted apart, or says 'no cost'.

-- name: stock_valuation
-- params: none. money: Value.
-- What stock is worth at its moving average cost, by location (this one first) and category. UnitsWithoutCost are
-- units of products never received at a cost there; Value counts only the others, and says 'no cost' when none has.
WITH here AS (SELECT value AS code FROM store_metadata WHERE key = 'siteCode'),
stock AS (
    SELECT (SELECT code FROM here) AS location, p.categoryID, p.unitsInStock AS units,
           (SELECT m.averageCostCents FROM stock_movements m WHERE m.productID = p.id AND m.location IS NULL
              AND m.averageCostCents IS NOT NULL ORDER BY m.id DESC LIMIT 1) AS cost
    FROM products p WHERE p.unitsInStock > 0
    UNION ALL
    SELECT l.location, p.categoryID, l.units,
           (SELECT m.averageCostCents FROM stock_movements m WHERE m.productID = l.productID AND m.location = l.location
              AND m.averageCostCents IS NOT NULL ORDER BY m.id DESC LIMIT 1)
    FROM stock_levels l JOIN products p ON p.id = l.productID WHERE l.units > 0)
SELECT s.location AS "Location", coalesce(c.name, '(no category)') AS "CategoryName", count(*) AS "Products",
       SUM(s.units) AS "Units", SUM(CASE WHEN s.cost IS NULL THEN s.units ELSE 0 END) AS "UnitsWithoutCost",
       CASE WHEN count(s.cost) = 0 THEN 'no cost' ELSE SUM(s.units * s.cost) END AS "Value"
FROM stock s
LEFT JOIN categories c ON c.id = s.categoryID
GROUP BY s.location, c.id
ORDER BY s.location <> (SELECT code FROM here), s.location, c.id IS NULL, sqlserver_key(c.name), c.name;

-- name: open_purchase_orders
-- params: none. money: OutstandingValue.
-- Purchase orders still awaiting goods, of every site this store knows, by supplier, the latest expected first
-- last: DaysLate counts whole days past the expected date (UTC), 0 when not late or not dated. Outstanding is what
-- the lines still await; OutstandingValue is it at the lines' costs ('no cost' for an opening order's lines).
WITH here AS (SELECT value AS code FROM store_metadata WHERE key = 'siteCode'),
lines AS (
    -- What arrived counts only at the order's own location (a receipt is always its order's site's).
    SELECT l.purchaseOrderID, l.unitCostCents AS cost,
           max(l.quantity - ifnull((SELECT SUM(m.delta) FROM stock_movements m WHERE m.purchaseLineID = l.id
             AND m.location IS (SELECT o.location FROM purchase_orders o WHERE o.id = l.purchaseOrderID)), 0), 0) AS awaited
    FROM purchase_order_lines l)
SELECT s.companyName AS "Supplier", o.number AS "PurchaseOrder", coalesce(o.location, (SELECT code FROM here)) AS "Site",
       o.status AS "Status", substr(o.sentAt, 1, 10) AS "Sent", o.expectedDate AS "Expected",
       CASE WHEN o.expectedDate < date('now') THEN CAST(julianday(date('now')) - julianday(o.expectedDate) AS INTEGER)
            ELSE 0 END AS "DaysLate",
       SUM(x.awaited) AS "Outstanding",
       CASE WHEN count(x.cost) < count(*) THEN 'no cost' ELSE SUM(x.awaited * x.cost) END AS "OutstandingValue"
FROM purchase_orders o
JOIN suppliers s ON s.id = o.supplierID
JOIN lines x ON x.purchaseOrderID = o.id
WHERE o.status IN ('sent', 'partiallyReceived')
GROUP BY o.id
ORDER BY sqlserver_key(s.companyName), s.companyName, o.expectedDate IS NULL, o.expectedDate, o.number;

-- name: supplier_performance
-- params: none. money: none.
-- Each supplier's purchase orders sent from this store (opening orders left out): how many were received in full,
-- how many of those by their expected date (OnTime, of the dated ones), how many in one delivery (Complete: one
-- request key booked them all), and the average days from sending to the first receipt (AverageLeadDays).
WITH orders AS (
    SELECT o.id, o.supplierID, o.status, o.expectedDate, o.sentAt,
           (SELECT min(m.createdAt) FROM stock_movements m JOIN purchase_order_lines l ON l.id = m.purchaseLineID
             WHERE l.purchaseOrderID = o.id AND m.reason = 'purchaseReceipt') AS firstReceipt,
           (SELECT max(m.createdAt) FROM stock_movements m JOIN purchase_order_lines l ON l.id = m.purchaseLineID
             WHERE l.purchaseOrderID = o.id AND m.reason = 'purchaseReceipt') AS lastReceipt,
           (SELECT count(DISTINCT m.requestKey) FROM stock_movements m JOIN purchase_order_lines l ON l.id = m.purchaseLineID
             WHERE l.purchaseOrderID = o.id AND m.reason = 'purchaseReceipt') AS deliveries
    FROM purchase_orders o
    WHERE o.location IS NULL AND NOT o.opening AND o.sentAt IS NOT NULL)
SELECT s.companyName AS "Supplier", count(*) AS "Orders", SUM(x.status = 'received') AS "Received",
       SUM(x.status = 'received' AND x.expectedDate IS NOT NULL AND substr(x.lastReceipt, 1, 10) <= x.expectedDate) AS "OnTime",
       SUM(x.status = 'received' AND x.expectedDate IS NOT NULL) AS "Dated",
       SUM(x.status = 'received' AND x.deliveries = 1) AS "Complete",
       round(avg(julianday(x.firstReceipt) - julianday(x.sentAt)), 1) AS "AverageLeadDays"
FROM orders x
JOIN suppliers s ON s.id = x.supplierID
GROUP BY s.id
ORDER BY sqlserver_key(s.companyName), s.companyName, s.id;

-- name: gross_margin
-- params: :from, :to (optional shipped dates, inclusive). money: Sales, Cost, Margin.
-- Per product (by category) of the orders shipped in the period: Sales are the lines' amounts (ExtendedPrice),
-- Cost is what the shipments cost at the time of sale (each shipped movement's average cost × units). A product
-- any of whose shipments had no cost says 'no cost' rather than count it as 0. MarginPercent is of Sales.
-- A line shipped in parts has one movement per part: their costs are summed per line, so the line counts once.
-- Whole years come from product_year_margin (migration v29, kept by triggers); the other days from the orders.
WITH periods AS (
    SELECT f, t, CAST(substr(f, 1, 4) AS INTEGER) + (substr(f, 6) <> '01-01') AS y1,
           CAST(substr(t, 1, 4) AS INTEGER) - (substr(t, 6) <> '12-31') AS y2
    FROM (SELECT coalesce(:from, '0000-01-01') AS f, coalesce(:to, '9999-12-31') AS t)),
days AS (
    SELECT f AS first, min(t, printf('%04d-12-31', y1 - 1)) AS last FROM periods WHERE y1 > 0
    UNION ALL
    SELECT max(f, printf('%04d-01-01', max(y1, y2 + 1))), t FROM periods WHERE max(y1, y2 + 1) <= 9999),
sold AS (
    SELECT productID, SUM(quantity) AS quantity, SUM(sales) AS sales, SUM(cost) AS cost, SUM(uncosted) AS uncosted FROM (
        SELECT s.productID, s.quantity, s.salesCents AS sales, s.costCents AS cost, s.uncostedLines AS uncosted
        FROM periods p JOIN product_year_margin s ON s.year BETWEEN p.y1 AND p.y2
        WHERE s.lineCount > 0
        UNION ALL
        SELECT ol.productID, ol.quantity, ol.extendedPriceCents,
               (SELECT ifnull(SUM(-m.delta * m.unitCostCents), 0) FROM stock_movements m
                 WHERE m.orderID = o.id AND m.productID = ol.productID AND m.reason = 'shipped'),
               (SELECT count(*) = 0 OR count(m.unitCostCents) < count(*) FROM stock_movements m
                 WHERE m.orderID = o.id AND m.productID = ol.productID AND m.reason = 'shipped')
        FROM days d JOIN orders o ON o.shippedDate BETWEEN d.first AND d.last JOIN order_lines ol ON ol.orderID = o.id
        WHERE +o.status = 'shipped')  -- "+": by the dates' index, not the status's (every shipped order)
    GROUP BY productID)
SELECT coalesce(c.name, '(no category)') AS "CategoryName", p.name AS "ProductName", x.quantity AS "Units",
       x.sales AS "Sales",
       CASE WHEN x.uncosted > 0 THEN 'no cost' ELSE x.cost END AS "Cost",
       CASE WHEN x.uncosted > 0 THEN 'no cost' ELSE x.sales - x.cost END AS "Margin",
       CASE WHEN x.uncosted > 0 OR x.sales = 0 THEN NULL
            ELSE round(100.0 * (x.sales - x.cost) / x.sales, 1) END AS "MarginPercent"
FROM sold x
JOIN products p ON p.id = x.productID
LEFT JOIN categories c ON c.id = p.categoryID
ORDER BY c.id IS NULL, sqlserver_key(c.name), c.name, sqlserver_key(p.name), p.name, p.id;

-- name: sales_by_invoice_date
-- params: :from, :to (optional issue dates, inclusive). money: Net, Tax, Gross.
-- What was invoiced, per day of issue and issuing site (every site's, at head office): invoices less credit notes.
SELECT i.issuedDate AS "InvoiceDate", i.site AS "Site", SUM(i.kind = 'invoice') AS "Invoices",
       SUM(i.kind = 'creditNote') AS "CreditNotes",
       SUM(CASE i.kind WHEN 'invoice' THEN i.netCents ELSE -i.netCents END) AS "Net",
       SUM(CASE i.kind WHEN 'invoice' THEN i.taxCents ELSE -i.taxCents END) AS "Tax",
       SUM(CASE i.kind WHEN 'invoice' THEN i.grossCents ELSE -i.grossCents END) AS "Gross"
FROM invoices i
WHERE i.issuedDate BETWEEN coalesce(:from, '0000-01-01') AND coalesce(:to, '9999-12-31')
GROUP BY i.issuedDate, i.site
ORDER BY i.issuedDate, i.site;

-- name: tax_by_rate_and_month
-- params: :from, :to (optional issue dates, inclusive). money: Net, Tax, Gross.
-- What an accountant's return needs: per month of issue, issuing site and rate, the nets and the tax, credit notes
-- deducted. Each document's tax per rate is as it was issued: the sum of its lines' taxes when it rounds per line,
-- else the rate applied once to the sum of its lines' nets, half up (amounts are never negative).
WITH per_document AS (
    SELECT i.kind, substr(i.issuedDate, 1, 7) AS month, i.site, l.taxBasisPoints AS rate, max(l.taxName) AS name,
           SUM(l.netCents) AS net,
           CASE i.rounding WHEN 'line' THEN SUM(l.taxCents) ELSE (SUM(l.netCents) * l.taxBasisPoints + 5000) / 10000 END AS tax
    FROM invoices i
    JOIN invoice_lines l ON l.invoiceID = i.id
    WHERE i.issuedDate BETWEEN coalesce(:from, '0000-01-01') AND coalesce(:to, '9999-12-31')
    GROUP BY i.id, l.taxBasisPoints)
SELECT month AS "Month", site AS "Site", max(name) || ' ' || printf('%g', rate / 100.0) || ' %' AS "Rate",
       SUM(CASE kind WHEN 'invoice' THEN net ELSE -net END) AS "Net",
       SUM(CASE kind WHEN 'invoice' THEN tax ELSE -tax END) AS "Tax",
       SUM(CASE kind WHEN 'invoice' THEN net + tax ELSE -(net + tax) END) AS "Gross"
FROM per_document
GROUP BY month, site, rate
ORDER BY month, site, rate DESC;

-- name: backorder_ageing
-- params: none. money: Value.
-- The backordered lines (open lines of orders shipped in part), by how long their order has waited since it was
-- taken, in whole days (UTC): how many orders, lines and units, and what the units are worth at the lines' prices.
WITH open AS (
    SELECT o.id, CAST(julianday(date('now')) - julianday(o.orderDate) AS INTEGER) AS days, l.unitPriceCents, l.discount,
           l.quantity - (SELECT ifnull(SUM(s.quantity), 0) FROM shipment_lines s WHERE s.orderLineID = l.id) AS units
    FROM orders o
    JOIN order_lines l ON l.orderID = o.id
    WHERE o.status = 'new' AND EXISTS (SELECT 1 FROM shipments s WHERE s.orderID = o.id))
SELECT CASE WHEN days <= 7 THEN '0-7 days' WHEN days <= 14 THEN '8-14 days' WHEN days <= 30 THEN '15-30 days'
            WHEN days <= 60 THEN '31-60 days' ELSE 'over 60 days' END AS "Age",
       count(DISTINCT id) AS "Orders", count(*) AS "Lines", SUM(units) AS "Units",
       SUM(sqlserver_line_cents(unitPriceCents, units, discount)) AS "Value", max(days) AS "OldestDays"
FROM open
WHERE units > 0
GROUP BY 1
ORDER BY min(days);

-- name: fill_rate
-- params: :days (the promise, in days), :from, :to (optional order dates, inclusive). money: none.
-- Per month of order, the share of ordered units that shipped within :days days of the order date. Ordered counts
-- what a cancellation took off an order shipped in part (orders.cancelledUnits); an order cancelled whole is left
-- out, and so is one whose :days are not over yet. An order shipped before shipments were kept shipped whole, on
-- its shipped date. Read from order_day_fill and shipped_day_fill (migration v29, kept by triggers): per order
-- date, the orders and units ordered, and the units shipped after each number of whole days.
WITH eligible AS (
    SELECT d.orderDate, d.orders, d.orderedUnits,
           (SELECT ifnull(SUM(s.units), 0) FROM shipped_day_fill s
             WHERE s.orderDate = d.orderDate AND s.lagDays <= CAST(:days AS INTEGER)) AS inTime
    FROM order_day_fill d
    WHERE d.orderDate BETWEEN coalesce(:from, '0000-01-01') AND coalesce(:to, '9999-12-31')
      AND date(d.orderDate, '+' || :days || ' days') < date('now') AND d.orders > 0)
SELECT substr(orderDate, 1, 7) AS "Month", SUM(orders) AS "Orders", SUM(orderedUnits) AS "OrderedUnits",
       SUM(inTime) AS "ShippedInTime", round(100.0 * SUM(inTime) / SUM(orderedUnits), 1) AS "FillRatePercent"
FROM eligible
GROUP BY 1
ORDER BY 1;
