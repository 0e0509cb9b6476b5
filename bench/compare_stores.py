"""Check: two stores hold the same rows, table by table, ids included (issue 27, item 5).

Used to show that a faster ingest stores exactly what the code before it stored: ingest the same
files into two copies of one store, once with each checkout (``bench/federation.py --python``
measures either), then compare them. Every base table is compared row for row, all columns
(ids included) but the times of the ingest itself (``source_files.ingested_at`` and the other
TIMESTAMP columns that record when a row was written, listed in `CLOCK_COLUMNS`), as sorted
multisets of rows. Prints one line per table and exits 1 when any differs.

Usage: ``.venv/bin/python bench/compare_stores.py A.duckdb B.duckdb``
"""

from __future__ import annotations

import sys

import duckdb

# columns that hold the wall-clock time a row was written: they differ between any two runs
CLOCK_COLUMNS = {"ingested_at", "decided_at", "computed_at", "created_at", "imported_at", "merged_at", "run_at"}


def _columns(con: duckdb.DuckDBPyConnection, db: str, table: str) -> list[tuple[str, str]]:
    return con.execute(
        "SELECT column_name, data_type FROM information_schema.columns"
        " WHERE table_catalog = ? AND table_name = ? ORDER BY ordinal_position",
        [db, table],
    ).fetchall()


def compare(a: str, b: str) -> int:
    """Tables that differ between stores `a` and `b` (printed), 0 when none."""
    con = duckdb.connect()
    con.execute("ATTACH ? AS a (READ_ONLY)", [str(a)])
    con.execute("ATTACH ? AS b (READ_ONLY)", [str(b)])
    tables = [
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_catalog = 'a'"
            " AND table_type = 'BASE TABLE' ORDER BY table_name"
        ).fetchall()
    ]
    bad = 0
    for table in tables:
        cols_a, cols_b = _columns(con, "a", table), _columns(con, "b", table)
        if cols_a != cols_b:
            print(f"{table}: columns differ")
            bad += 1
            continue
        cols = ", ".join(f'"{c}"' for c, t in cols_a if c not in CLOCK_COLUMNS and not t.startswith("TIMESTAMP"))
        n_a = con.execute(f"SELECT count(*) FROM a.{table}").fetchone()
        diff = "SELECT count(*) FROM (SELECT {c} FROM {x}.{t} EXCEPT ALL SELECT {c} FROM {y}.{t})"
        only_a = con.execute(diff.format(c=cols, x="a", y="b", t=table)).fetchone()
        only_b = con.execute(diff.format(c=cols, x="b", y="a", t=table)).fetchone()
        assert n_a and only_a and only_b
        same = only_a[0] == 0 and only_b[0] == 0
        bad += not same
        verdict = "same" if same else f"DIFFER: {only_a[0]} only in A, {only_b[0]} only in B"
        print(f"{table:28} {n_a[0]:>9,} rows  {verdict}")
    return bad


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    raise SystemExit(1 if compare(sys.argv[1], sys.argv[2]) else 0)
