import GRDB

extension Schema {
    static func createClassicSchema(_ db: Database) throws {
        let recordID = "recordID TEXT NOT NULL UNIQUE DEFAULT \(uuidExpression)"
        let version = "version INTEGER NOT NULL DEFAULT 1"
        let address = "address TEXT, city TEXT, region TEXT, postalCode TEXT, country TEXT"
        try db.execute(
            sql: """
                CREATE TABLE store_metadata (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);

                CREATE TABLE categories (
                  id INTEGER PRIMARY KEY, \(recordID),
                  name TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (trim(name) <> ''),
                  description TEXT,
                  picture BLOB, pictureFile TEXT UNIQUE, pictureType TEXT,
                  \(version));

                CREATE TABLE suppliers (
                  id INTEGER PRIMARY KEY, \(recordID),
                  companyName TEXT NOT NULL CHECK (trim(companyName) <> ''),
                  contactName TEXT, contactTitle TEXT, \(address), phone TEXT, fax TEXT, homePage TEXT,
                  \(version));
                CREATE INDEX suppliers_on_companyName ON suppliers(companyName);

                -- guide: begin products-table
                CREATE TABLE products (
                  id INTEGER PRIMARY KEY, \(recordID),
                  name TEXT NOT NULL CHECK (trim(name) <> ''),
                  supplierID INTEGER REFERENCES suppliers(id) ON DELETE RESTRICT,
                  categoryID INTEGER REFERENCES categories(id) ON DELETE RESTRICT,
                  quantityPerUnit TEXT,
                  unitPriceCents INTEGER NOT NULL DEFAULT 0 CHECK (unitPriceCents >= 0),
                  unitsInStock INTEGER NOT NULL DEFAULT 0 CHECK (unitsInStock >= 0),
                  unitsOnOrder INTEGER NOT NULL DEFAULT 0 CHECK (unitsOnOrder >= 0),
                  reorderLevel INTEGER NOT NULL DEFAULT 0 CHECK (reorderLevel >= 0),
                  discontinued BOOLEAN NOT NULL DEFAULT 0 CHECK (discontinued IN (0, 1)),
                  \(version));
                CREATE INDEX products_on_supplierID ON products(supplierID);
                CREATE INDEX products_on_categoryID ON products(categoryID, name);
                CREATE INDEX products_on_name ON products(name);
                -- guide: end products-table

                CREATE TABLE customers (
                  id INTEGER PRIMARY KEY, \(recordID),
                  code TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (trim(code) <> ''),
                  companyName TEXT NOT NULL CHECK (trim(companyName) <> ''),
                  contactName TEXT, contactTitle TEXT, \(address), phone TEXT, fax TEXT,
                  \(version));
                CREATE INDEX customers_on_companyName ON customers(companyName);

                CREATE TABLE customer_demographics (
                  id INTEGER PRIMARY KEY, \(recordID),
                  code TEXT NOT NULL UNIQUE, description TEXT);
                CREATE TABLE customer_demographic_links (
                  id INTEGER PRIMARY KEY, \(recordID),
                  customerID INTEGER NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
                  demographicID INTEGER NOT NULL REFERENCES customer_demographics(id) ON DELETE CASCADE,
                  UNIQUE (customerID, demographicID));
                CREATE INDEX customer_demographic_links_on_demographicID ON customer_demographic_links(demographicID);

                CREATE TABLE employees (
                  id INTEGER PRIMARY KEY, \(recordID),
                  lastName TEXT NOT NULL CHECK (trim(lastName) <> ''),
                  firstName TEXT NOT NULL CHECK (trim(firstName) <> ''),
                  title TEXT, titleOfCourtesy TEXT, birthDate TEXT, hireDate TEXT,
                  \(address), homePhone TEXT, extension TEXT,
                  photo BLOB, photoFile TEXT UNIQUE, photoType TEXT,
                  notes TEXT,
                  reportsTo INTEGER REFERENCES employees(id) ON DELETE RESTRICT,
                  photoPath TEXT,
                  \(version));
                CREATE INDEX employees_on_reportsTo ON employees(reportsTo);
                CREATE INDEX employees_on_lastName ON employees(lastName, firstName);

                CREATE TABLE shippers (
                  id INTEGER PRIMARY KEY, \(recordID),
                  companyName TEXT NOT NULL CHECK (trim(companyName) <> ''), phone TEXT,
                  \(version));

                CREATE TABLE orders (
                  id INTEGER PRIMARY KEY, \(recordID),
                  number TEXT NOT NULL UNIQUE,
                  customerID INTEGER NOT NULL REFERENCES customers(id) ON DELETE RESTRICT,
                  employeeID INTEGER REFERENCES employees(id) ON DELETE RESTRICT,
                  orderDate TEXT NOT NULL,
                  requiredDate TEXT,
                  shippedDate TEXT,
                  status TEXT NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'shipped', 'cancelled')),
                  shipVia INTEGER REFERENCES shippers(id) ON DELETE RESTRICT,
                  freightCents INTEGER NOT NULL DEFAULT 0 CHECK (freightCents >= 0),
                  shipName TEXT, shipAddress TEXT, shipCity TEXT, shipRegion TEXT, shipPostalCode TEXT, shipCountry TEXT,
                  \(version),
                  CHECK ((status = 'shipped') = (shippedDate IS NOT NULL)));
                CREATE INDEX orders_on_customerID ON orders(customerID, orderDate);
                CREATE INDEX orders_on_employeeID ON orders(employeeID, orderDate);
                CREATE INDEX orders_on_shipVia ON orders(shipVia);
                CREATE INDEX orders_on_orderDate ON orders(orderDate);
                CREATE INDEX orders_on_status ON orders(status, requiredDate);

                CREATE TABLE order_lines (
                  id INTEGER PRIMARY KEY, \(recordID),
                  orderID INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
                  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE RESTRICT,
                  unitPriceCents INTEGER NOT NULL CHECK (unitPriceCents >= 0),
                  quantity INTEGER NOT NULL CHECK (quantity > 0),
                  discount REAL NOT NULL DEFAULT 0 CHECK (discount >= 0 AND discount <= 1),
                  UNIQUE (orderID, productID));
                CREATE INDEX order_lines_on_productID ON order_lines(productID);

                CREATE TABLE regions (
                  id INTEGER PRIMARY KEY, \(recordID),
                  description TEXT NOT NULL);
                CREATE TABLE territories (
                  id INTEGER PRIMARY KEY, \(recordID),
                  code TEXT NOT NULL UNIQUE,
                  description TEXT NOT NULL,
                  regionID INTEGER NOT NULL REFERENCES regions(id) ON DELETE RESTRICT);
                CREATE INDEX territories_on_regionID ON territories(regionID);
                CREATE TABLE employee_territories (
                  id INTEGER PRIMARY KEY, \(recordID),
                  employeeID INTEGER NOT NULL REFERENCES employees(id) ON DELETE CASCADE,
                  territoryID INTEGER NOT NULL REFERENCES territories(id) ON DELETE CASCADE,
                  UNIQUE (employeeID, territoryID));
                CREATE INDEX employee_territories_on_territoryID ON employee_territories(territoryID);

                -- The audit trail of every stock change. Products' stock follows from it through the trigger below,
                -- so movements from several shops merge by simply adding them up.
                CREATE TABLE stock_movements (
                  id INTEGER PRIMARY KEY, \(recordID),
                  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
                  delta INTEGER NOT NULL CHECK (delta <> 0),
                  reason TEXT NOT NULL CHECK (reason IN ('initial', 'received', 'stockTake', 'shipped')),
                  orderID INTEGER REFERENCES orders(id) ON DELETE SET NULL,
                  employeeID INTEGER REFERENCES employees(id) ON DELETE SET NULL,
                  note TEXT,
                  createdAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)));
                CREATE INDEX stock_movements_on_productID ON stock_movements(productID, createdAt);
                CREATE INDEX stock_movements_on_orderID ON stock_movements(orderID);
                CREATE INDEX stock_movements_on_employeeID ON stock_movements(employeeID);
                CREATE INDEX stock_movements_on_createdAt ON stock_movements(createdAt);

                CREATE TRIGGER stock_movements_apply AFTER INSERT ON stock_movements BEGIN
                  UPDATE products SET unitsInStock = unitsInStock + NEW.delta WHERE id = NEW.productID;
                END;
                """
        )
    }
}
