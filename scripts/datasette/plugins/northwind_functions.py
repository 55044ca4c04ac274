"""Datasette plugin: the SQL functions Northwind registers on every connection, so both servers run the same SQL.

sqlserver_key folds text as Sources/NorthwindStore/ReportFunctions.swift does (NFD, drop combining marks, drop
apostrophes and hyphens, lowercase); f32 rounds to IEEE-754 binary32.
"""
import struct
import unicodedata

from datasette import hookimpl


def sqlserver_key(text):
    if text is None:
        return None
    stripped = "".join(
        c for c in unicodedata.normalize("NFD", text) if not 0x300 <= ord(c) <= 0x36F and c not in "'-"
    )
    return stripped.lower()


def f32(x):
    return None if x is None else struct.unpack("f", struct.pack("f", x))[0]


@hookimpl
def prepare_connection(conn):
    conn.create_function("sqlserver_key", 1, sqlserver_key, deterministic=True)
    conn.create_function("f32", 1, f32, deterministic=True)
