-- The schema a new store has after every migration (docs/architecture.md). Generated: do not edit;
-- NORTHWIND_SCHEMA_UPDATE=1 swift test --filter SchemaInForceTests rewrites it.
CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
CREATE TABLE store_metadata (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
CREATE TABLE categories (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  name TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (trim(name) <> ''),
  description TEXT,
  picture BLOB, pictureFile TEXT UNIQUE, pictureType TEXT,
  version INTEGER NOT NULL DEFAULT 1, taxBasisPoints INTEGER CHECK (taxBasisPoints IS NULL OR taxBasisPoints BETWEEN 0 AND 10000));
CREATE TABLE suppliers (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  companyName TEXT NOT NULL CHECK (trim(companyName) <> ''),
  contactName TEXT, contactTitle TEXT, address TEXT, city TEXT, region TEXT, postalCode TEXT, country TEXT, phone TEXT, fax TEXT, homePage TEXT,
  version INTEGER NOT NULL DEFAULT 1);
CREATE INDEX suppliers_on_companyName ON suppliers(companyName);
CREATE TABLE products (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  name TEXT NOT NULL CHECK (trim(name) <> ''),
  supplierID INTEGER REFERENCES suppliers(id) ON DELETE RESTRICT,
  categoryID INTEGER REFERENCES categories(id) ON DELETE RESTRICT,
  quantityPerUnit TEXT,
  unitPriceCents INTEGER NOT NULL DEFAULT 0 CHECK (unitPriceCents >= 0),
  unitsInStock INTEGER NOT NULL DEFAULT 0 CHECK (unitsInStock >= 0),
  unitsOnOrder INTEGER NOT NULL DEFAULT 0 CHECK (unitsOnOrder >= 0),
  reorderLevel INTEGER NOT NULL DEFAULT 0 CHECK (reorderLevel >= 0),
  discontinued BOOLEAN NOT NULL DEFAULT 0 CHECK (discontinued IN (0, 1)),
  version INTEGER NOT NULL DEFAULT 1, taxBasisPoints INTEGER CHECK (taxBasisPoints IS NULL OR taxBasisPoints BETWEEN 0 AND 10000));
CREATE INDEX products_on_supplierID ON products(supplierID);
CREATE INDEX products_on_categoryID ON products(categoryID, name);
CREATE INDEX products_on_name ON products(name);
CREATE TABLE customers (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  code TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (trim(code) <> ''),
  companyName TEXT NOT NULL CHECK (trim(companyName) <> ''),
  contactName TEXT, contactTitle TEXT, address TEXT, city TEXT, region TEXT, postalCode TEXT, country TEXT, phone TEXT, fax TEXT,
  version INTEGER NOT NULL DEFAULT 1, completeShipmentsOnly BOOLEAN);
CREATE INDEX customers_on_companyName ON customers(companyName);
CREATE TABLE customer_demographics (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  code TEXT NOT NULL UNIQUE, description TEXT);
CREATE TABLE customer_demographic_links (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  customerID INTEGER NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
  demographicID INTEGER NOT NULL REFERENCES customer_demographics(id) ON DELETE CASCADE,
  UNIQUE (customerID, demographicID));
CREATE INDEX customer_demographic_links_on_demographicID ON customer_demographic_links(demographicID);
CREATE TABLE employees (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  lastName TEXT NOT NULL CHECK (trim(lastName) <> ''),
  firstName TEXT NOT NULL CHECK (trim(firstName) <> ''),
  title TEXT, titleOfCourtesy TEXT, birthDate TEXT, hireDate TEXT,
  address TEXT, city TEXT, region TEXT, postalCode TEXT, country TEXT, homePhone TEXT, extension TEXT,
  photo BLOB, photoFile TEXT UNIQUE, photoType TEXT,
  notes TEXT,
  reportsTo INTEGER REFERENCES employees(id) ON DELETE RESTRICT,
  photoPath TEXT,
  version INTEGER NOT NULL DEFAULT 1);
CREATE INDEX employees_on_reportsTo ON employees(reportsTo);
CREATE INDEX employees_on_lastName ON employees(lastName, firstName);
CREATE TABLE shippers (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  companyName TEXT NOT NULL CHECK (trim(companyName) <> ''), phone TEXT,
  version INTEGER NOT NULL DEFAULT 1);
CREATE TABLE orders (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
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
  version INTEGER NOT NULL DEFAULT 1, sourceNumber TEXT, cancelledUnits INTEGER CHECK (cancelledUnits IS NULL OR cancelledUnits >= 0),
  CHECK ((status = 'shipped') = (shippedDate IS NOT NULL)));
CREATE INDEX orders_on_customerID ON orders(customerID, orderDate);
CREATE INDEX orders_on_employeeID ON orders(employeeID, orderDate);
CREATE INDEX orders_on_shipVia ON orders(shipVia);
CREATE INDEX orders_on_orderDate ON orders(orderDate);
CREATE INDEX orders_on_status ON orders(status, requiredDate);
CREATE TABLE regions (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  description TEXT NOT NULL);
CREATE TABLE territories (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  code TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL,
  regionID INTEGER NOT NULL REFERENCES regions(id) ON DELETE RESTRICT);
CREATE INDEX territories_on_regionID ON territories(regionID);
CREATE TABLE employee_territories (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  employeeID INTEGER NOT NULL REFERENCES employees(id) ON DELETE CASCADE,
  territoryID INTEGER NOT NULL REFERENCES territories(id) ON DELETE CASCADE,
  UNIQUE (employeeID, territoryID));
CREATE INDEX employee_territories_on_territoryID ON employee_territories(territoryID);
CREATE TABLE change_log (
  seq INTEGER PRIMARY KEY, -- rowid order; the log is never emptied, so seq never goes back
  tableName TEXT NOT NULL,
  recordID TEXT NOT NULL,
  operation TEXT NOT NULL CHECK (operation IN ('insert', 'update', 'delete')),
  changedAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')), txn INTEGER, origin TEXT NOT NULL DEFAULT 'local' CHECK (origin IN ('local', 'sync')), localOnly BOOLEAN NOT NULL DEFAULT 0);
CREATE TRIGGER categories_log_insert AFTER INSERT ON categories BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('categories', NEW.recordID, 'insert');
END;
CREATE TRIGGER categories_log_update AFTER UPDATE ON categories BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('categories', NEW.recordID, 'update');
END;
CREATE TRIGGER categories_log_delete AFTER DELETE ON categories BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('categories', OLD.recordID, 'delete');
END;
CREATE TRIGGER categories_recordID_immutable BEFORE UPDATE OF recordID ON categories
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER suppliers_log_insert AFTER INSERT ON suppliers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('suppliers', NEW.recordID, 'insert');
END;
CREATE TRIGGER suppliers_log_update AFTER UPDATE ON suppliers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('suppliers', NEW.recordID, 'update');
END;
CREATE TRIGGER suppliers_log_delete AFTER DELETE ON suppliers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('suppliers', OLD.recordID, 'delete');
END;
CREATE TRIGGER suppliers_recordID_immutable BEFORE UPDATE OF recordID ON suppliers
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER products_log_insert AFTER INSERT ON products BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('products', NEW.recordID, 'insert');
END;
CREATE TRIGGER products_log_update AFTER UPDATE ON products BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('products', NEW.recordID, 'update');
END;
CREATE TRIGGER products_log_delete AFTER DELETE ON products BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('products', OLD.recordID, 'delete');
END;
CREATE TRIGGER products_recordID_immutable BEFORE UPDATE OF recordID ON products
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER customers_log_insert AFTER INSERT ON customers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('customers', NEW.recordID, 'insert');
END;
CREATE TRIGGER customers_log_update AFTER UPDATE ON customers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('customers', NEW.recordID, 'update');
END;
CREATE TRIGGER customers_log_delete AFTER DELETE ON customers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('customers', OLD.recordID, 'delete');
END;
CREATE TRIGGER customers_recordID_immutable BEFORE UPDATE OF recordID ON customers
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER customer_demographics_log_insert AFTER INSERT ON customer_demographics BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('customer_demographics', NEW.recordID, 'insert');
END;
CREATE TRIGGER customer_demographics_log_update AFTER UPDATE ON customer_demographics BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('customer_demographics', NEW.recordID, 'update');
END;
CREATE TRIGGER customer_demographics_log_delete AFTER DELETE ON customer_demographics BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('customer_demographics', OLD.recordID, 'delete');
END;
CREATE TRIGGER customer_demographics_recordID_immutable BEFORE UPDATE OF recordID ON customer_demographics
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER customer_demographic_links_log_insert AFTER INSERT ON customer_demographic_links BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('customer_demographic_links', NEW.recordID, 'insert');
END;
CREATE TRIGGER customer_demographic_links_log_update AFTER UPDATE ON customer_demographic_links BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('customer_demographic_links', NEW.recordID, 'update');
END;
CREATE TRIGGER customer_demographic_links_log_delete AFTER DELETE ON customer_demographic_links BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('customer_demographic_links', OLD.recordID, 'delete');
END;
CREATE TRIGGER customer_demographic_links_recordID_immutable BEFORE UPDATE OF recordID ON customer_demographic_links
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER employees_log_insert AFTER INSERT ON employees BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('employees', NEW.recordID, 'insert');
END;
CREATE TRIGGER employees_log_update AFTER UPDATE ON employees BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('employees', NEW.recordID, 'update');
END;
CREATE TRIGGER employees_log_delete AFTER DELETE ON employees BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('employees', OLD.recordID, 'delete');
END;
CREATE TRIGGER employees_recordID_immutable BEFORE UPDATE OF recordID ON employees
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER shippers_log_insert AFTER INSERT ON shippers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('shippers', NEW.recordID, 'insert');
END;
CREATE TRIGGER shippers_log_update AFTER UPDATE ON shippers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('shippers', NEW.recordID, 'update');
END;
CREATE TRIGGER shippers_log_delete AFTER DELETE ON shippers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('shippers', OLD.recordID, 'delete');
END;
CREATE TRIGGER shippers_recordID_immutable BEFORE UPDATE OF recordID ON shippers
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER orders_log_insert AFTER INSERT ON orders BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('orders', NEW.recordID, 'insert');
END;
CREATE TRIGGER orders_log_update AFTER UPDATE ON orders BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('orders', NEW.recordID, 'update');
END;
CREATE TRIGGER orders_log_delete AFTER DELETE ON orders BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('orders', OLD.recordID, 'delete');
END;
CREATE TRIGGER orders_recordID_immutable BEFORE UPDATE OF recordID ON orders
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER regions_log_insert AFTER INSERT ON regions BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('regions', NEW.recordID, 'insert');
END;
CREATE TRIGGER regions_log_update AFTER UPDATE ON regions BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('regions', NEW.recordID, 'update');
END;
CREATE TRIGGER regions_log_delete AFTER DELETE ON regions BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('regions', OLD.recordID, 'delete');
END;
CREATE TRIGGER regions_recordID_immutable BEFORE UPDATE OF recordID ON regions
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER territories_log_insert AFTER INSERT ON territories BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('territories', NEW.recordID, 'insert');
END;
CREATE TRIGGER territories_log_update AFTER UPDATE ON territories BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('territories', NEW.recordID, 'update');
END;
CREATE TRIGGER territories_log_delete AFTER DELETE ON territories BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('territories', OLD.recordID, 'delete');
END;
CREATE TRIGGER territories_recordID_immutable BEFORE UPDATE OF recordID ON territories
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER employee_territories_log_insert AFTER INSERT ON employee_territories BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('employee_territories', NEW.recordID, 'insert');
END;
CREATE TRIGGER employee_territories_log_update AFTER UPDATE ON employee_territories BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('employee_territories', NEW.recordID, 'update');
END;
CREATE TRIGGER employee_territories_log_delete AFTER DELETE ON employee_territories BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('employee_territories', OLD.recordID, 'delete');
END;
CREATE TRIGGER employee_territories_recordID_immutable BEFORE UPDATE OF recordID ON employee_territories
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE VIRTUAL TABLE products_fts USING fts5(
  name, content='products', content_rowid='id',
  tokenize='unicode61 remove_diacritics 2', prefix='2 3');
CREATE TABLE 'products_fts_data'(id INTEGER PRIMARY KEY, block BLOB);
CREATE TABLE 'products_fts_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;
CREATE TABLE 'products_fts_docsize'(id INTEGER PRIMARY KEY, sz BLOB);
CREATE TABLE 'products_fts_config'(k PRIMARY KEY, v) WITHOUT ROWID;
CREATE TRIGGER products_fts_insert AFTER INSERT ON products BEGIN
  INSERT INTO products_fts(rowid, name) VALUES (NEW.id, NEW.name);
END;
CREATE TRIGGER products_fts_delete AFTER DELETE ON products BEGIN
  INSERT INTO products_fts(products_fts, rowid, name) VALUES ('delete', OLD.id, OLD.name);
END;
CREATE TRIGGER products_fts_update AFTER UPDATE OF name ON products BEGIN
  INSERT INTO products_fts(products_fts, rowid, name) VALUES ('delete', OLD.id, OLD.name);
  INSERT INTO products_fts(rowid, name) VALUES (NEW.id, NEW.name);
END;
CREATE TABLE credentials (
  employeeID INTEGER PRIMARY KEY REFERENCES employees(id) ON DELETE CASCADE,
  login TEXT NOT NULL UNIQUE COLLATE NOCASE,
  passwordHash TEXT NOT NULL,
  changedAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
CREATE TABLE access_tokens (
  tokenHash TEXT PRIMARY KEY,
  employeeID INTEGER NOT NULL REFERENCES employees(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('session', 'api')),
  csrfToken TEXT,
  label TEXT,
  createdAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  expiresAt TEXT);
CREATE INDEX access_tokens_employee ON access_tokens(employeeID);
CREATE INDEX orders_on_shippedDate ON orders(shippedDate) WHERE shippedDate IS NOT NULL;
CREATE TABLE order_totals (
  orderID INTEGER PRIMARY KEY,
  lineCount INTEGER NOT NULL,
  amountCents INTEGER NOT NULL);
CREATE TABLE "order_lines" (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  orderID INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE RESTRICT,
  unitPriceCents INTEGER NOT NULL CHECK (unitPriceCents >= 0),
  quantity INTEGER NOT NULL CHECK (quantity > 0),
  discount REAL NOT NULL DEFAULT 0 CHECK (discount >= 0 AND discount <= 1),
  extendedPriceCents INTEGER NOT NULL,
  UNIQUE (orderID, productID));
CREATE INDEX order_lines_on_productID ON order_lines(productID);
CREATE INDEX order_lines_on_orderID_amount ON order_lines(orderID, productID, extendedPriceCents, quantity);
CREATE TRIGGER order_lines_log_insert AFTER INSERT ON order_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('order_lines', NEW.recordID, 'insert');
END;
CREATE TRIGGER order_lines_log_update AFTER UPDATE ON order_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('order_lines', NEW.recordID, 'update');
END;
CREATE TRIGGER order_lines_log_delete AFTER DELETE ON order_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('order_lines', OLD.recordID, 'delete');
END;
CREATE TRIGGER order_lines_recordID_immutable BEFORE UPDATE OF recordID ON order_lines
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER order_lines_amount_insert BEFORE INSERT ON order_lines
WHEN NEW.extendedPriceCents IS NOT sqlserver_line_cents(NEW.unitPriceCents, NEW.quantity, NEW.discount) BEGIN
  SELECT RAISE(ABORT, 'the line amount is out of range or is not unit price x quantity x (1 - discount)');
END;
CREATE TRIGGER order_lines_amount_update BEFORE UPDATE OF unitPriceCents, quantity, discount, extendedPriceCents
ON order_lines
WHEN NEW.extendedPriceCents IS NOT sqlserver_line_cents(NEW.unitPriceCents, NEW.quantity, NEW.discount) BEGIN
  SELECT RAISE(ABORT, 'the line amount is out of range or is not unit price x quantity x (1 - discount)');
END;
CREATE INDEX products_on_unitPriceCents ON products(unitPriceCents);
CREATE INDEX products_on_id_name ON products(id, name);
CREATE INDEX change_log_on_recordID ON change_log(recordID, seq);
CREATE TABLE sync_state (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
CREATE TABLE sync_records (
  tableName TEXT NOT NULL,
  recordID TEXT NOT NULL,
  zoneName TEXT NOT NULL,
  changeTag TEXT NOT NULL,
  fields TEXT NOT NULL, modified INTEGER, checksum INTEGER, -- the server's fields, as JSON
  PRIMARY KEY (tableName, recordID)) WITHOUT ROWID;
CREATE TABLE sync_waiting (
  zoneName TEXT NOT NULL,
  recordName TEXT NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (zoneName, recordName)) WITHOUT ROWID;
CREATE TABLE sync_conflicts (
  id INTEGER PRIMARY KEY,
  tableName TEXT NOT NULL,
  recordID TEXT NOT NULL,
  field TEXT NOT NULL,
  keptValue TEXT, keptClock TEXT, keptSite TEXT,
  lostValue TEXT, lostClock TEXT, lostSite TEXT,
  reason TEXT NOT NULL,
  createdAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  resolvedAt TEXT);
CREATE INDEX sync_conflicts_open ON sync_conflicts(resolvedAt, id);
CREATE TABLE stock_levels (
  location TEXT NOT NULL,
  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
  units INTEGER NOT NULL,
  PRIMARY KEY (location, productID)) WITHOUT ROWID;
CREATE TABLE stock_transfers (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
  quantity INTEGER NOT NULL CHECK (quantity > 0),
  fromLocation TEXT NOT NULL CHECK (trim(fromLocation) <> ''),
  toLocation TEXT NOT NULL CHECK (trim(toLocation) <> '' AND toLocation <> fromLocation),
  employeeID INTEGER REFERENCES employees(id) ON DELETE SET NULL,
  note TEXT,
  sentAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
CREATE INDEX stock_transfers_on_productID ON stock_transfers(productID);
CREATE INDEX stock_transfers_on_employeeID ON stock_transfers(employeeID);
CREATE TRIGGER stock_transfers_log_insert AFTER INSERT ON stock_transfers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('stock_transfers', NEW.recordID, 'insert');
END;
CREATE TRIGGER stock_transfers_log_update AFTER UPDATE ON stock_transfers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('stock_transfers', NEW.recordID, 'update');
END;
CREATE TRIGGER stock_transfers_log_delete AFTER DELETE ON stock_transfers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('stock_transfers', OLD.recordID, 'delete');
END;
CREATE TRIGGER stock_transfers_recordID_immutable BEFORE UPDATE OF recordID ON stock_transfers
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TABLE sync_conflict_assets (
  sha256 TEXT PRIMARY KEY NOT NULL,
  contentType TEXT NOT NULL,
  bytes BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE sync_refetch (
  zoneName TEXT NOT NULL,
  recordName TEXT NOT NULL,
  PRIMARY KEY (zoneName, recordName)
) WITHOUT ROWID;
CREATE TABLE settings (
  key TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL,
  changedAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  changedBy TEXT
) WITHOUT ROWID;
CREATE TABLE user_settings (
  login TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  changedAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (login, key)
) WITHOUT ROWID;
CREATE TRIGGER settings_changed_insert AFTER INSERT ON settings BEGIN
  INSERT INTO change_log (tableName, recordID, operation, localOnly) VALUES ('settings', NEW.key, 'insert', 1);
END;
CREATE TRIGGER settings_changed_update AFTER UPDATE ON settings BEGIN
  INSERT INTO change_log (tableName, recordID, operation, localOnly) VALUES ('settings', NEW.key, 'update', 1);
END;
CREATE TRIGGER settings_changed_delete AFTER DELETE ON settings BEGIN
  INSERT INTO change_log (tableName, recordID, operation, localOnly) VALUES ('settings', OLD.key, 'delete', 1);
END;
CREATE TRIGGER user_settings_changed_insert AFTER INSERT ON user_settings BEGIN
  INSERT INTO change_log (tableName, recordID, operation, localOnly) VALUES ('user_settings', NEW.login || '/' || NEW.key, 'insert', 1);
END;
CREATE TRIGGER user_settings_changed_update AFTER UPDATE ON user_settings BEGIN
  INSERT INTO change_log (tableName, recordID, operation, localOnly) VALUES ('user_settings', NEW.login || '/' || NEW.key, 'update', 1);
END;
CREATE TRIGGER user_settings_changed_delete AFTER DELETE ON user_settings BEGIN
  INSERT INTO change_log (tableName, recordID, operation, localOnly) VALUES ('user_settings', OLD.login || '/' || OLD.key, 'delete', 1);
END;
CREATE TABLE user_setting_sync (
  login TEXT NOT NULL,
  key TEXT NOT NULL,
  clock TEXT NOT NULL,
  pending BOOLEAN NOT NULL DEFAULT 1,
  serverTag TEXT,
  reason TEXT,
  reasonAt TEXT,
  PRIMARY KEY (login, key)
) WITHOUT ROWID;
CREATE TABLE user_setting_tokens (
  login TEXT PRIMARY KEY NOT NULL,
  token TEXT
) WITHOUT ROWID;
CREATE TABLE quotes (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  number TEXT NOT NULL UNIQUE,
  customerID INTEGER NOT NULL REFERENCES customers(id) ON DELETE RESTRICT,
  validUntil TEXT NOT NULL,
  notes TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'converted', 'withdrawn')),
  orderNumber TEXT,
  createdBy TEXT,
  createdAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updatedAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  version INTEGER NOT NULL DEFAULT 1, sourceNumber TEXT);
CREATE INDEX quotes_on_customerID ON quotes(customerID);
CREATE TABLE quote_lines (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  quoteID INTEGER NOT NULL REFERENCES quotes(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE RESTRICT,
  quantity INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 1000000),
  unitPriceCents INTEGER NOT NULL CHECK (unitPriceCents BETWEEN 0 AND 999999999),
  discount REAL NOT NULL DEFAULT 0 CHECK (discount >= 0 AND discount <= 1));
CREATE INDEX quote_lines_on_quoteID ON quote_lines(quoteID);
CREATE INDEX quote_lines_on_productID ON quote_lines(productID);
CREATE TABLE quote_versions (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  quoteID INTEGER NOT NULL REFERENCES quotes(id) ON DELETE CASCADE,
  parentIDs TEXT NOT NULL DEFAULT '[]',
  label TEXT NOT NULL,
  content TEXT NOT NULL,
  author TEXT,
  createdAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
CREATE INDEX quote_versions_on_quoteID ON quote_versions(quoteID, createdAt);
CREATE TABLE quote_sessions (
  quoteID INTEGER PRIMARY KEY REFERENCES quotes(id) ON DELETE CASCADE,
  editor TEXT NOT NULL,
  editorName TEXT NOT NULL,
  leaseUntil TEXT NOT NULL,
  history TEXT NOT NULL DEFAULT '{"undo":[],"redo":[]}',
  takenFrom TEXT,
  changedAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
CREATE TRIGGER quotes_log_insert AFTER INSERT ON quotes BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('quotes', NEW.recordID, 'insert');
END;
CREATE TRIGGER quotes_log_update AFTER UPDATE ON quotes BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('quotes', NEW.recordID, 'update');
END;
CREATE TRIGGER quotes_log_delete AFTER DELETE ON quotes BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('quotes', OLD.recordID, 'delete');
END;
CREATE TRIGGER quotes_recordID_immutable BEFORE UPDATE OF recordID ON quotes
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER quote_lines_log_insert AFTER INSERT ON quote_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('quote_lines', NEW.recordID, 'insert');
END;
CREATE TRIGGER quote_lines_log_update AFTER UPDATE ON quote_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('quote_lines', NEW.recordID, 'update');
END;
CREATE TRIGGER quote_lines_log_delete AFTER DELETE ON quote_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('quote_lines', OLD.recordID, 'delete');
END;
CREATE TRIGGER quote_lines_recordID_immutable BEFORE UPDATE OF recordID ON quote_lines
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER quote_versions_log_insert AFTER INSERT ON quote_versions BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('quote_versions', NEW.recordID, 'insert');
END;
CREATE TRIGGER quote_versions_log_update AFTER UPDATE ON quote_versions BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('quote_versions', NEW.recordID, 'update');
END;
CREATE TRIGGER quote_versions_log_delete AFTER DELETE ON quote_versions BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('quote_versions', OLD.recordID, 'delete');
END;
CREATE TRIGGER quote_versions_recordID_immutable BEFORE UPDATE OF recordID ON quote_versions
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TABLE sync_refused (
  tableName TEXT NOT NULL,
  recordID TEXT NOT NULL,
  reason TEXT NOT NULL,
  refusedAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (tableName, recordID)) WITHOUT ROWID;
CREATE TABLE sync_held (
  zoneName TEXT NOT NULL,
  recordName TEXT NOT NULL,
  recordType TEXT NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (zoneName, recordName)) WITHOUT ROWID;
CREATE TABLE sync_resend (
  tableName TEXT NOT NULL,
  recordID TEXT NOT NULL,
  fields TEXT NOT NULL, zoneName TEXT, modified INTEGER,
  PRIMARY KEY (tableName, recordID)) WITHOUT ROWID;
CREATE TABLE purchase_orders (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  number TEXT NOT NULL UNIQUE,
  supplierID INTEGER NOT NULL REFERENCES suppliers(id) ON DELETE RESTRICT,
  status TEXT NOT NULL DEFAULT 'draft'
    CHECK (status IN ('draft', 'sent', 'partiallyReceived', 'received', 'cancelled')),
  opening BOOLEAN NOT NULL DEFAULT 0,
  expectedDate TEXT,
  note TEXT,
  employeeID INTEGER REFERENCES employees(id) ON DELETE SET NULL,
  createdAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  sentAt TEXT,
  closedAt TEXT,
  location TEXT,
  version INTEGER NOT NULL DEFAULT 1);
CREATE INDEX purchase_orders_on_supplierID ON purchase_orders(supplierID, status);
CREATE INDEX purchase_orders_on_status ON purchase_orders(status, expectedDate);
CREATE INDEX purchase_orders_on_employeeID ON purchase_orders(employeeID);
CREATE TABLE purchase_order_lines (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  purchaseOrderID INTEGER NOT NULL REFERENCES purchase_orders(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE RESTRICT,
  quantity INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 1000000000),
  unitCostCents INTEGER CHECK (unitCostCents BETWEEN 0 AND 999999999),
  UNIQUE (purchaseOrderID, productID));
CREATE INDEX purchase_order_lines_on_productID ON purchase_order_lines(productID);
CREATE TRIGGER purchase_orders_log_insert AFTER INSERT ON purchase_orders BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('purchase_orders', NEW.recordID, 'insert');
END;
CREATE TRIGGER purchase_orders_log_update AFTER UPDATE ON purchase_orders BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('purchase_orders', NEW.recordID, 'update');
END;
CREATE TRIGGER purchase_orders_log_delete AFTER DELETE ON purchase_orders BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('purchase_orders', OLD.recordID, 'delete');
END;
CREATE TRIGGER purchase_orders_recordID_immutable BEFORE UPDATE OF recordID ON purchase_orders
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER purchase_order_lines_log_insert AFTER INSERT ON purchase_order_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('purchase_order_lines', NEW.recordID, 'insert');
END;
CREATE TRIGGER purchase_order_lines_log_update AFTER UPDATE ON purchase_order_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('purchase_order_lines', NEW.recordID, 'update');
END;
CREATE TRIGGER purchase_order_lines_log_delete AFTER DELETE ON purchase_order_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('purchase_order_lines', OLD.recordID, 'delete');
END;
CREATE TRIGGER purchase_order_lines_recordID_immutable BEFORE UPDATE OF recordID ON purchase_order_lines
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER purchase_orders_kept BEFORE DELETE ON purchase_orders WHEN OLD.status <> 'draft' BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a purchase order that was sent is never deleted; cancel it');
END;
CREATE TABLE shipments (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  orderID INTEGER NOT NULL REFERENCES orders(id) ON DELETE RESTRICT,
  sequence INTEGER NOT NULL CHECK (sequence BETWEEN 1 AND 1000000),
  shippedDate TEXT NOT NULL,
  employeeID INTEGER REFERENCES employees(id) ON DELETE SET NULL,
  createdAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  requestKey TEXT CHECK (requestKey IS NULL OR length(requestKey) BETWEEN 1 AND 100),
  UNIQUE (orderID, sequence));
CREATE UNIQUE INDEX shipments_once_per_request ON shipments(orderID, requestKey) WHERE requestKey IS NOT NULL;
CREATE INDEX shipments_on_shippedDate ON shipments(shippedDate);
CREATE INDEX shipments_on_employeeID ON shipments(employeeID);
CREATE TABLE shipment_lines (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  shipmentID INTEGER NOT NULL REFERENCES shipments(id) ON DELETE RESTRICT,
  orderLineID INTEGER NOT NULL REFERENCES order_lines(id) ON DELETE RESTRICT,
  quantity INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 1000000000),
  UNIQUE (shipmentID, orderLineID));
CREATE INDEX shipment_lines_on_orderLineID ON shipment_lines(orderLineID);
CREATE TRIGGER shipments_log_insert AFTER INSERT ON shipments BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('shipments', NEW.recordID, 'insert');
END;
CREATE TRIGGER shipments_log_update AFTER UPDATE ON shipments BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('shipments', NEW.recordID, 'update');
END;
CREATE TRIGGER shipments_log_delete AFTER DELETE ON shipments BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('shipments', OLD.recordID, 'delete');
END;
CREATE TRIGGER shipments_recordID_immutable BEFORE UPDATE OF recordID ON shipments
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER shipment_lines_log_insert AFTER INSERT ON shipment_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('shipment_lines', NEW.recordID, 'insert');
END;
CREATE TRIGGER shipment_lines_log_update AFTER UPDATE ON shipment_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('shipment_lines', NEW.recordID, 'update');
END;
CREATE TRIGGER shipment_lines_log_delete AFTER DELETE ON shipment_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('shipment_lines', OLD.recordID, 'delete');
END;
CREATE TRIGGER shipment_lines_recordID_immutable BEFORE UPDATE OF recordID ON shipment_lines
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER shipments_never_changed BEFORE UPDATE ON shipments
WHEN NEW.orderID IS NOT OLD.orderID OR NEW.sequence IS NOT OLD.sequence OR NEW.shippedDate IS NOT OLD.shippedDate BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a shipment is never changed');
END;
CREATE TRIGGER shipments_never_deleted BEFORE DELETE ON shipments BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a shipment is never deleted');
END;
CREATE TRIGGER shipment_lines_never_changed BEFORE UPDATE ON shipment_lines
WHEN NEW.shipmentID IS NOT OLD.shipmentID OR NEW.orderLineID IS NOT OLD.orderLineID OR NEW.quantity IS NOT OLD.quantity BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a shipment line is never changed');
END;
CREATE TRIGGER shipment_lines_never_deleted BEFORE DELETE ON shipment_lines BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a shipment line is never deleted');
END;
CREATE TRIGGER order_lines_keep_what_shipped BEFORE UPDATE OF productID, quantity ON order_lines
WHEN EXISTS (SELECT 1 FROM shipment_lines WHERE orderLineID = OLD.id)
  AND (NEW.productID <> OLD.productID
    OR NEW.quantity < (SELECT sum(quantity) FROM shipment_lines WHERE orderLineID = OLD.id)) BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: an order line keeps at least what has shipped of it');
END;
CREATE TABLE returns (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  shipmentID INTEGER NOT NULL REFERENCES shipments(id) ON DELETE RESTRICT,
  sequence INTEGER NOT NULL CHECK (sequence BETWEEN 1 AND 1000000),
  returnedDate TEXT NOT NULL,
  employeeID INTEGER REFERENCES employees(id) ON DELETE SET NULL,
  reason TEXT CHECK (reason IS NULL OR length(reason) <= 500),
  createdAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  requestKey TEXT CHECK (requestKey IS NULL OR length(requestKey) BETWEEN 1 AND 100),
  UNIQUE (shipmentID, sequence));
CREATE UNIQUE INDEX returns_once_per_request ON returns(shipmentID, requestKey) WHERE requestKey IS NOT NULL;
CREATE INDEX returns_on_employeeID ON returns(employeeID);
CREATE TABLE return_lines (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  returnID INTEGER NOT NULL REFERENCES returns(id) ON DELETE RESTRICT,
  shipmentLineID INTEGER NOT NULL REFERENCES shipment_lines(id) ON DELETE RESTRICT,
  quantity INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 1000000000),
  UNIQUE (returnID, shipmentLineID));
CREATE INDEX return_lines_on_shipmentLineID ON return_lines(shipmentLineID);
CREATE TABLE invoices (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  kind TEXT NOT NULL CHECK (kind IN ('invoice', 'creditNote')),
  site TEXT NOT NULL CHECK (length(site) BETWEEN 1 AND 40),
  year INTEGER NOT NULL CHECK (year BETWEEN 1900 AND 9999),
  counter INTEGER NOT NULL CHECK (counter BETWEEN 1 AND 999999999),
  number TEXT NOT NULL CHECK (length(number) BETWEEN 1 AND 80),
  orderID INTEGER NOT NULL REFERENCES orders(id) ON DELETE RESTRICT,
  shipmentID INTEGER NOT NULL REFERENCES shipments(id) ON DELETE RESTRICT,
  returnID INTEGER REFERENCES returns(id) ON DELETE RESTRICT,
  correctsID INTEGER REFERENCES invoices(id) ON DELETE RESTRICT,
  issuedDate TEXT NOT NULL,
  seller TEXT NOT NULL,
  buyer TEXT NOT NULL,
  rounding TEXT NOT NULL CHECK (rounding IN ('line', 'rate')),
  netCents INTEGER NOT NULL CHECK (netCents >= 0),
  taxCents INTEGER NOT NULL CHECK (taxCents >= 0),
  grossCents INTEGER NOT NULL CHECK (grossCents = netCents + taxCents),
  rendition TEXT NOT NULL,
  createdAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  CHECK ((kind = 'invoice') = (returnID IS NULL)),
  CHECK ((kind = 'invoice') = (correctsID IS NULL)),
  UNIQUE (site, kind, year, counter));
CREATE UNIQUE INDEX invoices_one_per_shipment ON invoices(shipmentID) WHERE kind = 'invoice';
CREATE UNIQUE INDEX invoices_one_per_return ON invoices(returnID) WHERE returnID IS NOT NULL;
CREATE INDEX invoices_on_orderID ON invoices(orderID);
CREATE INDEX invoices_on_issuedDate ON invoices(issuedDate);
CREATE INDEX invoices_on_correctsID ON invoices(correctsID) WHERE correctsID IS NOT NULL;
CREATE TABLE invoice_lines (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  invoiceID INTEGER NOT NULL REFERENCES invoices(id) ON DELETE RESTRICT,
  position INTEGER NOT NULL CHECK (position BETWEEN 1 AND 100000),
  shipmentLineID INTEGER REFERENCES shipment_lines(id) ON DELETE RESTRICT,
  productID INTEGER REFERENCES products(id) ON DELETE RESTRICT,
  description TEXT NOT NULL CHECK (length(description) BETWEEN 1 AND 200),
  quantity INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 1000000000),
  unitPriceCents INTEGER NOT NULL CHECK (unitPriceCents >= 0),
  discountBasisPoints INTEGER NOT NULL CHECK (discountBasisPoints BETWEEN 0 AND 10000),
  netCents INTEGER NOT NULL CHECK (netCents >= 0),
  taxBasisPoints INTEGER NOT NULL CHECK (taxBasisPoints BETWEEN 0 AND 10000),
  taxName TEXT NOT NULL CHECK (length(taxName) BETWEEN 1 AND 40),
  -- Set when the invoice rounds tax per line; per rate, the rate's tax is the invoice's.
  taxCents INTEGER CHECK (taxCents IS NULL OR taxCents >= 0),
  UNIQUE (invoiceID, position));
CREATE INDEX invoice_lines_on_shipmentLineID ON invoice_lines(shipmentLineID);
CREATE INDEX invoice_lines_on_productID ON invoice_lines(productID);
CREATE TABLE "stock_movements" (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
  delta INTEGER NOT NULL CHECK (delta <> 0),
  reason TEXT NOT NULL CHECK (reason IN ('initial', 'received', 'stockTake', 'shipped', 'transferOut',
    'transferIn', 'purchaseReceipt', 'receiptReversal', 'returned')),
  orderID INTEGER REFERENCES orders(id) ON DELETE SET NULL,
  employeeID INTEGER REFERENCES employees(id) ON DELETE SET NULL,
  note TEXT,
  createdAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  location TEXT,
  transferID INTEGER REFERENCES stock_transfers(id) ON DELETE CASCADE,
  purchaseLineID INTEGER REFERENCES purchase_order_lines(id),
  unitCostCents INTEGER CHECK (unitCostCents BETWEEN 0 AND 999999999),
  averageCostCents INTEGER CHECK (averageCostCents BETWEEN 0 AND 999999999),
  requestKey TEXT,
  overReceipt TEXT,
  reversesID INTEGER REFERENCES stock_movements(id),
  shipmentLineID INTEGER REFERENCES shipment_lines(id),
  returnLineID INTEGER REFERENCES return_lines(id),
  CHECK ((transferID IS NULL) = (reason NOT IN ('transferOut', 'transferIn'))),
  CHECK (reason <> 'transferOut' OR delta < 0),
  CHECK (reason <> 'transferIn' OR delta > 0),
  CHECK ((purchaseLineID IS NULL) = (reason NOT IN ('purchaseReceipt', 'receiptReversal'))),
  CHECK (reason <> 'purchaseReceipt' OR delta > 0),
  CHECK ((reversesID IS NULL) = (reason <> 'receiptReversal')),
  CHECK (reason <> 'receiptReversal' OR delta < 0),
  CHECK (overReceipt IS NULL OR (reason = 'purchaseReceipt' AND trim(overReceipt) <> '')),
  CHECK ((returnLineID IS NULL) = (reason <> 'returned')),
  CHECK (reason <> 'returned' OR delta > 0));
CREATE INDEX stock_movements_on_productID ON stock_movements(productID, createdAt);
CREATE INDEX stock_movements_on_orderID ON stock_movements(orderID);
CREATE INDEX stock_movements_on_employeeID ON stock_movements(employeeID);
CREATE INDEX stock_movements_on_createdAt ON stock_movements(createdAt);
CREATE UNIQUE INDEX stock_movements_one_per_transfer ON stock_movements(transferID, reason)
  WHERE transferID IS NOT NULL;
CREATE INDEX stock_movements_on_purchaseLineID ON stock_movements(purchaseLineID)
  WHERE purchaseLineID IS NOT NULL;
CREATE INDEX stock_movements_on_reversesID ON stock_movements(reversesID) WHERE reversesID IS NOT NULL;
CREATE INDEX stock_movements_costs ON stock_movements(productID, location, id)
  WHERE averageCostCents IS NOT NULL;
CREATE UNIQUE INDEX stock_movements_one_reversal ON stock_movements(reversesID, ifnull(location, ''))
  WHERE reversesID IS NOT NULL;
CREATE UNIQUE INDEX stock_movements_once_per_request ON stock_movements(requestKey, purchaseLineID, ifnull(location, ''))
  WHERE requestKey IS NOT NULL;
CREATE TRIGGER stock_movements_apply AFTER INSERT ON stock_movements WHEN NEW.location IS NULL BEGIN
  UPDATE products SET unitsInStock = unitsInStock + NEW.delta WHERE id = NEW.productID;
  UPDATE change_log SET localOnly = 1 WHERE seq = (SELECT max(seq) FROM change_log) AND tableName = 'products';
END;
CREATE TRIGGER stock_movements_apply_elsewhere AFTER INSERT ON stock_movements WHEN NEW.location IS NOT NULL BEGIN
  INSERT INTO stock_levels (location, productID, units) VALUES (NEW.location, NEW.productID, NEW.delta)
  ON CONFLICT (location, productID) DO UPDATE SET units = units + excluded.units;
END;
CREATE TRIGGER stock_movements_log_insert AFTER INSERT ON stock_movements BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('stock_movements', NEW.recordID, 'insert');
END;
CREATE TRIGGER stock_movements_log_update AFTER UPDATE ON stock_movements BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('stock_movements', NEW.recordID, 'update');
END;
CREATE TRIGGER stock_movements_log_delete AFTER DELETE ON stock_movements BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('stock_movements', OLD.recordID, 'delete');
END;
CREATE TRIGGER stock_movements_recordID_immutable BEFORE UPDATE OF recordID ON stock_movements
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER stock_movements_never_deleted BEFORE DELETE ON stock_movements BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a stock movement is never deleted; correct it with another movement');
END;
CREATE TRIGGER products_keep_their_ledger BEFORE DELETE ON products
WHEN EXISTS (SELECT 1 FROM stock_movements WHERE productID = OLD.id)
  OR EXISTS (SELECT 1 FROM stock_levels WHERE productID = OLD.id AND units <> 0) BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a product with stock movements is never deleted; discontinue it');
END;
CREATE TRIGGER stock_transfers_keep_their_ledger BEFORE DELETE ON stock_transfers
WHEN EXISTS (SELECT 1 FROM stock_movements WHERE transferID = OLD.id) BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a stock transfer with movements is never deleted');
END;
CREATE TRIGGER purchase_order_lines_on_order_insert AFTER INSERT ON purchase_order_lines BEGIN
  UPDATE products SET unitsOnOrder = (SELECT ifnull(sum(max(l.quantity - ifnull((SELECT sum(m.delta) FROM stock_movements m
     WHERE m.purchaseLineID = l.id AND m.location IS NULL), 0), 0)), 0)
   FROM purchase_order_lines l JOIN purchase_orders p ON p.id = l.purchaseOrderID
   WHERE l.productID = products.id AND p.location IS NULL AND p.status IN ('sent', 'partiallyReceived')) WHERE id = NEW.productID;
  UPDATE change_log SET localOnly = 1 WHERE seq = (SELECT max(seq) FROM change_log
    WHERE tableName = 'products' AND recordID = (SELECT recordID FROM products WHERE id = NEW.productID));
END;
CREATE TRIGGER purchase_order_lines_on_order_update AFTER UPDATE OF quantity, productID, purchaseOrderID
ON purchase_order_lines BEGIN
  UPDATE products SET unitsOnOrder = (SELECT ifnull(sum(max(l.quantity - ifnull((SELECT sum(m.delta) FROM stock_movements m
     WHERE m.purchaseLineID = l.id AND m.location IS NULL), 0), 0)), 0)
   FROM purchase_order_lines l JOIN purchase_orders p ON p.id = l.purchaseOrderID
   WHERE l.productID = products.id AND p.location IS NULL AND p.status IN ('sent', 'partiallyReceived')) WHERE id = OLD.productID;
  UPDATE change_log SET localOnly = 1 WHERE seq = (SELECT max(seq) FROM change_log
    WHERE tableName = 'products' AND recordID = (SELECT recordID FROM products WHERE id = OLD.productID));
  UPDATE products SET unitsOnOrder = (SELECT ifnull(sum(max(l.quantity - ifnull((SELECT sum(m.delta) FROM stock_movements m
     WHERE m.purchaseLineID = l.id AND m.location IS NULL), 0), 0)), 0)
   FROM purchase_order_lines l JOIN purchase_orders p ON p.id = l.purchaseOrderID
   WHERE l.productID = products.id AND p.location IS NULL AND p.status IN ('sent', 'partiallyReceived')) WHERE id = NEW.productID;
  UPDATE change_log SET localOnly = 1 WHERE seq = (SELECT max(seq) FROM change_log
    WHERE tableName = 'products' AND recordID = (SELECT recordID FROM products WHERE id = NEW.productID));
END;
CREATE TRIGGER purchase_order_lines_on_order_delete AFTER DELETE ON purchase_order_lines BEGIN
  UPDATE products SET unitsOnOrder = (SELECT ifnull(sum(max(l.quantity - ifnull((SELECT sum(m.delta) FROM stock_movements m
     WHERE m.purchaseLineID = l.id AND m.location IS NULL), 0), 0)), 0)
   FROM purchase_order_lines l JOIN purchase_orders p ON p.id = l.purchaseOrderID
   WHERE l.productID = products.id AND p.location IS NULL AND p.status IN ('sent', 'partiallyReceived')) WHERE id = OLD.productID;
  UPDATE change_log SET localOnly = 1 WHERE seq = (SELECT max(seq) FROM change_log
    WHERE tableName = 'products' AND recordID = (SELECT recordID FROM products WHERE id = OLD.productID));
END;
CREATE TRIGGER purchase_orders_on_order AFTER UPDATE OF status, location ON purchase_orders BEGIN
  UPDATE products SET unitsOnOrder = (SELECT ifnull(sum(max(l.quantity - ifnull((SELECT sum(m.delta) FROM stock_movements m
     WHERE m.purchaseLineID = l.id AND m.location IS NULL), 0), 0)), 0)
   FROM purchase_order_lines l JOIN purchase_orders p ON p.id = l.purchaseOrderID
   WHERE l.productID = products.id AND p.location IS NULL AND p.status IN ('sent', 'partiallyReceived'))
    WHERE id IN (SELECT productID FROM purchase_order_lines WHERE purchaseOrderID = NEW.id);
  UPDATE change_log SET localOnly = 1 WHERE seq IN (SELECT (SELECT max(seq) FROM change_log c
    WHERE c.tableName = 'products' AND c.recordID = p.recordID) FROM products p
    WHERE p.id IN (SELECT productID FROM purchase_order_lines WHERE purchaseOrderID = NEW.id));
END;
CREATE TRIGGER stock_movements_on_order AFTER INSERT ON stock_movements
WHEN NEW.purchaseLineID IS NOT NULL AND NEW.location IS NULL BEGIN
  UPDATE products SET unitsOnOrder = (SELECT ifnull(sum(max(l.quantity - ifnull((SELECT sum(m.delta) FROM stock_movements m
     WHERE m.purchaseLineID = l.id AND m.location IS NULL), 0), 0)), 0)
   FROM purchase_order_lines l JOIN purchase_orders p ON p.id = l.purchaseOrderID
   WHERE l.productID = products.id AND p.location IS NULL AND p.status IN ('sent', 'partiallyReceived')) WHERE id = NEW.productID;
  UPDATE change_log SET localOnly = 1 WHERE seq = (SELECT max(seq) FROM change_log
    WHERE tableName = 'products' AND recordID = (SELECT recordID FROM products WHERE id = NEW.productID));
END;
CREATE UNIQUE INDEX stock_movements_one_per_shipment_line ON stock_movements(shipmentLineID)
  WHERE shipmentLineID IS NOT NULL;
CREATE TRIGGER shipment_lines_within_order BEFORE INSERT ON shipment_lines
WHEN NEW.quantity + ifnull((SELECT sum(quantity) FROM shipment_lines WHERE orderLineID = NEW.orderLineID), 0)
  + ifnull((SELECT -sum(m.delta) FROM stock_movements m JOIN order_lines l ON l.id = NEW.orderLineID
      WHERE m.reason = 'shipped' AND m.shipmentLineID IS NULL AND m.orderID = l.orderID AND m.productID = l.productID), 0)
  > (SELECT quantity FROM order_lines WHERE id = NEW.orderLineID) BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a shipment would ship more of an order line than was ordered');
END;
CREATE TRIGGER stock_movements_ship_once BEFORE INSERT ON stock_movements
WHEN NEW.reason = 'shipped' AND NEW.orderID IS NOT NULL AND (
  (NEW.shipmentLineID IS NULL AND EXISTS (SELECT 1 FROM stock_movements
    WHERE reason = 'shipped' AND orderID = NEW.orderID AND productID = NEW.productID))
  OR -NEW.delta + ifnull((SELECT -sum(delta) FROM stock_movements
    WHERE reason = 'shipped' AND orderID = NEW.orderID AND productID = NEW.productID), 0)
    > (SELECT quantity FROM order_lines WHERE orderID = NEW.orderID AND productID = NEW.productID)) BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: this order line has shipped already');
END;
CREATE TRIGGER stock_movements_match_their_shipment_line BEFORE INSERT ON stock_movements
WHEN NEW.shipmentLineID IS NOT NULL AND (NEW.reason IS NOT 'shipped'
  OR NOT EXISTS (SELECT 1 FROM shipment_lines s JOIN shipments h ON h.id = s.shipmentID
    JOIN order_lines l ON l.id = s.orderLineID
    WHERE s.id = NEW.shipmentLineID AND h.orderID IS NEW.orderID AND l.productID IS NEW.productID
      AND -NEW.delta = s.quantity)) BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a shipment line''s movement ships its product and quantity, for its order');
END;
CREATE UNIQUE INDEX stock_movements_one_per_return_line ON stock_movements(returnLineID) WHERE returnLineID IS NOT NULL;
CREATE TRIGGER stock_movements_never_changed
BEFORE UPDATE OF delta, productID, reason, shipmentLineID, returnLineID ON stock_movements
WHEN NEW.delta IS NOT OLD.delta OR NEW.productID IS NOT OLD.productID OR NEW.reason IS NOT OLD.reason
  OR NEW.shipmentLineID IS NOT OLD.shipmentLineID OR NEW.returnLineID IS NOT OLD.returnLineID BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a stock movement is never changed; correct it with another movement');
END;
CREATE TRIGGER returns_log_insert AFTER INSERT ON returns BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('returns', NEW.recordID, 'insert');
END;
CREATE TRIGGER returns_log_update AFTER UPDATE ON returns BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('returns', NEW.recordID, 'update');
END;
CREATE TRIGGER returns_log_delete AFTER DELETE ON returns BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('returns', OLD.recordID, 'delete');
END;
CREATE TRIGGER returns_recordID_immutable BEFORE UPDATE OF recordID ON returns
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER return_lines_log_insert AFTER INSERT ON return_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('return_lines', NEW.recordID, 'insert');
END;
CREATE TRIGGER return_lines_log_update AFTER UPDATE ON return_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('return_lines', NEW.recordID, 'update');
END;
CREATE TRIGGER return_lines_log_delete AFTER DELETE ON return_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('return_lines', OLD.recordID, 'delete');
END;
CREATE TRIGGER return_lines_recordID_immutable BEFORE UPDATE OF recordID ON return_lines
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER invoices_log_insert AFTER INSERT ON invoices BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('invoices', NEW.recordID, 'insert');
END;
CREATE TRIGGER invoices_log_update AFTER UPDATE ON invoices BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('invoices', NEW.recordID, 'update');
END;
CREATE TRIGGER invoices_log_delete AFTER DELETE ON invoices BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('invoices', OLD.recordID, 'delete');
END;
CREATE TRIGGER invoices_recordID_immutable BEFORE UPDATE OF recordID ON invoices
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER invoice_lines_log_insert AFTER INSERT ON invoice_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('invoice_lines', NEW.recordID, 'insert');
END;
CREATE TRIGGER invoice_lines_log_update AFTER UPDATE ON invoice_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('invoice_lines', NEW.recordID, 'update');
END;
CREATE TRIGGER invoice_lines_log_delete AFTER DELETE ON invoice_lines BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('invoice_lines', OLD.recordID, 'delete');
END;
CREATE TRIGGER invoice_lines_recordID_immutable BEFORE UPDATE OF recordID ON invoice_lines
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER return_lines_within_shipment BEFORE INSERT ON return_lines
WHEN NOT EXISTS (SELECT 1 FROM shipment_lines s JOIN returns r ON r.shipmentID = s.shipmentID
    WHERE s.id = NEW.shipmentLineID AND r.id = NEW.returnID)
  OR NEW.quantity + ifnull((SELECT sum(quantity) FROM return_lines WHERE shipmentLineID = NEW.shipmentLineID), 0)
    > (SELECT quantity FROM shipment_lines WHERE id = NEW.shipmentLineID) BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a return would take back more of a shipment line than it carried');
END;
CREATE TRIGGER stock_movements_match_their_return_line BEFORE INSERT ON stock_movements
WHEN NEW.returnLineID IS NOT NULL AND NOT EXISTS (SELECT 1 FROM return_lines r
    JOIN shipment_lines s ON s.id = r.shipmentLineID JOIN order_lines l ON l.id = s.orderLineID
    WHERE r.id = NEW.returnLineID AND l.productID IS NEW.productID AND NEW.delta = r.quantity) BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a return line''s movement books its product and quantity back');
END;
CREATE TRIGGER invoices_never_changed BEFORE UPDATE ON invoices
WHEN NEW.kind IS NOT OLD.kind OR NEW.site IS NOT OLD.site OR NEW.year IS NOT OLD.year OR NEW.counter IS NOT OLD.counter
  OR NEW.number IS NOT OLD.number OR NEW.orderID IS NOT OLD.orderID OR NEW.shipmentID IS NOT OLD.shipmentID
  OR NEW.returnID IS NOT OLD.returnID OR NEW.correctsID IS NOT OLD.correctsID OR NEW.rounding IS NOT OLD.rounding
  OR NEW.grossCents IS NOT OLD.grossCents OR NEW.netCents IS NOT OLD.netCents OR NEW.taxCents IS NOT OLD.taxCents
  OR NEW.rendition IS NOT OLD.rendition OR NEW.seller IS NOT OLD.seller OR NEW.buyer IS NOT OLD.buyer
  OR NEW.issuedDate IS NOT OLD.issuedDate OR NEW.createdAt IS NOT OLD.createdAt BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: an issued invoice or credit note never changes; correct it with a credit note');
END;
CREATE TRIGGER invoice_lines_never_changed BEFORE UPDATE ON invoice_lines
WHEN NEW.invoiceID IS NOT OLD.invoiceID OR NEW.position IS NOT OLD.position OR NEW.shipmentLineID IS NOT OLD.shipmentLineID
  OR NEW.productID IS NOT OLD.productID OR NEW.description IS NOT OLD.description OR NEW.quantity IS NOT OLD.quantity
  OR NEW.unitPriceCents IS NOT OLD.unitPriceCents OR NEW.discountBasisPoints IS NOT OLD.discountBasisPoints
  OR NEW.netCents IS NOT OLD.netCents OR NEW.taxBasisPoints IS NOT OLD.taxBasisPoints OR NEW.taxName IS NOT OLD.taxName
  OR NEW.taxCents IS NOT OLD.taxCents BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: an issued invoice''s line never changes');
END;
CREATE TRIGGER returns_never_changed BEFORE UPDATE ON returns
WHEN NEW.shipmentID IS NOT OLD.shipmentID OR NEW.sequence IS NOT OLD.sequence OR NEW.returnedDate IS NOT OLD.returnedDate
  OR NEW.reason IS NOT OLD.reason BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a return is never changed');
END;
CREATE TRIGGER returns_never_deleted BEFORE DELETE ON returns BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a return is never deleted');
END;
CREATE TRIGGER return_lines_never_changed BEFORE UPDATE ON return_lines
WHEN NEW.returnID IS NOT OLD.returnID OR NEW.shipmentLineID IS NOT OLD.shipmentLineID OR NEW.quantity IS NOT OLD.quantity BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a return line is never changed');
END;
CREATE TRIGGER return_lines_never_deleted BEFORE DELETE ON return_lines BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: a return line is never deleted');
END;
CREATE TABLE record_offers (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  site TEXT NOT NULL CHECK (length(site) BETWEEN 1 AND 40),
  zoneName TEXT NOT NULL CHECK (length(zoneName) BETWEEN 1 AND 64),
  recordType TEXT NOT NULL CHECK (length(recordType) BETWEEN 1 AND 64),
  recordName TEXT NOT NULL CHECK (length(recordName) BETWEEN 1 AND 255),
  changeTag TEXT NOT NULL CHECK (length(changeTag) <= 255),
  body TEXT NOT NULL CHECK (length(body) BETWEEN 2 AND 400000),
  createdAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (site, zoneName, recordName, changeTag));
CREATE INDEX record_offers_on_zoneName ON record_offers(zoneName, recordName);
CREATE TABLE record_offer_answers (
  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))),
  site TEXT NOT NULL CHECK (length(site) BETWEEN 1 AND 40),
  offerID INTEGER NOT NULL REFERENCES record_offers(id) ON DELETE CASCADE,
  accepted INTEGER NOT NULL CHECK (accepted IN (0, 1)),
  reason TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 1000),
  createdAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (offerID, site));
CREATE TRIGGER record_offers_log_insert AFTER INSERT ON record_offers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('record_offers', NEW.recordID, 'insert');
END;
CREATE TRIGGER record_offers_log_update AFTER UPDATE ON record_offers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('record_offers', NEW.recordID, 'update');
END;
CREATE TRIGGER record_offers_log_delete AFTER DELETE ON record_offers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('record_offers', OLD.recordID, 'delete');
END;
CREATE TRIGGER record_offers_recordID_immutable BEFORE UPDATE OF recordID ON record_offers
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TRIGGER record_offer_answers_log_insert AFTER INSERT ON record_offer_answers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('record_offer_answers', NEW.recordID, 'insert');
END;
CREATE TRIGGER record_offer_answers_log_update AFTER UPDATE ON record_offer_answers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('record_offer_answers', NEW.recordID, 'update');
END;
CREATE TRIGGER record_offer_answers_log_delete AFTER DELETE ON record_offer_answers BEGIN
  INSERT INTO change_log (tableName, recordID, operation) VALUES ('record_offer_answers', OLD.recordID, 'delete');
END;
CREATE TRIGGER record_offer_answers_recordID_immutable BEFORE UPDATE OF recordID ON record_offer_answers
WHEN NEW.recordID IS NOT OLD.recordID BEGIN
  SELECT RAISE(ABORT, 'recordID is immutable');
END;
CREATE TABLE product_year_sales (
  basis TEXT NOT NULL CHECK (basis IN ('ordered', 'shipped')),
  year INTEGER NOT NULL,
  productID INTEGER NOT NULL,
  cancelled INTEGER NOT NULL,
  lineCount INTEGER NOT NULL,
  quantity INTEGER NOT NULL,
  amountCents INTEGER NOT NULL,
  PRIMARY KEY (basis, year, productID, cancelled)) WITHOUT ROWID;
CREATE TABLE customer_year_sales (
  year INTEGER NOT NULL,
  customerID INTEGER NOT NULL,
  cancelled INTEGER NOT NULL,
  orders INTEGER NOT NULL,
  linedOrders INTEGER NOT NULL,
  amountCents INTEGER NOT NULL,
  PRIMARY KEY (year, customerID, cancelled)) WITHOUT ROWID;
CREATE TABLE employee_year_sales (
  year INTEGER NOT NULL,
  employeeID INTEGER NOT NULL,
  cancelled INTEGER NOT NULL,
  linedOrders INTEGER NOT NULL,
  amountCents INTEGER NOT NULL,
  PRIMARY KEY (year, employeeID, cancelled)) WITHOUT ROWID;
CREATE TRIGGER order_lines_summary_insert AFTER INSERT ON order_lines BEGIN
  INSERT INTO order_totals (orderID, lineCount, amountCents) VALUES (NEW.orderID, 1, NEW.extendedPriceCents)
    ON CONFLICT (orderID) DO UPDATE SET lineCount = lineCount + 1, amountCents = amountCents + excluded.amountCents;
  INSERT INTO product_year_sales (basis, year, productID, cancelled, lineCount, quantity, amountCents)
  SELECT 'ordered', CAST(substr(o.orderDate, 1, 4) AS INTEGER), x.productID, o.status = 'cancelled', +1, +x.quantity, +x.cents FROM (SELECT NEW.productID AS productID, NEW.quantity AS quantity, NEW.extendedPriceCents AS cents) x, orders o WHERE o.id = NEW.orderID
  UNION ALL
  SELECT 'shipped', CAST(substr(o.shippedDate, 1, 4) AS INTEGER), x.productID, o.status = 'cancelled', +1, +x.quantity, +x.cents FROM (SELECT NEW.productID AS productID, NEW.quantity AS quantity, NEW.extendedPriceCents AS cents) x, orders o WHERE o.id = NEW.orderID AND o.shippedDate IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    amountCents = amountCents + excluded.amountCents;
END;
CREATE TRIGGER order_lines_summary_delete AFTER DELETE ON order_lines BEGIN
  UPDATE order_totals SET lineCount = lineCount - 1, amountCents = amountCents - OLD.extendedPriceCents
    WHERE orderID = OLD.orderID;
  DELETE FROM order_totals WHERE orderID = OLD.orderID AND lineCount = 0;
  INSERT INTO product_year_sales (basis, year, productID, cancelled, lineCount, quantity, amountCents)
  SELECT 'ordered', CAST(substr(o.orderDate, 1, 4) AS INTEGER), x.productID, o.status = 'cancelled', -1, -x.quantity, -x.cents FROM (SELECT OLD.productID AS productID, OLD.quantity AS quantity, OLD.extendedPriceCents AS cents) x, orders o WHERE o.id = OLD.orderID
  UNION ALL
  SELECT 'shipped', CAST(substr(o.shippedDate, 1, 4) AS INTEGER), x.productID, o.status = 'cancelled', -1, -x.quantity, -x.cents FROM (SELECT OLD.productID AS productID, OLD.quantity AS quantity, OLD.extendedPriceCents AS cents) x, orders o WHERE o.id = OLD.orderID AND o.shippedDate IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    amountCents = amountCents + excluded.amountCents;
END;
CREATE TRIGGER order_lines_summary_update AFTER UPDATE OF orderID, productID, quantity, extendedPriceCents
ON order_lines BEGIN
  UPDATE order_totals SET lineCount = lineCount - 1, amountCents = amountCents - OLD.extendedPriceCents
    WHERE orderID = OLD.orderID;
  DELETE FROM order_totals WHERE orderID = OLD.orderID AND lineCount = 0;
  INSERT INTO order_totals (orderID, lineCount, amountCents) VALUES (NEW.orderID, 1, NEW.extendedPriceCents)
    ON CONFLICT (orderID) DO UPDATE SET lineCount = lineCount + 1, amountCents = amountCents + excluded.amountCents;
  INSERT INTO product_year_sales (basis, year, productID, cancelled, lineCount, quantity, amountCents)
  SELECT 'ordered', CAST(substr(o.orderDate, 1, 4) AS INTEGER), x.productID, o.status = 'cancelled', -1, -x.quantity, -x.cents FROM (SELECT OLD.productID AS productID, OLD.quantity AS quantity, OLD.extendedPriceCents AS cents) x, orders o WHERE o.id = OLD.orderID
  UNION ALL
  SELECT 'shipped', CAST(substr(o.shippedDate, 1, 4) AS INTEGER), x.productID, o.status = 'cancelled', -1, -x.quantity, -x.cents FROM (SELECT OLD.productID AS productID, OLD.quantity AS quantity, OLD.extendedPriceCents AS cents) x, orders o WHERE o.id = OLD.orderID AND o.shippedDate IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    amountCents = amountCents + excluded.amountCents;
  INSERT INTO product_year_sales (basis, year, productID, cancelled, lineCount, quantity, amountCents)
  SELECT 'ordered', CAST(substr(o.orderDate, 1, 4) AS INTEGER), x.productID, o.status = 'cancelled', +1, +x.quantity, +x.cents FROM (SELECT NEW.productID AS productID, NEW.quantity AS quantity, NEW.extendedPriceCents AS cents) x, orders o WHERE o.id = NEW.orderID
  UNION ALL
  SELECT 'shipped', CAST(substr(o.shippedDate, 1, 4) AS INTEGER), x.productID, o.status = 'cancelled', +1, +x.quantity, +x.cents FROM (SELECT NEW.productID AS productID, NEW.quantity AS quantity, NEW.extendedPriceCents AS cents) x, orders o WHERE o.id = NEW.orderID AND o.shippedDate IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    amountCents = amountCents + excluded.amountCents;
END;
CREATE TRIGGER order_totals_summary_insert AFTER INSERT ON order_totals BEGIN
  INSERT INTO customer_year_sales (year, customerID, cancelled, orders, linedOrders, amountCents)
  SELECT CAST(substr(o.orderDate, 1, 4) AS INTEGER), o.customerID, o.status = 'cancelled', 0, 1, NEW.amountCents FROM orders o WHERE o.id = NEW.orderID
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, linedOrders = linedOrders + excluded.linedOrders,
    amountCents = amountCents + excluded.amountCents;
INSERT INTO employee_year_sales (year, employeeID, cancelled, linedOrders, amountCents)
  SELECT CAST(substr(o.orderDate, 1, 4) AS INTEGER), o.employeeID, o.status = 'cancelled', 1, NEW.amountCents FROM orders o WHERE o.id = NEW.orderID
    AND o.employeeID IS NOT NULL
  ON CONFLICT DO UPDATE SET linedOrders = linedOrders + excluded.linedOrders, amountCents = amountCents + excluded.amountCents;
END;
CREATE TRIGGER order_totals_summary_update AFTER UPDATE ON order_totals BEGIN
  INSERT INTO customer_year_sales (year, customerID, cancelled, orders, linedOrders, amountCents)
  SELECT CAST(substr(o.orderDate, 1, 4) AS INTEGER), o.customerID, o.status = 'cancelled', 0, 0, NEW.amountCents - OLD.amountCents FROM orders o WHERE o.id = NEW.orderID
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, linedOrders = linedOrders + excluded.linedOrders,
    amountCents = amountCents + excluded.amountCents;
INSERT INTO employee_year_sales (year, employeeID, cancelled, linedOrders, amountCents)
  SELECT CAST(substr(o.orderDate, 1, 4) AS INTEGER), o.employeeID, o.status = 'cancelled', 0, NEW.amountCents - OLD.amountCents FROM orders o WHERE o.id = NEW.orderID
    AND o.employeeID IS NOT NULL
  ON CONFLICT DO UPDATE SET linedOrders = linedOrders + excluded.linedOrders, amountCents = amountCents + excluded.amountCents;
END;
CREATE TRIGGER order_totals_summary_delete AFTER DELETE ON order_totals BEGIN
  INSERT INTO customer_year_sales (year, customerID, cancelled, orders, linedOrders, amountCents)
  SELECT CAST(substr(o.orderDate, 1, 4) AS INTEGER), o.customerID, o.status = 'cancelled', 0, -1, -OLD.amountCents FROM orders o WHERE o.id = OLD.orderID
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, linedOrders = linedOrders + excluded.linedOrders,
    amountCents = amountCents + excluded.amountCents;
INSERT INTO employee_year_sales (year, employeeID, cancelled, linedOrders, amountCents)
  SELECT CAST(substr(o.orderDate, 1, 4) AS INTEGER), o.employeeID, o.status = 'cancelled', -1, -OLD.amountCents FROM orders o WHERE o.id = OLD.orderID
    AND o.employeeID IS NOT NULL
  ON CONFLICT DO UPDATE SET linedOrders = linedOrders + excluded.linedOrders, amountCents = amountCents + excluded.amountCents;
END;
CREATE TRIGGER orders_summary_insert AFTER INSERT ON orders BEGIN
  INSERT INTO customer_year_sales (year, customerID, cancelled, orders, linedOrders, amountCents)
  SELECT CAST(substr(NEW.orderDate, 1, 4) AS INTEGER), NEW.customerID, NEW.status = 'cancelled', 1, 0, 0 WHERE 1
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, linedOrders = linedOrders + excluded.linedOrders,
    amountCents = amountCents + excluded.amountCents;
INSERT INTO employee_year_sales (year, employeeID, cancelled, linedOrders, amountCents)
  SELECT CAST(substr(NEW.orderDate, 1, 4) AS INTEGER), NEW.employeeID, NEW.status = 'cancelled', 0, 0 WHERE 1
    AND NEW.employeeID IS NOT NULL
  ON CONFLICT DO UPDATE SET linedOrders = linedOrders + excluded.linedOrders, amountCents = amountCents + excluded.amountCents;
END;
CREATE TRIGGER orders_summary_delete BEFORE DELETE ON orders BEGIN
  INSERT INTO customer_year_sales (year, customerID, cancelled, orders, linedOrders, amountCents)
  SELECT CAST(substr(OLD.orderDate, 1, 4) AS INTEGER), OLD.customerID, OLD.status = 'cancelled', -1, 0, 0 WHERE 1
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, linedOrders = linedOrders + excluded.linedOrders,
    amountCents = amountCents + excluded.amountCents;
INSERT INTO employee_year_sales (year, employeeID, cancelled, linedOrders, amountCents)
  SELECT CAST(substr(OLD.orderDate, 1, 4) AS INTEGER), OLD.employeeID, OLD.status = 'cancelled', 0, 0 WHERE 1
    AND OLD.employeeID IS NOT NULL
  ON CONFLICT DO UPDATE SET linedOrders = linedOrders + excluded.linedOrders, amountCents = amountCents + excluded.amountCents;
  INSERT INTO customer_year_sales (year, customerID, cancelled, orders, linedOrders, amountCents)
  SELECT CAST(substr(OLD.orderDate, 1, 4) AS INTEGER), OLD.customerID, OLD.status = 'cancelled', 0, -1, -t.amountCents FROM order_totals t WHERE t.orderID = OLD.id
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, linedOrders = linedOrders + excluded.linedOrders,
    amountCents = amountCents + excluded.amountCents;
INSERT INTO employee_year_sales (year, employeeID, cancelled, linedOrders, amountCents)
  SELECT CAST(substr(OLD.orderDate, 1, 4) AS INTEGER), OLD.employeeID, OLD.status = 'cancelled', -1, -t.amountCents FROM order_totals t WHERE t.orderID = OLD.id
    AND OLD.employeeID IS NOT NULL
  ON CONFLICT DO UPDATE SET linedOrders = linedOrders + excluded.linedOrders, amountCents = amountCents + excluded.amountCents;
  INSERT INTO product_year_sales (basis, year, productID, cancelled, lineCount, quantity, amountCents)
  SELECT 'ordered', CAST(substr(OLD.orderDate, 1, 4) AS INTEGER), x.productID, OLD.status = 'cancelled', -1, -x.quantity, -x.cents FROM (SELECT productID, quantity, extendedPriceCents AS cents FROM order_lines WHERE orderID = OLD.id) x WHERE 1
  UNION ALL
  SELECT 'shipped', CAST(substr(OLD.shippedDate, 1, 4) AS INTEGER), x.productID, OLD.status = 'cancelled', -1, -x.quantity, -x.cents FROM (SELECT productID, quantity, extendedPriceCents AS cents FROM order_lines WHERE orderID = OLD.id) x WHERE 1 AND OLD.shippedDate IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    amountCents = amountCents + excluded.amountCents;
END;
CREATE TRIGGER orders_summary_update AFTER UPDATE OF orderDate, status, customerID, employeeID ON orders
WHEN NEW.orderDate IS NOT OLD.orderDate OR NEW.status IS NOT OLD.status
  OR NEW.customerID IS NOT OLD.customerID OR NEW.employeeID IS NOT OLD.employeeID BEGIN
  INSERT INTO customer_year_sales (year, customerID, cancelled, orders, linedOrders, amountCents)
  SELECT CAST(substr(OLD.orderDate, 1, 4) AS INTEGER), OLD.customerID, OLD.status = 'cancelled', -1, 0, 0 WHERE 1
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, linedOrders = linedOrders + excluded.linedOrders,
    amountCents = amountCents + excluded.amountCents;
INSERT INTO employee_year_sales (year, employeeID, cancelled, linedOrders, amountCents)
  SELECT CAST(substr(OLD.orderDate, 1, 4) AS INTEGER), OLD.employeeID, OLD.status = 'cancelled', 0, 0 WHERE 1
    AND OLD.employeeID IS NOT NULL
  ON CONFLICT DO UPDATE SET linedOrders = linedOrders + excluded.linedOrders, amountCents = amountCents + excluded.amountCents;
  INSERT INTO customer_year_sales (year, customerID, cancelled, orders, linedOrders, amountCents)
  SELECT CAST(substr(OLD.orderDate, 1, 4) AS INTEGER), OLD.customerID, OLD.status = 'cancelled', 0, -1, -t.amountCents FROM order_totals t WHERE t.orderID = OLD.id
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, linedOrders = linedOrders + excluded.linedOrders,
    amountCents = amountCents + excluded.amountCents;
INSERT INTO employee_year_sales (year, employeeID, cancelled, linedOrders, amountCents)
  SELECT CAST(substr(OLD.orderDate, 1, 4) AS INTEGER), OLD.employeeID, OLD.status = 'cancelled', -1, -t.amountCents FROM order_totals t WHERE t.orderID = OLD.id
    AND OLD.employeeID IS NOT NULL
  ON CONFLICT DO UPDATE SET linedOrders = linedOrders + excluded.linedOrders, amountCents = amountCents + excluded.amountCents;
  INSERT INTO customer_year_sales (year, customerID, cancelled, orders, linedOrders, amountCents)
  SELECT CAST(substr(NEW.orderDate, 1, 4) AS INTEGER), NEW.customerID, NEW.status = 'cancelled', 1, 0, 0 WHERE 1
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, linedOrders = linedOrders + excluded.linedOrders,
    amountCents = amountCents + excluded.amountCents;
INSERT INTO employee_year_sales (year, employeeID, cancelled, linedOrders, amountCents)
  SELECT CAST(substr(NEW.orderDate, 1, 4) AS INTEGER), NEW.employeeID, NEW.status = 'cancelled', 0, 0 WHERE 1
    AND NEW.employeeID IS NOT NULL
  ON CONFLICT DO UPDATE SET linedOrders = linedOrders + excluded.linedOrders, amountCents = amountCents + excluded.amountCents;
  INSERT INTO customer_year_sales (year, customerID, cancelled, orders, linedOrders, amountCents)
  SELECT CAST(substr(NEW.orderDate, 1, 4) AS INTEGER), NEW.customerID, NEW.status = 'cancelled', 0, 1, t.amountCents FROM order_totals t WHERE t.orderID = NEW.id
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, linedOrders = linedOrders + excluded.linedOrders,
    amountCents = amountCents + excluded.amountCents;
INSERT INTO employee_year_sales (year, employeeID, cancelled, linedOrders, amountCents)
  SELECT CAST(substr(NEW.orderDate, 1, 4) AS INTEGER), NEW.employeeID, NEW.status = 'cancelled', 1, t.amountCents FROM order_totals t WHERE t.orderID = NEW.id
    AND NEW.employeeID IS NOT NULL
  ON CONFLICT DO UPDATE SET linedOrders = linedOrders + excluded.linedOrders, amountCents = amountCents + excluded.amountCents;
END;
CREATE TRIGGER orders_summary_lines AFTER UPDATE OF orderDate, shippedDate, status ON orders
WHEN NEW.orderDate IS NOT OLD.orderDate OR NEW.shippedDate IS NOT OLD.shippedDate OR NEW.status IS NOT OLD.status BEGIN
  INSERT INTO product_year_sales (basis, year, productID, cancelled, lineCount, quantity, amountCents)
  SELECT 'ordered', CAST(substr(OLD.orderDate, 1, 4) AS INTEGER), x.productID, OLD.status = 'cancelled', -1, -x.quantity, -x.cents FROM (SELECT productID, quantity, extendedPriceCents AS cents FROM order_lines WHERE orderID = OLD.id) x WHERE 1
  UNION ALL
  SELECT 'shipped', CAST(substr(OLD.shippedDate, 1, 4) AS INTEGER), x.productID, OLD.status = 'cancelled', -1, -x.quantity, -x.cents FROM (SELECT productID, quantity, extendedPriceCents AS cents FROM order_lines WHERE orderID = OLD.id) x WHERE 1 AND OLD.shippedDate IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    amountCents = amountCents + excluded.amountCents;
  INSERT INTO product_year_sales (basis, year, productID, cancelled, lineCount, quantity, amountCents)
  SELECT 'ordered', CAST(substr(NEW.orderDate, 1, 4) AS INTEGER), x.productID, NEW.status = 'cancelled', +1, +x.quantity, +x.cents FROM (SELECT productID, quantity, extendedPriceCents AS cents FROM order_lines WHERE orderID = NEW.id) x WHERE 1
  UNION ALL
  SELECT 'shipped', CAST(substr(NEW.shippedDate, 1, 4) AS INTEGER), x.productID, NEW.status = 'cancelled', +1, +x.quantity, +x.cents FROM (SELECT productID, quantity, extendedPriceCents AS cents FROM order_lines WHERE orderID = NEW.id) x WHERE 1 AND NEW.shippedDate IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    amountCents = amountCents + excluded.amountCents;
END;
CREATE TABLE sync_removed (
  tableName TEXT NOT NULL,
  recordID TEXT NOT NULL,
  zoneName TEXT NOT NULL,
  body TEXT NOT NULL,
  removedAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (tableName, recordID));
CREATE INDEX sync_removed_on_removedAt ON sync_removed(removedAt);
CREATE TABLE sync_snapshot (
  zoneName TEXT NOT NULL,
  recordName TEXT NOT NULL,
  recordType TEXT NOT NULL,
  changeTag TEXT NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (zoneName, recordName)) WITHOUT ROWID;
CREATE INDEX sync_snapshot_on_recordType ON sync_snapshot(recordType);
CREATE TABLE product_year_margin (
  year INTEGER NOT NULL,
  productID INTEGER NOT NULL,
  lineCount INTEGER NOT NULL,
  quantity INTEGER NOT NULL,
  salesCents INTEGER NOT NULL,
  costCents INTEGER NOT NULL,
  uncostedLines INTEGER NOT NULL,
  PRIMARY KEY (year, productID)) WITHOUT ROWID;
CREATE TABLE order_day_fill (
  orderDate TEXT NOT NULL PRIMARY KEY,
  orders INTEGER NOT NULL,
  orderedUnits INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE shipped_day_fill (
  orderDate TEXT NOT NULL,
  lagDays INTEGER NOT NULL,
  units INTEGER NOT NULL,
  PRIMARY KEY (orderDate, lagDays)) WITHOUT ROWID;
CREATE TRIGGER orders_figures_summary_insert AFTER INSERT ON orders BEGIN
  INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, 1, ol.quantity, ol.extendedPriceCents,
         ifnull(m.cost, 0), (ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = NEW.id AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = NEW.id AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
INSERT INTO order_day_fill (orderDate, orders, orderedUnits)
  SELECT orderDate, 1, ordered FROM (
    SELECT o.orderDate, (SELECT SUM(quantity) FROM order_lines WHERE orderID = o.id AND id IS NOT NULL)
             + ifnull(o.cancelledUnits, 0) AS ordered
    FROM orders o WHERE o.id = NEW.id AND o.status <> 'cancelled')
  WHERE ordered > 0
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, orderedUnits = orderedUnits + excluded.orderedUnits;
INSERT INTO shipped_day_fill (orderDate, lagDays, units)
  SELECT o.orderDate, ifnull(CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(s.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), SUM(l.quantity)
  FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
  WHERE o.id = NEW.id AND o.status <> 'cancelled' AND s.id IS NOT NULL GROUP BY 1, 2
  UNION ALL
  SELECT o.orderDate, ifnull(CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(o.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), SUM(ol.quantity)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  WHERE o.id = NEW.id AND o.status = 'shipped' AND ol.id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = o.id AND id IS NOT NULL)
  GROUP BY 1, 2
  ON CONFLICT DO UPDATE SET units = units + excluded.units;
END;
CREATE TRIGGER orders_figures_summary_delete BEFORE DELETE ON orders BEGIN
  INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, -1, -ol.quantity, -ol.extendedPriceCents,
         -ifnull(m.cost, 0), -(ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = OLD.id AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = OLD.id AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
INSERT INTO order_day_fill (orderDate, orders, orderedUnits)
  SELECT orderDate, -1, -ordered FROM (
    SELECT o.orderDate, (SELECT SUM(quantity) FROM order_lines WHERE orderID = o.id AND id IS NOT NULL)
             + ifnull(o.cancelledUnits, 0) AS ordered
    FROM orders o WHERE o.id = OLD.id AND o.status <> 'cancelled')
  WHERE ordered > 0
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, orderedUnits = orderedUnits + excluded.orderedUnits;
INSERT INTO shipped_day_fill (orderDate, lagDays, units)
  SELECT o.orderDate, ifnull(CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(s.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), -SUM(l.quantity)
  FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
  WHERE o.id = OLD.id AND o.status <> 'cancelled' AND s.id IS NOT NULL GROUP BY 1, 2
  UNION ALL
  SELECT o.orderDate, ifnull(CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(o.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), -SUM(ol.quantity)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  WHERE o.id = OLD.id AND o.status = 'shipped' AND ol.id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = o.id AND id IS NOT NULL)
  GROUP BY 1, 2
  ON CONFLICT DO UPDATE SET units = units + excluded.units;
END;
CREATE TRIGGER orders_margin_summary_before BEFORE UPDATE OF shippedDate, status ON orders WHEN (OLD.status = 'shipped' OR NEW.status = 'shipped')
  AND (NEW.shippedDate IS NOT OLD.shippedDate OR NEW.status IS NOT OLD.status) BEGIN
  INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, -1, -ol.quantity, -ol.extendedPriceCents,
         -ifnull(m.cost, 0), -(ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = OLD.id AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = OLD.id AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
END;
CREATE TRIGGER orders_margin_summary_after AFTER UPDATE OF shippedDate, status ON orders WHEN (OLD.status = 'shipped' OR NEW.status = 'shipped')
  AND (NEW.shippedDate IS NOT OLD.shippedDate OR NEW.status IS NOT OLD.status) BEGIN
  INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, 1, ol.quantity, ol.extendedPriceCents,
         ifnull(m.cost, 0), (ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = OLD.id AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = OLD.id AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
END;
CREATE TRIGGER orders_fill_summary_before BEFORE UPDATE OF orderDate, shippedDate, status, cancelledUnits ON orders WHEN NEW.orderDate IS NOT OLD.orderDate OR (NEW.status = 'cancelled') IS NOT (OLD.status = 'cancelled')
  OR NEW.cancelledUnits IS NOT OLD.cancelledUnits
  OR (NEW.shippedDate IS NOT OLD.shippedDate AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = NEW.id)) BEGIN
  INSERT INTO order_day_fill (orderDate, orders, orderedUnits)
  SELECT orderDate, -1, -ordered FROM (
    SELECT o.orderDate, (SELECT SUM(quantity) FROM order_lines WHERE orderID = o.id AND id IS NOT NULL)
             + ifnull(o.cancelledUnits, 0) AS ordered
    FROM orders o WHERE o.id = OLD.id AND o.status <> 'cancelled')
  WHERE ordered > 0
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, orderedUnits = orderedUnits + excluded.orderedUnits;
INSERT INTO shipped_day_fill (orderDate, lagDays, units)
  SELECT o.orderDate, ifnull(CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(s.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), -SUM(l.quantity)
  FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
  WHERE o.id = OLD.id AND o.status <> 'cancelled' AND s.id IS NOT NULL GROUP BY 1, 2
  UNION ALL
  SELECT o.orderDate, ifnull(CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(o.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), -SUM(ol.quantity)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  WHERE o.id = OLD.id AND o.status = 'shipped' AND ol.id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = o.id AND id IS NOT NULL)
  GROUP BY 1, 2
  ON CONFLICT DO UPDATE SET units = units + excluded.units;
END;
CREATE TRIGGER orders_fill_summary_after AFTER UPDATE OF orderDate, shippedDate, status, cancelledUnits ON orders WHEN NEW.orderDate IS NOT OLD.orderDate OR (NEW.status = 'cancelled') IS NOT (OLD.status = 'cancelled')
  OR NEW.cancelledUnits IS NOT OLD.cancelledUnits
  OR (NEW.shippedDate IS NOT OLD.shippedDate AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = NEW.id)) BEGIN
  INSERT INTO order_day_fill (orderDate, orders, orderedUnits)
  SELECT orderDate, 1, ordered FROM (
    SELECT o.orderDate, (SELECT SUM(quantity) FROM order_lines WHERE orderID = o.id AND id IS NOT NULL)
             + ifnull(o.cancelledUnits, 0) AS ordered
    FROM orders o WHERE o.id = OLD.id AND o.status <> 'cancelled')
  WHERE ordered > 0
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, orderedUnits = orderedUnits + excluded.orderedUnits;
INSERT INTO shipped_day_fill (orderDate, lagDays, units)
  SELECT o.orderDate, ifnull(CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(s.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), SUM(l.quantity)
  FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
  WHERE o.id = OLD.id AND o.status <> 'cancelled' AND s.id IS NOT NULL GROUP BY 1, 2
  UNION ALL
  SELECT o.orderDate, ifnull(CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(o.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), SUM(ol.quantity)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  WHERE o.id = OLD.id AND o.status = 'shipped' AND ol.id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = o.id AND id IS NOT NULL)
  GROUP BY 1, 2
  ON CONFLICT DO UPDATE SET units = units + excluded.units;
END;
CREATE TRIGGER order_lines_ordered_summary_insert AFTER INSERT ON order_lines BEGIN
  INSERT INTO order_day_fill (orderDate, orders, orderedUnits)
  SELECT orderDate, -1, -ordered FROM (
    SELECT o.orderDate, (SELECT SUM(quantity) FROM order_lines WHERE orderID = o.id AND id IS NOT NEW.id)
             + ifnull(o.cancelledUnits, 0) AS ordered
    FROM orders o WHERE o.id = NEW.orderID AND o.status <> 'cancelled')
  WHERE ordered > 0
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, orderedUnits = orderedUnits + excluded.orderedUnits;
  INSERT INTO order_day_fill (orderDate, orders, orderedUnits)
  SELECT orderDate, 1, ordered FROM (
    SELECT o.orderDate, (SELECT SUM(quantity) FROM order_lines WHERE orderID = o.id AND id IS NOT NULL)
             + ifnull(o.cancelledUnits, 0) AS ordered
    FROM orders o WHERE o.id = NEW.orderID AND o.status <> 'cancelled')
  WHERE ordered > 0
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, orderedUnits = orderedUnits + excluded.orderedUnits;
END;
CREATE TRIGGER order_lines_shipped_summary_insert AFTER INSERT ON order_lines WHEN (SELECT status FROM orders WHERE id = NEW.orderID) = 'shipped' BEGIN
  INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, -1, -ol.quantity, -ol.extendedPriceCents,
         -ifnull(m.cost, 0), -(ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = NEW.orderID AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = NEW.orderID AND o.status = 'shipped' AND ol.id IS NOT NEW.id
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
INSERT INTO shipped_day_fill (orderDate, lagDays, units)
  SELECT o.orderDate, ifnull(CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(s.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), -SUM(l.quantity)
  FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
  WHERE o.id = NEW.orderID AND o.status <> 'cancelled' AND s.id IS NOT NULL GROUP BY 1, 2
  UNION ALL
  SELECT o.orderDate, ifnull(CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(o.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), -SUM(ol.quantity)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  WHERE o.id = NEW.orderID AND o.status = 'shipped' AND ol.id IS NOT NEW.id
    AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = o.id AND id IS NOT NULL)
  GROUP BY 1, 2
  ON CONFLICT DO UPDATE SET units = units + excluded.units;
  INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, 1, ol.quantity, ol.extendedPriceCents,
         ifnull(m.cost, 0), (ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = NEW.orderID AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = NEW.orderID AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
INSERT INTO shipped_day_fill (orderDate, lagDays, units)
  SELECT o.orderDate, ifnull(CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(s.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), SUM(l.quantity)
  FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
  WHERE o.id = NEW.orderID AND o.status <> 'cancelled' AND s.id IS NOT NULL GROUP BY 1, 2
  UNION ALL
  SELECT o.orderDate, ifnull(CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(o.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), SUM(ol.quantity)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  WHERE o.id = NEW.orderID AND o.status = 'shipped' AND ol.id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = o.id AND id IS NOT NULL)
  GROUP BY 1, 2
  ON CONFLICT DO UPDATE SET units = units + excluded.units;
END;
CREATE TRIGGER order_lines_ordered_delete_summary_before BEFORE DELETE ON order_lines BEGIN
  INSERT INTO order_day_fill (orderDate, orders, orderedUnits)
  SELECT orderDate, -1, -ordered FROM (
    SELECT o.orderDate, (SELECT SUM(quantity) FROM order_lines WHERE orderID = o.id AND id IS NOT NULL)
             + ifnull(o.cancelledUnits, 0) AS ordered
    FROM orders o WHERE o.id = OLD.orderID AND o.status <> 'cancelled')
  WHERE ordered > 0
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, orderedUnits = orderedUnits + excluded.orderedUnits;
END;
CREATE TRIGGER order_lines_ordered_delete_summary_after AFTER DELETE ON order_lines BEGIN
  INSERT INTO order_day_fill (orderDate, orders, orderedUnits)
  SELECT orderDate, 1, ordered FROM (
    SELECT o.orderDate, (SELECT SUM(quantity) FROM order_lines WHERE orderID = o.id AND id IS NOT NULL)
             + ifnull(o.cancelledUnits, 0) AS ordered
    FROM orders o WHERE o.id = OLD.orderID AND o.status <> 'cancelled')
  WHERE ordered > 0
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, orderedUnits = orderedUnits + excluded.orderedUnits;
END;
CREATE TRIGGER order_lines_shipped_delete_summary_before BEFORE DELETE ON order_lines WHEN (SELECT status FROM orders WHERE id = OLD.orderID) = 'shipped' BEGIN
  INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, -1, -ol.quantity, -ol.extendedPriceCents,
         -ifnull(m.cost, 0), -(ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = OLD.orderID AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = OLD.orderID AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
INSERT INTO shipped_day_fill (orderDate, lagDays, units)
  SELECT o.orderDate, ifnull(CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(s.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), -SUM(l.quantity)
  FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
  WHERE o.id = OLD.orderID AND o.status <> 'cancelled' AND s.id IS NOT NULL GROUP BY 1, 2
  UNION ALL
  SELECT o.orderDate, ifnull(CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(o.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), -SUM(ol.quantity)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  WHERE o.id = OLD.orderID AND o.status = 'shipped' AND ol.id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = o.id AND id IS NOT NULL)
  GROUP BY 1, 2
  ON CONFLICT DO UPDATE SET units = units + excluded.units;
END;
CREATE TRIGGER order_lines_shipped_delete_summary_after AFTER DELETE ON order_lines WHEN (SELECT status FROM orders WHERE id = OLD.orderID) = 'shipped' BEGIN
  INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, 1, ol.quantity, ol.extendedPriceCents,
         ifnull(m.cost, 0), (ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = OLD.orderID AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = OLD.orderID AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
INSERT INTO shipped_day_fill (orderDate, lagDays, units)
  SELECT o.orderDate, ifnull(CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(s.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), SUM(l.quantity)
  FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
  WHERE o.id = OLD.orderID AND o.status <> 'cancelled' AND s.id IS NOT NULL GROUP BY 1, 2
  UNION ALL
  SELECT o.orderDate, ifnull(CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(o.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), SUM(ol.quantity)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  WHERE o.id = OLD.orderID AND o.status = 'shipped' AND ol.id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = o.id AND id IS NOT NULL)
  GROUP BY 1, 2
  ON CONFLICT DO UPDATE SET units = units + excluded.units;
END;
CREATE TRIGGER order_lines_figures_update_summary_before BEFORE UPDATE OF orderID, productID, quantity, extendedPriceCents ON order_lines WHEN NEW.orderID IS NOT OLD.orderID OR NEW.productID IS NOT OLD.productID OR NEW.quantity IS NOT OLD.quantity
  OR NEW.extendedPriceCents IS NOT OLD.extendedPriceCents BEGIN
  INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, -1, -ol.quantity, -ol.extendedPriceCents,
         -ifnull(m.cost, 0), -(ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = OLD.orderID AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = OLD.orderID AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
INSERT INTO order_day_fill (orderDate, orders, orderedUnits)
  SELECT orderDate, -1, -ordered FROM (
    SELECT o.orderDate, (SELECT SUM(quantity) FROM order_lines WHERE orderID = o.id AND id IS NOT NULL)
             + ifnull(o.cancelledUnits, 0) AS ordered
    FROM orders o WHERE o.id = OLD.orderID AND o.status <> 'cancelled')
  WHERE ordered > 0
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, orderedUnits = orderedUnits + excluded.orderedUnits;
INSERT INTO shipped_day_fill (orderDate, lagDays, units)
  SELECT o.orderDate, ifnull(CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(s.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), -SUM(l.quantity)
  FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
  WHERE o.id = OLD.orderID AND o.status <> 'cancelled' AND s.id IS NOT NULL GROUP BY 1, 2
  UNION ALL
  SELECT o.orderDate, ifnull(CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(o.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), -SUM(ol.quantity)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  WHERE o.id = OLD.orderID AND o.status = 'shipped' AND ol.id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = o.id AND id IS NOT NULL)
  GROUP BY 1, 2
  ON CONFLICT DO UPDATE SET units = units + excluded.units;
INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, -1, -ol.quantity, -ol.extendedPriceCents,
         -ifnull(m.cost, 0), -(ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = CASE WHEN NEW.orderID IS NOT OLD.orderID THEN NEW.orderID END AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = CASE WHEN NEW.orderID IS NOT OLD.orderID THEN NEW.orderID END AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
INSERT INTO order_day_fill (orderDate, orders, orderedUnits)
  SELECT orderDate, -1, -ordered FROM (
    SELECT o.orderDate, (SELECT SUM(quantity) FROM order_lines WHERE orderID = o.id AND id IS NOT NULL)
             + ifnull(o.cancelledUnits, 0) AS ordered
    FROM orders o WHERE o.id = CASE WHEN NEW.orderID IS NOT OLD.orderID THEN NEW.orderID END AND o.status <> 'cancelled')
  WHERE ordered > 0
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, orderedUnits = orderedUnits + excluded.orderedUnits;
INSERT INTO shipped_day_fill (orderDate, lagDays, units)
  SELECT o.orderDate, ifnull(CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(s.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), -SUM(l.quantity)
  FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
  WHERE o.id = CASE WHEN NEW.orderID IS NOT OLD.orderID THEN NEW.orderID END AND o.status <> 'cancelled' AND s.id IS NOT NULL GROUP BY 1, 2
  UNION ALL
  SELECT o.orderDate, ifnull(CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(o.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), -SUM(ol.quantity)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  WHERE o.id = CASE WHEN NEW.orderID IS NOT OLD.orderID THEN NEW.orderID END AND o.status = 'shipped' AND ol.id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = o.id AND id IS NOT NULL)
  GROUP BY 1, 2
  ON CONFLICT DO UPDATE SET units = units + excluded.units;
END;
CREATE TRIGGER order_lines_figures_update_summary_after AFTER UPDATE OF orderID, productID, quantity, extendedPriceCents ON order_lines WHEN NEW.orderID IS NOT OLD.orderID OR NEW.productID IS NOT OLD.productID OR NEW.quantity IS NOT OLD.quantity
  OR NEW.extendedPriceCents IS NOT OLD.extendedPriceCents BEGIN
  INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, 1, ol.quantity, ol.extendedPriceCents,
         ifnull(m.cost, 0), (ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = OLD.orderID AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = OLD.orderID AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
INSERT INTO order_day_fill (orderDate, orders, orderedUnits)
  SELECT orderDate, 1, ordered FROM (
    SELECT o.orderDate, (SELECT SUM(quantity) FROM order_lines WHERE orderID = o.id AND id IS NOT NULL)
             + ifnull(o.cancelledUnits, 0) AS ordered
    FROM orders o WHERE o.id = OLD.orderID AND o.status <> 'cancelled')
  WHERE ordered > 0
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, orderedUnits = orderedUnits + excluded.orderedUnits;
INSERT INTO shipped_day_fill (orderDate, lagDays, units)
  SELECT o.orderDate, ifnull(CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(s.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), SUM(l.quantity)
  FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
  WHERE o.id = OLD.orderID AND o.status <> 'cancelled' AND s.id IS NOT NULL GROUP BY 1, 2
  UNION ALL
  SELECT o.orderDate, ifnull(CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(o.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), SUM(ol.quantity)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  WHERE o.id = OLD.orderID AND o.status = 'shipped' AND ol.id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = o.id AND id IS NOT NULL)
  GROUP BY 1, 2
  ON CONFLICT DO UPDATE SET units = units + excluded.units;
INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, 1, ol.quantity, ol.extendedPriceCents,
         ifnull(m.cost, 0), (ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = CASE WHEN NEW.orderID IS NOT OLD.orderID THEN NEW.orderID END AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = CASE WHEN NEW.orderID IS NOT OLD.orderID THEN NEW.orderID END AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
INSERT INTO order_day_fill (orderDate, orders, orderedUnits)
  SELECT orderDate, 1, ordered FROM (
    SELECT o.orderDate, (SELECT SUM(quantity) FROM order_lines WHERE orderID = o.id AND id IS NOT NULL)
             + ifnull(o.cancelledUnits, 0) AS ordered
    FROM orders o WHERE o.id = CASE WHEN NEW.orderID IS NOT OLD.orderID THEN NEW.orderID END AND o.status <> 'cancelled')
  WHERE ordered > 0
  ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, orderedUnits = orderedUnits + excluded.orderedUnits;
INSERT INTO shipped_day_fill (orderDate, lagDays, units)
  SELECT o.orderDate, ifnull(CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(s.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), SUM(l.quantity)
  FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
  WHERE o.id = CASE WHEN NEW.orderID IS NOT OLD.orderID THEN NEW.orderID END AND o.status <> 'cancelled' AND s.id IS NOT NULL GROUP BY 1, 2
  UNION ALL
  SELECT o.orderDate, ifnull(CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(o.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), SUM(ol.quantity)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  WHERE o.id = CASE WHEN NEW.orderID IS NOT OLD.orderID THEN NEW.orderID END AND o.status = 'shipped' AND ol.id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = o.id AND id IS NOT NULL)
  GROUP BY 1, 2
  ON CONFLICT DO UPDATE SET units = units + excluded.units;
END;
CREATE TRIGGER stock_movements_margin_summary_insert AFTER INSERT ON stock_movements WHEN NEW.reason = 'shipped' AND (SELECT status FROM orders WHERE id = NEW.orderID) = 'shipped' BEGIN
  INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, -1, -ol.quantity, -ol.extendedPriceCents,
         -ifnull(m.cost, 0), -(ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = NEW.orderID AND id IS NOT NEW.id GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = NEW.orderID AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
  INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, 1, ol.quantity, ol.extendedPriceCents,
         ifnull(m.cost, 0), (ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = NEW.orderID AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = NEW.orderID AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
END;
CREATE TRIGGER stock_movements_margin_update_summary_before BEFORE UPDATE OF orderID, productID, delta, reason, unitCostCents ON stock_movements WHEN (OLD.reason = 'shipped' OR NEW.reason = 'shipped') AND (NEW.orderID IS NOT OLD.orderID
  OR NEW.productID IS NOT OLD.productID OR NEW.delta IS NOT OLD.delta OR NEW.reason IS NOT OLD.reason
  OR NEW.unitCostCents IS NOT OLD.unitCostCents) BEGIN
  INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, -1, -ol.quantity, -ol.extendedPriceCents,
         -ifnull(m.cost, 0), -(ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = OLD.orderID AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = OLD.orderID AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, -1, -ol.quantity, -ol.extendedPriceCents,
         -ifnull(m.cost, 0), -(ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = CASE WHEN NEW.orderID IS NOT OLD.orderID THEN NEW.orderID END AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = CASE WHEN NEW.orderID IS NOT OLD.orderID THEN NEW.orderID END AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
END;
CREATE TRIGGER stock_movements_margin_update_summary_after AFTER UPDATE OF orderID, productID, delta, reason, unitCostCents ON stock_movements WHEN (OLD.reason = 'shipped' OR NEW.reason = 'shipped') AND (NEW.orderID IS NOT OLD.orderID
  OR NEW.productID IS NOT OLD.productID OR NEW.delta IS NOT OLD.delta OR NEW.reason IS NOT OLD.reason
  OR NEW.unitCostCents IS NOT OLD.unitCostCents) BEGIN
  INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, 1, ol.quantity, ol.extendedPriceCents,
         ifnull(m.cost, 0), (ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = OLD.orderID AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = OLD.orderID AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, 1, ol.quantity, ol.extendedPriceCents,
         ifnull(m.cost, 0), (ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  LEFT JOIN (SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
FROM stock_movements WHERE reason = 'shipped' AND orderID = CASE WHEN NEW.orderID IS NOT OLD.orderID THEN NEW.orderID END AND id IS NOT NULL GROUP BY orderID, productID) m ON m.productID = ol.productID
  WHERE o.id = CASE WHEN NEW.orderID IS NOT OLD.orderID THEN NEW.orderID END AND o.status = 'shipped' AND ol.id IS NOT NULL
  ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
    salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
    uncostedLines = uncostedLines + excluded.uncostedLines;
END;
CREATE TRIGGER shipments_shipped_summary_insert AFTER INSERT ON shipments WHEN (SELECT status FROM orders WHERE id = NEW.orderID) = 'shipped' AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = NEW.orderID AND id <> NEW.id) BEGIN
  INSERT INTO shipped_day_fill (orderDate, lagDays, units)
  SELECT o.orderDate, ifnull(CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(s.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), -SUM(l.quantity)
  FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
  WHERE o.id = NEW.orderID AND o.status <> 'cancelled' AND s.id IS NOT NEW.id GROUP BY 1, 2
  UNION ALL
  SELECT o.orderDate, ifnull(CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(o.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), -SUM(ol.quantity)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  WHERE o.id = NEW.orderID AND o.status = 'shipped' AND ol.id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = o.id AND id IS NOT NEW.id)
  GROUP BY 1, 2
  ON CONFLICT DO UPDATE SET units = units + excluded.units;
  INSERT INTO shipped_day_fill (orderDate, lagDays, units)
  SELECT o.orderDate, ifnull(CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(s.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(s.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), SUM(l.quantity)
  FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
  WHERE o.id = NEW.orderID AND o.status <> 'cancelled' AND s.id IS NOT NULL GROUP BY 1, 2
  UNION ALL
  SELECT o.orderDate, ifnull(CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(o.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(o.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), SUM(ol.quantity)
  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
  WHERE o.id = NEW.orderID AND o.status = 'shipped' AND ol.id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = o.id AND id IS NOT NULL)
  GROUP BY 1, 2
  ON CONFLICT DO UPDATE SET units = units + excluded.units;
END;
CREATE TRIGGER shipment_lines_shipped_summary_insert AFTER INSERT ON shipment_lines BEGIN
  INSERT INTO shipped_day_fill (orderDate, lagDays, units)
    SELECT o.orderDate, ifnull(CAST((julianday(h.shippedDate) - julianday(date(o.orderDate))) AS INTEGER) + ((julianday(h.shippedDate) - julianday(date(o.orderDate))) > CAST((julianday(h.shippedDate) - julianday(date(o.orderDate))) AS INTEGER)), 1000000000), NEW.quantity
    FROM shipments h JOIN orders o ON o.id = h.orderID WHERE h.id = NEW.shipmentID AND o.status <> 'cancelled'
    ON CONFLICT DO UPDATE SET units = units + excluded.units;
END;
CREATE INDEX change_log_local ON change_log(seq) WHERE origin = 'local' AND NOT localOnly;
CREATE TABLE sync_zone_sums (zoneName TEXT PRIMARY KEY NOT NULL, sum INTEGER NOT NULL) WITHOUT ROWID;
CREATE TRIGGER sync_records_sum_insert AFTER INSERT ON sync_records BEGIN
  UPDATE sync_zone_sums SET sum = (sum | NEW.checksum) & ~(sum & NEW.checksum) WHERE zoneName = NEW.zoneName AND NEW.checksum IS NOT NULL;
  DELETE FROM sync_zone_sums WHERE zoneName = NEW.zoneName AND NEW.checksum IS NULL;
END;
CREATE TRIGGER sync_records_sum_update AFTER UPDATE ON sync_records BEGIN
  UPDATE sync_zone_sums SET sum = (sum | OLD.checksum) & ~(sum & OLD.checksum) WHERE zoneName = OLD.zoneName AND OLD.checksum IS NOT NULL;
  DELETE FROM sync_zone_sums WHERE zoneName = OLD.zoneName AND OLD.checksum IS NULL;
  UPDATE sync_zone_sums SET sum = (sum | NEW.checksum) & ~(sum & NEW.checksum) WHERE zoneName = NEW.zoneName AND NEW.checksum IS NOT NULL;
  DELETE FROM sync_zone_sums WHERE zoneName = NEW.zoneName AND NEW.checksum IS NULL;
END;
CREATE TRIGGER sync_records_sum_delete AFTER DELETE ON sync_records BEGIN
  UPDATE sync_zone_sums SET sum = (sum | OLD.checksum) & ~(sum & OLD.checksum) WHERE zoneName = OLD.zoneName AND OLD.checksum IS NOT NULL;
  DELETE FROM sync_zone_sums WHERE zoneName = OLD.zoneName AND OLD.checksum IS NULL;
END;
CREATE TABLE sync_set_aside (
  tableName TEXT NOT NULL,
  recordID TEXT NOT NULL,
  zoneName TEXT NOT NULL,
  number TEXT,
  site TEXT,
  kind TEXT,
  year INTEGER,
  counter INTEGER,
  shipmentRecordID TEXT,
  keptBy TEXT,
  reissuedAs TEXT,
  setAsideAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (tableName, recordID));
CREATE TRIGGER invoices_never_deleted BEFORE DELETE ON invoices
WHEN NOT EXISTS (SELECT 1 FROM sync_set_aside WHERE tableName = 'invoices' AND recordID = OLD.recordID) BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: an issued invoice or credit note is never deleted');
END;
CREATE TRIGGER invoice_lines_never_deleted BEFORE DELETE ON invoice_lines
WHEN NOT EXISTS (SELECT 1 FROM sync_set_aside WHERE tableName = 'invoice_lines' AND recordID = OLD.recordID) BEGIN
  SELECT RAISE(ABORT, 'northwind-ledger: an issued invoice''s line is never deleted');
END;
