#!/usr/bin/env python3
"""Writes Sources/NorthwindWeb/openapi.json, the OpenAPI 3.1 description of /api/v1.

Edit this file, not the JSON: run `python3 scripts/openapi.py` after changing the API. WebAPIContractTests checks
real responses against the generated document, so a drift fails the tests.
"""
import json, os

def ref(name): return {"$ref": f"#/components/schemas/{name}"}
def opt(t): return {"type": [t, "null"]}
S, I, B, N = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {"type": "number"}
# The input limits of Sources/Northwind/Limits.swift: the server refuses anything outside them with a 422.
UNITS = {"type": "integer", "minimum": 0, "maximum": 1_000_000_000}
LINE_QUANTITY = {"type": "integer", "minimum": 1, "maximum": 1_000_000}
MAX_OFFSET = 100_000_000
MONEY_IN = {"type": ["string", "number"], "description": "An amount from 0.00 to 9,999,999.99: \"18.50\" (exact, preferred) or 18.5."}
VERSION_IN = {"type": "integer", "minimum": 1}
NAME = {"type": "string", "minLength": 1, "description": "Required; blank is refused."}
MONEY = {"type": "string", "pattern": r"^-?\d+\.\d{2}$", "description": "An exact amount, e.g. \"18.00\"."}
DATE = {"type": "string", "format": "date"}
def obj(required, props, extra=False):
    o = {"type": "object", "required": required, "properties": props}
    if not extra: o["additionalProperties"] = False
    return o
def page(item): return obj(["items", "limit", "offset"], {"items": {"type": "array", "items": ref(item)}, "total": I,
    "limit": I, "offset": I, "nextCursor": {**S, "description": "Pass as `cursor` for the next page; absent on the last."}})
def items(item): return obj(["items"], {"items": {"type": "array", "items": ref(item)}})

schemas = {
    "Problem": obj(["type", "title", "status", "detail"], {"type": S, "title": S, "status": I, "detail": S,
        "errors": {"type": "array", "items": obj(["field", "message"], {"field": S, "message": S})},
        "shortages": {"type": "array", "items": obj(["productID", "productName", "ordered", "inStock", "short"],
            {"productID": I, "productName": S, "ordered": I, "inStock": I, "short": I})}}),
    "Me": obj(["employeeID", "name", "login", "isManager"], {"employeeID": I, "name": S, "login": S, "title": opt("string"), "isManager": B}),
    "Summary": obj(["newOrders", "lowStockProducts"], {"newOrders": I, "lowStockProducts": I}),
    "Product": obj(["id", "recordID", "name", "unitPrice", "unitsInStock", "unitsOnOrder", "reorderLevel", "discontinued", "lowStock", "version"],
        {"id": I, "recordID": S, "name": S, "categoryID": opt("integer"), "categoryName": opt("string"), "supplierID": opt("integer"),
         "supplierName": opt("string"), "quantityPerUnit": opt("string"), "unitPrice": MONEY, "unitsInStock": I, "unitsOnOrder": I,
         "reorderLevel": I, "discontinued": B, "lowStock": B, "version": I}),
    "ProductInput": obj(["name"], {"name": NAME, "categoryID": opt("integer"), "supplierID": opt("integer"), "quantityPerUnit": opt("string"),
        "unitPrice": MONEY_IN, "unitsInStock": {**UNITS, "description": "Opening stock."},
        "unitsOnOrder": UNITS, "reorderLevel": UNITS, "discontinued": B}),
    "ProductPatch": obj(["version"], {"name": NAME, "categoryID": opt("integer"), "supplierID": opt("integer"), "quantityPerUnit": opt("string"),
        "unitPrice": MONEY_IN, "unitsInStock": {**UNITS, "description": "Only the current stock: stock changes by receiving or a stock take."},
        "unitsOnOrder": UNITS, "reorderLevel": UNITS, "discontinued": B,
        "version": {**VERSION_IN, "description": "The version that was read."}}),
    "ProductPage": page("Product"), "ProductList": items("Product"),
    "Movement": obj(["id", "delta", "reason", "createdAt"], {"id": I, "delta": I, "reason": {"type": "string",
        "enum": ["initial", "received", "stockTake", "shipped"]}, "note": opt("string"), "createdAt": S}),
    "MovementList": items("Movement"),
    "OrderSummary": obj(["number", "status", "customerCode", "customerName", "orderDate", "total", "supplyable"],
        {"number": S, "status": {"enum": ["new", "shipped", "cancelled"]}, "customerCode": S, "customerName": S,
         "employeeName": opt("string"), "orderDate": DATE, "requiredDate": DATE, "shippedDate": DATE, "total": MONEY, "supplyable": B}),
    "OrderPage": page("OrderSummary"),
    "Order": obj(["number", "status", "version", "customerCode", "customerName", "orderDate", "freight", "subtotal", "total", "supplyable", "lines"],
        {"number": S, "status": {"enum": ["new", "shipped", "cancelled"]}, "version": I, "customerCode": S, "customerName": S,
         "employeeID": opt("integer"), "employeeName": opt("string"), "orderDate": DATE, "requiredDate": DATE, "shippedDate": DATE,
         "shipVia": opt("integer"), "shipperName": opt("string"), "freight": MONEY, "subtotal": MONEY, "total": MONEY, "supplyable": B,
         "lines": {"type": "array", "items": obj(["productID", "productName", "unitPrice", "quantity", "discount", "total", "inStock", "short"],
            {"productID": I, "productName": S, "unitPrice": MONEY, "quantity": I, "discount": N, "total": MONEY, "inStock": I, "short": I})}}),
    "OrderInput": obj(["customerCode", "lines"], {"customerCode": NAME, "employeeID": {**I, "description": "Defaults to the signed-in employee."},
        "requiredDate": DATE, "shipVia": I, "freight": MONEY_IN,
        "lines": {"type": "array", "minItems": 1, "items": obj(["productID", "quantity"], {"productID": I, "quantity": LINE_QUANTITY,
            "discount": {**N, "minimum": 0, "maximum": 1, "description": "A fraction: 0.15 for 15%."}})}}),
    "Category": obj(["id", "recordID", "name", "version"], {"id": I, "recordID": S, "name": S, "description": opt("string"), "version": I}),
    "Supplier": obj(["id", "recordID", "companyName", "version"], {"id": I, "recordID": S, "companyName": S, **{k: opt("string") for k in
        ["contactName", "contactTitle", "address", "city", "region", "postalCode", "country", "phone", "fax", "homePage"]}, "version": I}),
    "Customer": obj(["id", "recordID", "code", "companyName", "version"], {"id": I, "recordID": S, "code": S, "companyName": S, **{k: opt("string") for k in
        ["contactName", "contactTitle", "address", "city", "region", "postalCode", "country", "phone", "fax"]}, "version": I}),
    "Employee": obj(["id", "recordID", "firstName", "lastName", "version"], {"id": I, "recordID": S, "firstName": S, "lastName": S,
        **{k: opt("string") for k in ["title", "titleOfCourtesy", "address", "city", "region", "postalCode", "country", "homePhone",
                                      "extension", "notes", "photoPath"]},
        "birthDate": {"type": ["string", "null"], "format": "date"}, "hireDate": {"type": ["string", "null"], "format": "date"},
        "reportsTo": opt("integer"), "version": I}),
    "Shipper": obj(["id", "recordID", "companyName", "version"], {"id": I, "recordID": S, "companyName": S, "phone": opt("string"), "version": I}),
}
for name in ["Category", "Supplier", "Customer", "Employee", "Shipper"]:
    schemas[name + "Page"] = page(name)
REPORT_VALUE = {"type": ["string", "integer", "number", "null"],
    "description": "Money columns (listed in moneyColumns) hold exact decimal strings such as \"440.00\"; dates are yyyy-MM-dd."}
schemas["ReportSummary"] = obj(["name", "original", "summary", "parameters"], {"name": S, "original": S, "summary": S,
    "parameters": {"type": "array", "items": obj(["name", "kind", "required", "help"], {"name": S,
        "kind": {"enum": ["year", "date", "customer", "order", "category", "product", "count"]}, "required": B, "defaultValue": S, "help": S})}})
schemas["ReportList"] = items("ReportSummary")
schemas["Report"] = obj(["report", "parameters", "columns", "moneyColumns", "rows", "offset", "limit", "complete"], {"report": ref("ReportSummary"),
    "parameters": {"type": "object", "additionalProperties": S, "description": "The values used, defaults included."},
    "columns": {"type": "array", "items": S}, "moneyColumns": {"type": "array", "items": S},
    "rows": {"type": "array", "items": {"type": "array", "items": REPORT_VALUE}},
    "offset": I, "limit": I, "complete": {**B, "description": "False when more rows follow this page."},
    "next": {**S, "description": "The path of the next page; absent on the last. Each page runs the report again: for every row, ask for format=csv."}})
# What a client may set: the record's fields without its ids and version, which the server keeps. POST needs the
# required ones; PATCH sends any of them with the version that was read, and null clears an optional one.
INPUTS = {"Category": (["name"], {"name": NAME, "description": opt("string")}),
          "Supplier": (["companyName"], {"companyName": NAME, **{k: opt("string") for k in ["contactName", "contactTitle", "address",
                       "city", "region", "postalCode", "country", "phone", "fax", "homePage"]}}),
          "Customer": (["code", "companyName"], {"code": NAME, "companyName": NAME, **{k: opt("string") for k in ["contactName",
                       "contactTitle", "address", "city", "region", "postalCode", "country", "phone", "fax"]}})}
for name, (required, props) in INPUTS.items():
    schemas[name + "Input"] = obj(required, props)
    schemas[name + "Patch"] = obj(["version"], {**props, "version": {**VERSION_IN, "description": "The version that was read."}})

def problem(*codes): return {str(c): {"$ref": f"#/components/responses/Problem"} for c in codes}
def ok(schema, code=200, desc="OK"):
    return {str(code): {"description": desc, "content": {"application/json": {"schema": ref(schema)}}}}
def body(schema): return {"required": True, "content": {"application/json": {"schema": ref(schema)}}}
def q(name, schema, desc): return {"name": name, "in": "query", "required": False, "schema": schema, "description": desc}
LIMIT = q("limit", {**I, "minimum": 1, "maximum": 1000}, "Page size (default 50).")
OFFSET = q("offset", {**I, "minimum": 0, "maximum": MAX_OFFSET}, "Rows to skip.")
CURSOR = q("cursor", S, "The `nextCursor` of the previous page.")
PAGING = [LIMIT, OFFSET, CURSOR]
def path_param(name, schema=I): return {"name": name, "in": "path", "required": True, "schema": schema}
AUTH = problem(401)

def op(summary, responses, params=(), request=None, tag=None):
    o = {"summary": summary, "responses": {**responses, **AUTH, **problem(400)}}
    if params: o["parameters"] = list(params)
    if request:
        o["requestBody"] = body(request)
        # A body that is too large, or not sent as application/json.
        o["responses"].update(problem(413, 415))
    return o

paths = {
    "/api/v1/me": {"get": op("Who is signed in", ok("Me"))},
    "/api/v1/summary": {"get": op("New orders and low-stock counts", ok("Summary"))},
    "/api/v1/products": {
        "get": op("List products", {**ok("ProductPage"), **problem(422)}, [q("categoryID", I, "Only this category."),
            q("supplierID", I, "Only this supplier."), q("lowStock", B, "Only products to reorder."),
            q("discontinued", B, "Only (or no) discontinued products."), q("sort", {"enum": ["name", "price", "stock", "id"]}, "Order."),
            q("desc", B, "Descending.")] + PAGING),
        "post": op("Add a product (managers)", {**ok("Product", 201, "Created"), **problem(403, 404, 409, 422)}, request="ProductInput")},
    "/api/v1/products/search": {"get": op("Search products by part of their name, accents and case ignored",
        {**ok("ProductList"), **problem(422)}, [{**q("q", S, "Part of a name."), "required": True}, LIMIT])},
    "/api/v1/products/{id}": {
        "parameters": [path_param("id")],
        "get": op("One product", {**ok("Product"), **problem(404)}),
        "patch": op("Change a product's details (managers); send the version you read", {**ok("Product"), **problem(403, 404, 409, 422)},
                    request="ProductPatch"),
        "delete": op("Delete a product no order mentions (managers)", {"204": {"description": "Deleted"}, **problem(403, 404, 409)})},
    "/api/v1/products/{id}/movements": {"parameters": [path_param("id")],
        "get": op("A product's recent stock movements", {**ok("MovementList"), **problem(404)})},
    "/api/v1/orders": {
        "get": op("List orders", {**ok("OrderPage"), **problem(404, 422)}, [q("status", {"enum": ["new", "shipped", "cancelled"]}, "Status."),
            q("q", S, "Order number prefix, or part of the customer's code or name."), q("customer", S, "A customer code.")] + PAGING),
        "post": op("Take an order", {**ok("Order", 201, "Created"), **problem(404, 409, 422)}, request="OrderInput")},
    "/api/v1/orders/{number}": {"parameters": [path_param("number", S)],
        "get": op("One order with lines, totals and availability", {**ok("Order"), **problem(404)})},
    "/api/v1/orders/{number}/execute": {"parameters": [path_param("number", S)],
        "post": op("Ship an order: every line must be in stock", {**ok("Order"), **problem(404, 409)})},
    "/api/v1/orders/{number}/cancel": {"parameters": [path_param("number", S)],
        "post": op("Cancel an unshipped order", {**ok("Order"), **problem(404, 409)})},
    "/api/v1/customers": {
        "get": op("List customers, or look them up with q", {**ok("CustomerPage"), **problem(422)}, [q("q", S, "Part of a code, company or contact.")] + PAGING),
        "post": op("Add a customer", {**ok("Customer", 201, "Created"), **problem(409, 422)}, request="CustomerInput")},
    "/api/v1/customers/{code}": {"parameters": [path_param("code", S)], "get": op("One customer", {**ok("Customer"), **problem(404)})},
    "/api/v1/employees": {"get": op("List employees", {**ok("EmployeePage"), **problem(422)}, PAGING)},
    "/api/v1/employees/{id}": {"parameters": [path_param("id")], "get": op("One employee", {**ok("Employee"), **problem(404)})},
    "/api/v1/shippers": {"get": op("List shippers", {**ok("ShipperPage"), **problem(422)}, PAGING)},
    "/api/v1/reports": {"get": op("The classic Northwind reports, the manager's reports, and their parameters (managers)", {**ok("ReportList"), **problem(403)})},
    "/api/v1/reports/{name}": {"parameters": [path_param("name", S)],
        "get": op("Run a report (managers); pass its parameters in the query, e.g. ?year=1997. JSON answers a page of rows; "
                  "format=csv sends every row, streamed as it is read",
                  {"200": {"description": "OK", "content": {"application/json": {"schema": ref("Report")},
                                                          "text/csv": {"schema": S}}}, **problem(403, 404, 422)},
                  [q(n, S, d) for n, d in [("year", "A year, e.g. 1997."), ("from", "The first day, yyyy-MM-dd."),
                   ("to", "The last day, included."), ("customer", "A customer's code."), ("order", "An order's number."),
                   ("category", "A category's name."), ("product", "A product's id or exact name."),
                   ("top", "How many rows a top list shows.")]]
                  + [q("format", {"enum": ["json", "csv"]}, "json (default): a page of rows; csv: every row, with a header row."),
                     q("limit", {**I, "minimum": 1, "maximum": 10000}, "Rows per JSON page (default 1000)."),
                     q("offset", {**I, "minimum": 0, "maximum": MAX_OFFSET}, "Rows to skip.")])},
}
for name, plural in [("Category", "categories"), ("Supplier", "suppliers")]:
    paths[f"/api/v1/{plural}"] = {
        "get": op(f"List {plural}", {**ok(name + "Page"), **problem(422)}, PAGING),
        "post": op(f"Add a {name.lower()} (managers)", {**ok(name, 201, "Created"), **problem(403, 409, 422)}, request=name + "Input")}
    paths[f"/api/v1/{plural}/{{id}}"] = {"parameters": [path_param("id")],
        "get": op(f"One {name.lower()}", {**ok(name), **problem(404)}),
        "patch": op(f"Change a {name.lower()} (managers); fields left out keep their values; version is required",
                    {**ok(name), **problem(403, 404, 409, 422)}, request=name + "Patch"),
        "delete": op(f"Delete a {name.lower()} nothing refers to (managers)", {"204": {"description": "Deleted"}, **problem(403, 404, 409)})}

document = {
    "openapi": "3.1.0",
    "info": {"title": "Northwind back office API", "version": "1.0.0",
             "description": "Everything the shop-floor pages do. Money is a decimal string. Errors are RFC 9457 problem details. "
                            "Authenticate with `Authorization: Bearer TOKEN` (`northwind employees token ID`)."},
    "servers": [{"url": "/"}],
    "security": [{"bearer": []}],
    "paths": paths,
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "responses": {"Problem": {"description": "A problem (RFC 9457)", "content": {"application/problem+json": {"schema": ref("Problem")}}}},
        "schemas": schemas},
}
out = os.path.join(os.path.dirname(__file__), "..", "Sources", "NorthwindWeb", "openapi.json")
with open(out, "w") as f:
    json.dump(document, f, indent=1, sort_keys=True)
    f.write("\n")
