"""Writes Datasette's metadata: canned queries with Northwind's own SQL, read from the sources so neither drifts.

usage: metadata.py REPO_ROOT > metadata.json
"""
import json
import re
import sys

root = sys.argv[1]


def swift_string(path, name):
    text = open(f"{root}/{path}", encoding="utf-8").read()
    match = re.search(name + r' = """\n(.*?)"""', text, re.S)
    if not match:
        sys.exit(f"{name} not found in {path}: update scripts/datasette/metadata.py")
    return match.group(1).strip()


def report_sql(key):
    text = open(f"{root}/Sources/Northwind/Reports/reports.sql", encoding="utf-8").read()
    chunk = text.split(f"-- name: {key}\n")[1].split("\n-- name: ")[0]
    return "\n".join(line for line in chunk.splitlines() if not line.startswith("--")).strip().rstrip(";")


select = swift_string("Sources/Northwind/Catalogue/Products.swift", "productRowSelect")
search = swift_string("Sources/Northwind/Catalogue/Products.swift", "searchSQL")
# Northwind binds the pattern "word"*, the candidates (50 for a limit of 20) and the limit; Datasette binds named
# parameters as text.
search = search.replace("MATCH ? LIMIT ?", "MATCH '\"' || :q || '\"*' LIMIT 50").replace("LIMIT ?", "LIMIT 20")
queries = {
    "search": search,
    "product": select + " WHERE products.id = CAST(:id AS INTEGER)",
    "ten_most_expensive_products": report_sql("ten_most_expensive_products"),
    "category_sales": report_sql("category_sales_for_1997").replace(":year", "CAST(:year AS INTEGER)"),
    "sales_by_category": report_sql("sales_by_category").replace(":year", "CAST(:year AS INTEGER)"),
    # Datasette binds a missing parameter as '': NULL to Northwind. (":top" first: ":to" is its prefix.)
    "top_customers": report_sql("top_customers").replace(":top", "10").replace(":from", "nullif(:from, '')")
    .replace(":to", "nullif(:to, '')"),
}
json.dump({"databases": {"nw": {"queries": {k: {"sql": v} for k, v in queries.items()}}}}, sys.stdout, indent=2)
