"""Export the store as Parquet for other tools (`elopipe export --parquet DIR`).

Every table of `elopipe.store.schema.TABLES` becomes Parquet under DIR:

- a table with `system` and `list_date` columns (rating_lists, rating_changes,
  tournament_ratings, rating_discrepancies, ffe_details, official_lists) is written as a
  Hive-partitioned dataset `DIR/<table>/system=<s>/list_date=<d>/*.parquet`;
- every other table (and a partitioned one that is empty, so its schema is kept) is one
  file `DIR/<table>.parquet`.

Read back with e.g. `duckdb.sql("FROM read_parquet('DIR/rating_lists/**/*.parquet',
hive_partitioning=true)")` or `polars.scan_parquet('DIR/rating_lists/**/*.parquet')`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

from elopipe.store.schema import TABLES


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]


def export_parquet(con: duckdb.DuckDBPyConnection, out_dir: Path) -> list[Path]:
    """Write every table to `out_dir` (see the module docstring); return the paths written
    (one per table: a file or a partition folder). An existing output of a table is replaced.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for table in TABLES:
        cols = _columns(con, table)
        n = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        folder, single = out_dir / table, out_dir / f"{table}.parquet"
        if folder.exists():
            shutil.rmtree(folder)
        single.unlink(missing_ok=True)
        target = str(folder if ("system" in cols and "list_date" in cols and n) else single)
        quoted = target.replace("'", "''")
        if target == str(folder):
            con.execute(
                f"COPY (SELECT * FROM {table}) TO '{quoted}' (FORMAT PARQUET, PARTITION_BY (system, list_date))"
            ).fetchall()  # DuckDB 2: finish each result so the caller's connection stays usable
        else:
            con.execute(f"COPY (SELECT * FROM {table}) TO '{quoted}' (FORMAT PARQUET)").fetchall()
        written.append(Path(target))
    return written
