#!/usr/bin/env python3
"""Independent reference for the Northwind reports in reports.sql.

It reads Microsoft's T-SQL script (instnwnd.sql) itself -- CREATE TABLE column types and the INSERT statements --
and evaluates every view and stored procedure the way SQL Server does, following the T-SQL definitions literally:
money is Python Decimal with 4 decimals, `real` is IEEE binary32 (numpy.float32 arithmetic), smallint/int/bit are
ints, datetimes are dates. It then runs reports.sql against a copy of the imported store (canonical.sqlite), with
f32() and the sqlserver_ci_as collation registered as the Swift code would, and compares row for row, value for
value.

    python3 reference.py                 comparison of every report (exit status 1 on any difference)
    python3 reference.py --facts         also print counts, first/last rows and totals usable in tests
    python3 reference.py --evidence      the rounding-rule experiment against Microsoft's published figures

Paths can be overridden with --script, --store, --reports.
"""
import argparse
import datetime
import os
import re
import shutil
import sqlite3
import struct
import sys
import tempfile
import unicodedata
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCRIPT = '/work/shared/northwind/mssql/instnwnd.sql'
DEFAULT_STORE = os.path.join(HERE, 'canonical.sqlite')
DEFAULT_REPORTS = os.path.join(HERE, '..', '..', '..', 'Sources', 'Northwind', 'Resources', 'reports.sql')

# ---------------------------------------------------------------------------------------------------------------
# SQL Server's `real`: IEEE binary32. Arithmetic on two reals (or a real and an int/smallint/money, which T-SQL
# converts to real first, real having the higher type precedence) yields a real.
try:
    if os.environ.get('NW_NO_NUMPY'):
        raise ImportError('NW_NO_NUMPY set')
    import numpy as _np

    def _f32(x):
        return _np.float32(x)
    F32_BACKEND = 'numpy.float32 arithmetic'
except ImportError:  # pragma: no cover - fallback: double arithmetic rounded to binary32 after every step, which
    _np = None       # gives identical results for + - * / (double has >= 2*24+2 bits, so double rounding is innocuous)

    def _f32(x):
        return struct.unpack('f', struct.pack('f', float(x)))[0]
    F32_BACKEND = 'double arithmetic rounded to binary32 per step (numpy missing)'


class Real:
    """A T-SQL `real` value. Mixed arithmetic converts the other operand to real first."""
    __slots__ = ('v',)

    def __init__(self, x):
        if isinstance(x, Real):
            self.v = x.v
        elif isinstance(x, (Decimal, str)):
            # decimal text -> nearest binary32 directly (numpy parses the decimal string, no double rounding)
            self.v = _f32(str(x)) if _np is not None else _f32(float(Decimal(x)))
        else:
            self.v = _f32(x)

    @staticmethod
    def of(x):
        return x if isinstance(x, Real) else Real(x)

    def __add__(self, o): return Real._wrap(self.v + Real.of(o).v)
    def __radd__(self, o): return Real._wrap(Real.of(o).v + self.v)
    def __sub__(self, o): return Real._wrap(self.v - Real.of(o).v)
    def __rsub__(self, o): return Real._wrap(Real.of(o).v - self.v)
    def __mul__(self, o): return Real._wrap(self.v * Real.of(o).v)
    def __rmul__(self, o): return Real._wrap(Real.of(o).v * self.v)
    def __truediv__(self, o): return Real._wrap(self.v / Real.of(o).v)
    def __rtruediv__(self, o): return Real._wrap(Real.of(o).v / self.v)

    @staticmethod
    def _wrap(v):
        r = Real.__new__(Real)
        r.v = v if _np is not None else _f32(v)
        if _np is not None:
            assert isinstance(v, _np.float32), type(v)
        return r

    def exact(self):
        """The exact value of the binary32 number, as a Decimal."""
        return Decimal(float(self.v))

    def __float__(self):
        return float(self.v)

    def __repr__(self):
        return f'Real({float(self.v)!r})'


FOUR = Decimal('0.0001')
CENT = Decimal('0.01')


def money(x):
    """CONVERT(money, x). From real: the exact binary value rounded half away from zero to 4 decimals
    (the rule the published figures confirm; see --evidence)."""
    if isinstance(x, Real):
        return x.exact().quantize(FOUR, rounding=ROUND_HALF_UP)
    return Decimal(x).quantize(FOUR, rounding=ROUND_HALF_UP)


def decimal_14_2(x):
    """CONVERT(decimal(14,2), real): rounded half away from zero, from the exact binary value."""
    return x.exact().quantize(CENT, rounding=ROUND_HALF_UP)


def t_round(x, digits):
    """T-SQL ROUND(exact numeric, digits): half away from zero; the value keeps its scale."""
    return x.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)


def convert_int(x):
    """CONVERT(int, real): truncation toward zero."""
    return int(float(x))


# ---------------------------------------------------------------------------------------------------------------
# The T-SQL script

TOKEN = re.compile(r"""
   (?P<str>N?'(?:[^']|'')*')
 | (?P<hex>0x[0-9A-Fa-f]*)
 | (?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
 | (?P<null>NULL\b)
 | (?P<punct>[(),])
 | (?P<ident>"[^"]*"|\[[^\]]*\]|[A-Za-z_][A-Za-z_0-9]*)
 | (?P<ws>\s+)
""", re.X | re.I)


def _tokens(s, pos):
    while pos < len(s):
        m = TOKEN.match(s, pos)
        if not m:
            raise ValueError(f'cannot tokenize at {pos}: {s[pos:pos + 40]!r}')
        pos = m.end()
        if m.lastgroup != 'ws':
            yield m.lastgroup, m.group(m.lastgroup)


def _unquote(ident):
    return ident[1:-1] if ident[0] in '"[' else ident


def parse_script(path):
    """Returns {table: [(column, type)]} and {table: [row dict of raw literals]}."""
    text = open(path, encoding='utf-8').read()
    tables = {}
    for m in re.finditer(r'CREATE TABLE\s+(?:\[dbo\]\.)?("[^"]+"|\[[^\]]+\]|\w+)\s*\((.*?)\n\)', text, re.S | re.I):
        cols = []
        for line in m.group(2).split('\n'):
            line = line.strip()
            if line.upper().startswith('CONSTRAINT'):
                break
            mm = re.match(r'("[^"]+"|\[[^\]]+\])\s+"?\[?(\w+)', line)
            if mm:
                cols.append((_unquote(mm.group(1)), mm.group(2).lower()))
        tables[_unquote(m.group(1))] = cols
    rows = {}
    for m in re.finditer(r'^INSERT\s+(?:INTO\s+)?("[^"]+"|\[[^\]]+\]|\w+)', text, re.M | re.I):
        name = _unquote(m.group(1))
        toks = _tokens(text, m.end())
        kind, val = next(toks)
        cols = None
        if val == '(':
            cols = []
            for kind, val in toks:
                if val == ')':
                    break
                if val != ',':
                    cols.append(_unquote(val))
            kind, val = next(toks)
        assert val.upper() == 'VALUES', (name, val)
        assert next(toks)[1] == '('
        values = []
        for kind, val in toks:
            if val == ')':
                break
            if val == ',':
                continue
            if kind == 'str':
                s = val[1:] if val[0] in 'Nn' else val
                values.append(s[1:-1].replace("''", "'"))
            elif kind == 'num':
                values.append(val)           # keep the literal text; typed below by the column's type
            elif kind == 'null':
                values.append(None)
            elif kind == 'hex':
                values.append(bytes.fromhex(val[2:]))
            else:
                raise ValueError((name, kind, val))
        cols = cols or [c for c, _ in tables[name]]
        assert len(cols) == len(values), (name, cols, values)
        rows.setdefault(name, []).append(dict(zip(cols, values)))
    return tables, rows


def _typed(value, sqltype):
    if value is None:
        return None
    if sqltype in ('int', 'smallint', 'bit', 'tinyint'):
        return int(value)
    if sqltype == 'money':
        return Decimal(value).quantize(FOUR)
    if sqltype == 'real':
        return Real(value)
    if sqltype == 'datetime':
        # SET DATEFORMAT mdy: '7/4/1996' (no time parts in the data)
        mo, d, y = (int(x) for x in value.split('/'))
        return datetime.date(y, mo, d)
    return value


class DB:
    def __init__(self, script):
        types, raw = parse_script(script)
        self.t = {}
        for table, rows in raw.items():
            coltypes = dict(types[table])
            self.t[table] = [{k: _typed(v, coltypes[k]) for k, v in r.items()} for r in rows]
        for typed, r in zip(self.t['Order Details'], raw['Order Details']):
            typed['DiscountLiteral'] = Decimal(r['Discount'])    # only for the --evidence experiment
        self.products = {p['ProductID']: p for p in self.t['Products']}
        self.categories = {c['CategoryID']: c for c in self.t['Categories']}
        self.orders = {o['OrderID']: o for o in self.t['Orders']}
        self.customers = {c['CustomerID']: c for c in self.t['Customers']}
        self.employees = {e['EmployeeID']: e for e in self.t['Employees']}
        self.shippers = {s['ShipperID']: s for s in self.t['Shippers']}
        self.details = self.t['Order Details']


# ---------------------------------------------------------------------------------------------------------------
# Helpers shared by the reports

def extended_price(od):
    """CONVERT(money, ("Order Details".UnitPrice*Quantity*(1-Discount)/100))*100, literally."""
    return money(od['UnitPrice'] * od['Quantity'] * (1 - od['Discount']) / 100) * 100


def between(d, lo, hi):
    return d is not None and lo <= d <= hi


def year_range(year):
    return datetime.date(year, 1, 1), datetime.date(year, 12, 31)


def order_subtotals(db):
    """view "Order Subtotals": OrderID -> Sum(ExtendedPrice) (money)."""
    sub = {}
    for od in db.details:
        sub[od['OrderID']] = sub.get(od['OrderID'], Decimal('0.0000')) + extended_price(od)
    return sub


def fold(s):
    s = unicodedata.normalize('NFD', s)
    s = ''.join(ch for ch in s if not (0x300 <= ord(ch) <= 0x36F))
    return s.lower().replace("'", '').replace('-', '')


def ci(s):
    """Sort key of the sqlserver_ci_as collation; NULL sorts first as in SQL Server and SQLite."""
    return (0,) if s is None else (1, fold(s), s)


def cents(m):
    """Money -> integer cents (asserting it is a whole number of cents)."""
    if m is None:
        return None
    c = m * 100
    assert c == c.to_integral_value(), m
    return int(c)


def iso(d):
    return None if d is None else d.isoformat()


# ---------------------------------------------------------------------------------------------------------------
# The reports, each following the T-SQL definition. Rows come back in reports.sql's column order and ORDER BY, with
# money as cents, dates as 'yyyy-MM-dd', OrderID as text and reals as the float value of the binary32.

def r_alphabetical_list_of_products(db, p):
    rows = [(x, db.categories[x['CategoryID']]['CategoryName']) for x in db.t['Products']
            if x['CategoryID'] in db.categories and x['Discontinued'] == 0]
    rows.sort(key=lambda r: (ci(r[0]['ProductName']), r[0]['ProductID']))
    return [(x['ProductID'], x['ProductName'], x['SupplierID'], x['CategoryID'], x['QuantityPerUnit'],
             cents(x['UnitPrice']), x['UnitsInStock'], x['UnitsOnOrder'], x['ReorderLevel'], x['Discontinued'], cn)
            for x, cn in rows]


def r_current_product_list(db, p):
    rows = [x for x in db.t['Products'] if x['Discontinued'] == 0]
    rows.sort(key=lambda x: (ci(x['ProductName']), x['ProductID']))
    return [(x['ProductID'], x['ProductName']) for x in rows]


def r_products_above_average_price(db, p):
    prices = [x['UnitPrice'] for x in db.t['Products'] if x['UnitPrice'] is not None]
    avg = money(sum(prices) / len(prices))         # AVG(money) is money
    rows = [x for x in db.t['Products'] if x['UnitPrice'] is not None and x['UnitPrice'] > avg]
    rows.sort(key=lambda x: (-x['UnitPrice'], ci(x['ProductName']), x['ProductID']))
    return [(x['ProductName'], cents(x['UnitPrice'])) for x in rows]


def r_products_by_category(db, p):
    rows = [(db.categories[x['CategoryID']]['CategoryName'], x) for x in db.t['Products']
            if x['CategoryID'] in db.categories and x['Discontinued'] != 1]
    rows.sort(key=lambda r: (ci(r[0]), ci(r[1]['ProductName']), r[1]['ProductID']))
    return [(cn, x['ProductName'], x['QuantityPerUnit'], x['UnitsInStock'], x['Discontinued']) for cn, x in rows]


def r_customer_and_suppliers_by_city(db, p):
    rows = {(c['City'], c['CompanyName'], c['ContactName'], 'Customers') for c in db.t['Customers']}
    rows |= {(s['City'], s['CompanyName'], s['ContactName'], 'Suppliers') for s in db.t['Suppliers']}  # UNION
    return sorted(rows, key=lambda r: (ci(r[0]), ci(r[1]), r[3], ci(r[2])))


def r_invoices(db, p):
    out = []
    for od in sorted(db.details, key=lambda d: (d['OrderID'], d['ProductID'])):
        o = db.orders[od['OrderID']]
        c, e, s = db.customers.get(o['CustomerID']), db.employees.get(o['EmployeeID']), db.shippers.get(o['ShipVia'])
        pr = db.products.get(od['ProductID'])
        if not (c and e and s and pr):
            continue
        out.append((o['ShipName'], o['ShipAddress'], o['ShipCity'], o['ShipRegion'], o['ShipPostalCode'],
                    o['ShipCountry'], o['CustomerID'], c['CompanyName'], c['Address'], c['City'], c['Region'],
                    c['PostalCode'], c['Country'], e['FirstName'] + ' ' + e['LastName'], str(o['OrderID']),
                    iso(o['OrderDate']), iso(o['RequiredDate']), iso(o['ShippedDate']), s['CompanyName'],
                    od['ProductID'], pr['ProductName'], cents(od['UnitPrice']), od['Quantity'], float(od['Discount']),
                    cents(extended_price(od)), cents(o['Freight'])))
    return out


def r_order_details_extended(db, p):
    return [(str(od['OrderID']), od['ProductID'], db.products[od['ProductID']]['ProductName'], cents(od['UnitPrice']),
             od['Quantity'], float(od['Discount']), cents(extended_price(od)))
            for od in sorted(db.details, key=lambda d: (d['OrderID'], d['ProductID']))]


def r_order_subtotals(db, p):
    return [(str(k), cents(v)) for k, v in sorted(order_subtotals(db).items())]


def r_orders_qry(db, p):
    out = []
    for o in sorted(db.t['Orders'], key=lambda o: o['OrderID']):
        c = db.customers.get(o['CustomerID'])
        if not c:
            continue
        out.append((str(o['OrderID']), o['CustomerID'], o['EmployeeID'], iso(o['OrderDate']), iso(o['RequiredDate']),
                    iso(o['ShippedDate']), o['ShipVia'], cents(o['Freight']), o['ShipName'], o['ShipAddress'],
                    o['ShipCity'], o['ShipRegion'], o['ShipPostalCode'], o['ShipCountry'], c['CompanyName'],
                    c['Address'], c['City'], c['Region'], c['PostalCode'], c['Country']))
    return out


def r_quarterly_orders(db, p):
    lo, hi = year_range(p.get('year') or 1997)
    rows = set()
    for o in db.t['Orders']:                      # Customers RIGHT JOIN Orders
        if between(o['OrderDate'], lo, hi):
            c = db.customers.get(o['CustomerID'])
            rows.add((c['CustomerID'], c['CompanyName'], c['City'], c['Country']) if c else (None,) * 4)
    return sorted(rows, key=lambda r: (r[0] is not None, r[0] or ''))


def _product_sales(db, year):
    lo, hi = year_range(year)
    sums = {}
    for od in db.details:
        o = db.orders[od['OrderID']]
        pr = db.products[od['ProductID']]
        if pr['CategoryID'] in db.categories and between(o['ShippedDate'], lo, hi):
            key = (db.categories[pr['CategoryID']]['CategoryName'], pr['ProductName'])
            sums[key] = sums.get(key, Decimal(0)) + extended_price(od)
    return sums


def r_product_sales_for_1997(db, p):
    sums = _product_sales(db, p.get('year') or 1997)
    return [(k[0], k[1], cents(v)) for k, v in sorted(sums.items(), key=lambda kv: (ci(kv[0][0]), ci(kv[0][1])))]


def r_category_sales_for_1997(db, p):
    cat = {}
    for (cn, _), v in _product_sales(db, p.get('year') or 1997).items():   # SUM over "Product Sales for 1997"
        cat[cn] = cat.get(cn, Decimal(0)) + v
    return [(k, cents(v)) for k, v in sorted(cat.items(), key=lambda kv: ci(kv[0]))]


def r_sales_by_category(db, p):
    lo, hi = year_range(p.get('year') or 1997)
    sums = {}
    for od in db.details:                          # "Order Details Extended" joined to Orders by OrderDate
        o = db.orders[od['OrderID']]
        pr = db.products[od['ProductID']]
        if pr['CategoryID'] in db.categories and between(o['OrderDate'], lo, hi):
            c = db.categories[pr['CategoryID']]
            key = (c['CategoryID'], c['CategoryName'], pr['ProductName'])
            sums[key] = sums.get(key, Decimal(0)) + extended_price(od)
    return [(k[0], k[1], k[2], cents(v)) for k, v in sorted(sums.items(), key=lambda kv: (ci(kv[0][2]), kv[0][0]))]


def r_sales_totals_by_amount(db, p):
    lo, hi = year_range(p.get('year') or 1997)
    out = []
    for oid, sub in order_subtotals(db).items():
        o = db.orders[oid]
        c = db.customers.get(o['CustomerID'])
        if c and sub > 2500 and between(o['ShippedDate'], lo, hi):
            out.append((cents(sub), str(oid), c['CompanyName'], iso(o['ShippedDate'])))
    return sorted(out, key=lambda r: (-r[0], int(r[1])))


def r_summary_of_sales(db, p):
    out = [(iso(db.orders[oid]['ShippedDate']), str(oid), cents(sub))
           for oid, sub in order_subtotals(db).items() if db.orders[oid]['ShippedDate'] is not None]
    return sorted(out, key=lambda r: (r[0], int(r[1])))


def r_ten_most_expensive_products(db, p):
    rows = sorted(db.t['Products'], key=lambda x: (-(x['UnitPrice'] or 0), ci(x['ProductName']), x['ProductID']))[:10]
    return [(x['ProductName'], cents(x['UnitPrice'])) for x in rows]


def r_cust_order_hist(db, p):
    code = p['customer'].upper()                   # CustomerID = @CustomerID under a case-insensitive collation
    tot = {}
    for od in db.details:
        o = db.orders[od['OrderID']]
        if o['CustomerID'] is not None and o['CustomerID'].upper() == code and o['CustomerID'] in db.customers:
            name = db.products[od['ProductID']]['ProductName']
            tot[name] = tot.get(name, 0) + od['Quantity']
    return sorted(tot.items(), key=lambda kv: ci(kv[0]))


def r_cust_orders_detail(db, p):
    oid = int(p['order'])
    out = []
    for od in sorted((d for d in db.details if d['OrderID'] == oid), key=lambda d: d['ProductID']):
        unit_price = t_round(od['UnitPrice'], 2)                                   # ROUND(Od.UnitPrice, 2)
        discount = convert_int(od['Discount'] * 100)                               # CONVERT(int, Discount * 100)
        ext = t_round(money(od['Quantity'] * (1 - od['Discount']) * od['UnitPrice']), 2)
        out.append((db.products[od['ProductID']]['ProductName'], cents(unit_price), od['Quantity'], discount, cents(ext)))
    return out


def r_cust_orders_orders(db, p):
    code = p['customer'].upper()
    rows = sorted((o for o in db.t['Orders'] if (o['CustomerID'] or '').upper() == code), key=lambda o: o['OrderID'])
    return [(str(o['OrderID']), iso(o['OrderDate']), iso(o['RequiredDate']), iso(o['ShippedDate'])) for o in rows]


def _day(s):
    return datetime.date.fromisoformat(s)


def r_employee_sales_by_country(db, p):
    lo, hi = _day(p['from']), _day(p['to'])
    out = []
    for oid, sub in order_subtotals(db).items():
        o = db.orders[oid]
        e = db.employees.get(o['EmployeeID'])
        if e and between(o['ShippedDate'], lo, hi):
            out.append((e['Country'], e['LastName'], e['FirstName'], iso(o['ShippedDate']), str(oid), cents(sub)))
    return sorted(out, key=lambda r: (ci(r[0]), ci(r[1]), ci(r[2]), r[3], int(r[4])))


def r_sales_by_year(db, p):
    lo, hi = _day(p['from']), _day(p['to'])
    out = [(iso(db.orders[oid]['ShippedDate']), str(oid), cents(sub), str(db.orders[oid]['ShippedDate'].year))
           for oid, sub in order_subtotals(db).items() if between(db.orders[oid]['ShippedDate'], lo, hi)]
    return sorted(out, key=lambda r: (r[0], int(r[1])))


def r_sales_by_category_proc(db, p):
    year = str(p.get('year') or 1998)
    tot = {}
    for od in db.details:
        o = db.orders[od['OrderID']]
        pr = db.products[od['ProductID']]
        c = db.categories.get(pr['CategoryID'])
        # SUBSTRING(CONVERT(nvarchar(22), O.OrderDate, 111), 1, 4) = @OrdYear  (style 111 is yyyy/mm/dd)
        if c and c['CategoryName'].upper() == p['category'].upper() and o['OrderDate'].strftime('%Y/%m/%d')[:4] == year:
            v = decimal_14_2(od['Quantity'] * (1 - od['Discount']) * od['UnitPrice'])
            tot[pr['ProductName']] = tot.get(pr['ProductName'], Decimal('0.00')) + v
    return [(k, cents(t_round(v, 0))) for k, v in sorted(tot.items(), key=lambda kv: ci(kv[0]))]


REPORTS = {
    'alphabetical_list_of_products': r_alphabetical_list_of_products,
    'current_product_list': r_current_product_list,
    'products_above_average_price': r_products_above_average_price,
    'products_by_category': r_products_by_category,
    'customer_and_suppliers_by_city': r_customer_and_suppliers_by_city,
    'invoices': r_invoices,
    'order_details_extended': r_order_details_extended,
    'order_subtotals': r_order_subtotals,
    'orders_qry': r_orders_qry,
    'quarterly_orders': r_quarterly_orders,
    'product_sales_for_1997': r_product_sales_for_1997,
    'category_sales_for_1997': r_category_sales_for_1997,
    'sales_by_category': r_sales_by_category,
    'sales_totals_by_amount': r_sales_totals_by_amount,
    'summary_of_sales_by_quarter': r_summary_of_sales,
    'summary_of_sales_by_year': r_summary_of_sales,
    'ten_most_expensive_products': r_ten_most_expensive_products,
    'cust_order_hist': r_cust_order_hist,
    'cust_orders_detail': r_cust_orders_detail,
    'cust_orders_orders': r_cust_orders_orders,
    'employee_sales_by_country': r_employee_sales_by_country,
    'sales_by_year': r_sales_by_year,
    'sales_by_category_proc': r_sales_by_category_proc,
}


def param_sets(db):
    """Default parameters first (what FINDINGS.md quotes), then wider coverage."""
    years = [{'year': None}, {'year': 1996}, {'year': 1997}, {'year': 1998}]
    ranges = [{'from': '1997-01-01', 'to': '1997-12-31'}, {'from': '1996-07-01', 'to': '1996-07-31'},
              {'from': '1996-01-01', 'to': '1998-12-31'}, {'from': '1998-05-06', 'to': '1998-05-06'}]
    codes = sorted(db.customers) + ['alfki']
    cats = [c['CategoryName'] for c in db.t['Categories']] + ['seafood']
    return {
        'quarterly_orders': years, 'product_sales_for_1997': years, 'category_sales_for_1997': years,
        'sales_by_category': years, 'sales_totals_by_amount': years,
        'cust_order_hist': [{'customer': c} for c in codes],
        'cust_orders_orders': [{'customer': c} for c in codes],
        'cust_orders_detail': [{'order': '10248'}] + [{'order': str(k)} for k in sorted(db.orders)],
        'employee_sales_by_country': ranges, 'sales_by_year': ranges,
        'sales_by_category_proc': [{'category': 'Beverages', 'year': None}]
        + [{'category': c, 'year': y} for c in cats for y in (None, 1996, 1997, 1998)],
    }


# ---------------------------------------------------------------------------------------------------------------
# SQLite side

def f32(x):
    return None if x is None else struct.unpack('f', struct.pack('f', float(x)))[0]


def collate_ci_as(a, b):
    ka, kb = (fold(a), a), (fold(b), b)
    return (ka > kb) - (ka < kb)


def load_queries(path):
    queries = {}
    for block in re.split(r'^-- name: ', open(path, encoding='utf-8').read(), flags=re.M)[1:]:
        name, body = block.split('\n', 1)
        queries[name.strip()] = body.strip()
    return queries


def open_store(store):
    """A private copy of the store (it is in WAL mode; the copy keeps the original untouched)."""
    tmp = tempfile.mkdtemp(prefix='nw-reports-')
    for suffix in ('', '-wal'):
        if os.path.exists(store + suffix):
            shutil.copy(store + suffix, os.path.join(tmp, 'store.sqlite' + suffix))
    conn = sqlite3.connect(os.path.join(tmp, 'store.sqlite'))
    conn.create_function('f32', 1, f32, deterministic=True)
    conn.create_collation('sqlserver_ci_as', collate_ci_as)
    conn.create_function('sqlserver_key', 1, lambda s: None if s is None else fold(s), deterministic=True)
    return conn, tmp


def run_sql(conn, sql, params):
    names = set(re.findall(r':(\w+)', sql))
    bound = {n: params.get(n) for n in names}
    cur = conn.execute(sql, bound)
    cols = [d[0] for d in cur.description]
    rows = [tuple(f32(v) if isinstance(v, float) else v for v in r) for r in cur.fetchall()]
    return cols, rows


# ---------------------------------------------------------------------------------------------------------------

def compare(db, conn, queries, verbose):
    sets = param_sets(db)
    failures = 0
    runs = 0
    for name, fn in REPORTS.items():
        if name not in queries:
            print(f'MISSING  {name}: no query in reports.sql')
            failures += 1
            continue
        plist = sets.get(name, [{}])
        bad = []
        first_count = None
        for params in plist:
            runs += 1
            expected = fn(db, params)
            cols, got = run_sql(conn, queries[name], params)
            if first_count is None:
                first_count = len(got)
            if expected != got:
                bad.append((params, expected, got))
        if bad:
            failures += 1
            params, expected, got = bad[0]
            print(f'DIFF     {name}: {len(bad)} of {len(plist)} parameter sets differ; first {params}: '
                  f'reference {len(expected)} rows, SQLite {len(got)} rows')
            shown = 0
            for i, (e, g) in enumerate(zip(expected, got)):
                if e != g and shown < 5:
                    print(f'           row {i}: reference {e}\n                    sqlite    {g}')
                    shown += 1
        else:
            print(f'OK       {name}: {first_count} rows with default parameters; {len(plist)} parameter set(s) agree')
    print(f'\n{len(REPORTS) - failures} of {len(REPORTS)} reports agree ({runs} runs; float32: {F32_BACKEND}).')
    return failures


def money_str(c):
    return None if c is None else f'{c // 100}.{c % 100:02d}'


def facts(db):
    print('\n=== Facts (reference side, default parameters unless stated) ===')
    for name, fn in REPORTS.items():
        params = param_sets(db).get(name, [{}])[0]
        rows = fn(db, params)
        print(f'\n{name} {params}: {len(rows)} rows')
        for label, r in (('first', rows[0] if rows else None), ('last', rows[-1] if rows else None)):
            print(f'  {label}: {r}')
    sub = order_subtotals(db)
    print('\nOrder Subtotals (money):', {k: str(sub[k]) for k in (10248, 10249, 10250, 10251, 10252, 11077, 10865)})
    print('Grand total of Order Subtotals:', sum(sub.values()))
    for y in (1996, 1997, 1998):
        lo, hi = year_range(y)
        tot = sum(v for k, v in sub.items() if between(db.orders[k]['ShippedDate'], lo, hi))
        n = sum(1 for k in sub if between(db.orders[k]['ShippedDate'], lo, hi))
        print(f'Summary of Sales by Year {y}: {n} orders, {tot}')
        quarters = {}
        for k, v in sub.items():
            d = db.orders[k]['ShippedDate']
            if between(d, lo, hi):
                q = (d.month - 1) // 3 + 1
                quarters[q] = quarters.get(q, 0) + v
        print(f'   by quarter: {dict(sorted((q, str(v)) for q, v in quarters.items()))}')
    for name, p in (('employee_sales_by_country', {'from': '1997-01-01', 'to': '1997-12-31'}),):
        per = {}
        for r in r_employee_sales_by_country(db, p):
            key = f'{r[2]} {r[1]} ({r[0]})'
            per[key] = per.get(key, 0) + r[5]
        print(f'{name} {p} totals per employee:', {k: money_str(v) for k, v in sorted(per.items(), key=lambda kv: -kv[1])})
    print('sales_by_category totals per category (1997 by OrderDate):')
    per = {}
    for r in r_sales_by_category(db, {'year': 1997}):
        per[r[1]] = per.get(r[1], 0) + r[3]
    print('  ', {k: money_str(v) for k, v in sorted(per.items())}, 'sum', money_str(sum(per.values())))
    for c in ('Beverages', 'Seafood', 'Produce'):
        for y in (1997, 1998):
            rows = r_sales_by_category_proc(db, {'category': c, 'year': y})
            print(f'SalesByCategory {c} {y}: {len(rows)} rows, first {rows[0]}, sum {money_str(sum(r[1] for r in rows))}')


# ---------------------------------------------------------------------------------------------------------------
# The rounding experiment

PUBLISHED_CATEGORY_SALES_1997 = {
    # "Category Sales for 1997" as SQL Server returns it (money shown with 4 decimals in the source). Sources in
    # FINDINGS.md; Beverages and Seafood are the figures quoted in the brief.
    'Beverages': '102074.31', 'Condiments': '55277.60', 'Confections': '80894.14', 'Dairy Products': '114749.78',
    'Grains/Cereals': '55948.82', 'Meat/Poultry': '81338.06', 'Produce': '53019.98', 'Seafood': '65544.18',
}


PUBLISHED_ORDER_SUBTOTALS = {10248: '440.00', 10249: '1863.40', 10250: '1552.60', 10251: '654.06', 10252: '3597.90'}
PUBLISHED_TEN_MOST_EXPENSIVE = [('Côte de Blaye', '263.50'), ('Thüringer Rostbratwurst', '123.79'), ('Mishi Kobe Niku', '97.00'),
                                ("Sir Rodney's Marmalade", '81.00'), ('Carnarvon Tigers', '62.50'),
                                ('Raclette Courdavault', '55.00'), ('Manjimup Dried Apples', '53.00'),
                                ('Tarte au sucre', '49.30'), ('Ipoh Coffee', '46.00'), ('Rössle Sauerkraut', '45.60')]


def check_published(db):
    """The reference against figures published for SQL Server's Northwind (sources in FINDINGS.md)."""
    failures = []
    got = {c: money_str(v) for c, v in r_category_sales_for_1997(db, {})}
    for c, v in PUBLISHED_CATEGORY_SALES_1997.items():
        if got.get(c) != v:
            failures.append(f'Category Sales for 1997 {c}: published {v}, reference {got.get(c)}')
    sub = dict(r_order_subtotals(db, {}))
    for k, v in PUBLISHED_ORDER_SUBTOTALS.items():
        if money_str(sub[str(k)]) != v:
            failures.append(f'Order Subtotals {k}: published {v}, reference {money_str(sub[str(k)])}')
    ten = [(n, money_str(p)) for n, p in r_ten_most_expensive_products(db, {})]
    if ten != PUBLISHED_TEN_MOST_EXPENSIVE:
        failures.append(f'Ten Most Expensive Products: {ten}')
    for f in failures:
        print('PUBLISHED-DIFF', f)
    if not failures:
        print('OK       published figures: Category Sales for 1997 (8 categories), Order Subtotals 10248-10252, '
              'Ten Most Expensive Products')
    return len(failures)


def evidence(db):
    def line_variant(od, v):
        up, q, disc = od['UnitPrice'], od['Quantity'], od['Discount']
        if v == 'exact decimal (no float)':
            return (up * q * (1 - od['DiscountLiteral']) / 100).quantize(FOUR, ROUND_HALF_UP) * 100
        if v == 'double arithmetic (no float32)':
            x = float(up * q) * (1 - float(od['DiscountLiteral'])) / 100
            return Decimal(x).quantize(FOUR, ROUND_HALF_UP) * 100
        if v == 'double arithmetic, float32 only at the end':
            x = f32(float(up * q) * (1 - float(disc)) / 100)
            return Decimal(x).quantize(FOUR, ROUND_HALF_UP) * 100
        x = up * q * (1 - disc) / 100          # float32 at every step (Real arithmetic)
        if v == 'float32 steps, exact value, half away from zero':
            return x.exact().quantize(FOUR, ROUND_HALF_UP) * 100
        if v == 'float32 steps, exact value, half to even':
            return x.exact().quantize(FOUR, ROUND_HALF_EVEN) * 100
        if v == 'float32 steps, truncated':
            return x.exact().quantize(FOUR, ROUND_DOWN) * 100
        if v == 'float32 steps, 7 significant digits':
            return Decimal('%.7g' % float(x)).quantize(FOUR, ROUND_HALF_UP) * 100
        if v == 'float32 steps, 9 significant digits':
            return Decimal('%.9g' % float(x)).quantize(FOUR, ROUND_HALF_UP) * 100
        if v == 'float32 steps, shortest round-trip digits':
            s = next(t for t in ('%.{}g'.format(p) % float(x) for p in range(1, 10)) if f32(float(t)) == float(x))
            return Decimal(s).quantize(FOUR, ROUND_HALF_UP) * 100
        raise ValueError(v)

    variants = ['exact decimal (no float)', 'double arithmetic (no float32)',
                'double arithmetic, float32 only at the end',
                'float32 steps, exact value, half away from zero', 'float32 steps, exact value, half to even',
                'float32 steps, truncated', 'float32 steps, 7 significant digits',
                'float32 steps, 9 significant digits', 'float32 steps, shortest round-trip digits']
    lo, hi = year_range(1997)
    base = {(od['OrderID'], od['ProductID']): line_variant(od, variants[3]) for od in db.details}
    print('\n=== Rounding experiment: "Category Sales for 1997" against the published figures ===')
    for v in variants:
        sums = {}
        differing_lines = 0
        for od in db.details:
            val = line_variant(od, v)
            if val != base[(od['OrderID'], od['ProductID'])]:
                differing_lines += 1
            o = db.orders[od['OrderID']]
            if between(o['ShippedDate'], lo, hi):
                cn = db.categories[db.products[od['ProductID']]['CategoryID']]['CategoryName']
                sums[cn] = sums.get(cn, 0) + val
        ok = [c for c, s in PUBLISHED_CATEGORY_SALES_1997.items() if Decimal(s) == sums[c]]
        miss = {c: str(sums[c].quantize(CENT)) for c in PUBLISHED_CATEGORY_SALES_1997 if c not in ok}
        print(f'{len(ok)}/8 match  {v:48s} lines differing from the chosen rule: {differing_lines:4d}  {miss or ""}')
    ties = [(od['OrderID'], od['ProductID'], float(od['UnitPrice'] * od['Quantity'] * (1 - od['Discount']) / 100))
            for od in db.details
            if ((od['UnitPrice'] * od['Quantity'] * (1 - od['Discount']) / 100).exact() * 10000) % 1 == Decimal('0.5')]
    print('Lines whose float32 value is an exact tie at 4 decimals:', ties)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--script', default=DEFAULT_SCRIPT)
    ap.add_argument('--store', default=DEFAULT_STORE)
    ap.add_argument('--reports', default=DEFAULT_REPORTS)
    ap.add_argument('--facts', action='store_true')
    ap.add_argument('--evidence', action='store_true')
    ap.add_argument('-v', '--verbose', action='store_true')
    args = ap.parse_args()
    db = DB(args.script)
    conn, tmp = open_store(args.store)
    try:
        failures = compare(db, conn, load_queries(args.reports), args.verbose)
        failures += check_published(db)
    finally:
        conn.close()
        shutil.rmtree(tmp, ignore_errors=True)
    if args.evidence:
        evidence(db)
    if args.facts:
        facts(db)
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
