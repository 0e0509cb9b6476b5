"""Official list files as the tests write them (FIDE's fixed-width TXT layouts) and an in-memory store."""

from __future__ import annotations

import duckdb

from tests.helpers.schema_store import schema_connect

STD = [("ID Number", 15), ("Name", 61), ("Fed", 4), ("Sex", 4), ("Tit", 5), ("WTit", 5), ("OTit", 15),
       ("FOA", 4), ("SRtng", 6), ("SGm", 4), ("SK", 3), ("B-day", 6), ("Flag", 4)]  # fmt: skip
FOA = [("ID Number", 15), ("Name", 61), ("Fed", 4), ("Sex", 4), ("Tit", 5), ("WTit", 5), ("OTit", 15),
       ("FOA", 4), ("SRtng", 6), ("SGm", 4), ("SK", 3), ("RRtng", 6), ("RGm", 4), ("Rk", 3),
       ("BRtng", 6), ("BGm", 4), ("BK", 3), ("B-day", 6), ("Flag", 4)]  # fmt: skip


def fixed(layout, rows: list[list[str]]) -> str:
    lines = ["".join(lab.ljust(w) for lab, w in layout).rstrip()]
    lines += ["".join(v.ljust(w)[:w] for v, (_, w) in zip(r, layout, strict=True)).rstrip() for r in rows]
    return "\n".join(lines) + "\n"


def memory_store() -> duckdb.DuckDBPyConnection:
    """An empty store in memory, with the schema."""
    con = schema_connect()
    return con
