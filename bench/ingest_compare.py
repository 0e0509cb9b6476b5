"""Check that two builds of elopipe store the same rows: ingest files with the build on the path,
dump every table, and compare two dumps row for row (ids included).

A change to the ingest path (reader, identity, loader) must not change a single stored row. Run
the ingest once with each build (the other one through ``PYTHONPATH``), each file (or each given
group of files) into a fresh store, then compare:

    PYTHONPATH=/path/to/other/build .venv/bin/python bench/ingest_compare.py dump OUT_A FILE...
    .venv/bin/python bench/ingest_compare.py dump OUT_B FILE...
    .venv/bin/python bench/ingest_compare.py compare OUT_A OUT_B

``dump`` ingests each FILE into its own store (``--together``: all into one store, in order) and
writes each table of each store as Parquet under OUT (one folder per store). ``compare`` exits 1
and names the table and the first differing rows when any table differs. The clock's columns
(``source_files.ingested_at``, ``player_merges.decided_at``...) are left out of the comparison.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import duckdb
import polars as pl

# the clock's columns: when a row was written, not what it holds
_CLOCK = {
    "source_files": ["ingested_at"], "player_merges": ["decided_at"], "store_schema": ["applied_at"],
    "rating_inputs": ["saved_at"], "rating_runs": ["started_at"], "scenarios": ["created_at", "rated_at"],
}  # fmt: skip


def dump(out: Path, files: list[Path], together: bool) -> None:
    from elopipe.ingest.driver import ingest_paths

    groups = [files] if together else [[f] for f in files]
    out.mkdir(parents=True, exist_ok=True)
    for i, group in enumerate(groups):
        name = f"{i:03d}_{group[0].name}"
        with tempfile.TemporaryDirectory(prefix="elopipe-cmp-", dir=out) as tmp:
            db = Path(tmp) / "store.duckdb"
            summary = ingest_paths([*group], db)
            print(f"{name}: {summary.line()}")
            con = duckdb.connect(str(db), read_only=True)
            folder = out / name
            folder.mkdir(exist_ok=True)
            tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
            for table in tables:
                frame = con.sql(f"SELECT * FROM {table}").pl()
                frame = frame.drop([c for c in _CLOCK.get(table, []) if c in frame.columns])
                # JSON and other extension types as text: the comparison is of values
                frame = frame.with_columns(pl.col(c).cast(pl.String) for c, t in frame.schema.items() if t == pl.Object)
                frame.write_parquet(folder / f"{table}.parquet")
            con.close()


def compare(a: Path, b: Path) -> int:
    bad = 0
    stores = sorted({p.name for p in a.iterdir() if p.is_dir()} | {p.name for p in b.iterdir() if p.is_dir()})
    for store in stores:
        ta = {p.stem for p in (a / store).glob("*.parquet")}
        tb = {p.stem for p in (b / store).glob("*.parquet")}
        if ta != tb:
            print(f"{store}: tables differ: {sorted(ta ^ tb)}")
            bad += 1
            continue
        rows, before = 0, bad
        for table in sorted(ta):
            fa, fb = pl.read_parquet(a / store / f"{table}.parquet"), pl.read_parquet(b / store / f"{table}.parquet")
            rows += fa.height
            if fa.columns != fb.columns or fa.schema != fb.schema:
                print(f"{store}.{table}: columns differ: {fa.schema} / {fb.schema}")
                bad += 1
                continue
            key = fa.columns
            sa, sb = fa.sort(key, nulls_last=True), fb.sort(key, nulls_last=True)
            if not sa.equals(sb, null_equal=True):
                print(f"{store}.{table}: {fa.height} / {fb.height} rows differ, e.g.:")
                print(sa.join(sb, on=key, how="anti", nulls_equal=True).head(3))
                print(sb.join(sa, on=key, how="anti", nulls_equal=True).head(3))
                bad += 1
        print(f"{store}: {len(ta)} tables, {rows} rows {'differ' if bad > before else 'equal'}")
    print("all equal" if not bad else f"{bad} difference(s)")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("files", type=Path, nargs="+")
    d.add_argument("--together", action="store_true")
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.cmd == "dump":
        dump(args.out, args.files, args.together)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
