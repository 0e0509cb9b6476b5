"""Export the store as Parquet for other tools (`elopipe export --parquet DIR`).

Every table of `elopipe.store.schema.TABLES` becomes Parquet under DIR:

- a table with `system` and `list_date` columns (rating_lists, rating_changes,
  tournament_ratings, rating_discrepancies, ffe_details, official_lists) is written as a
  Hive-partitioned dataset `DIR/<table>/system=<s>/list_date=<d>/*.parquet`;
- every other table (and a partitioned one that is empty, so its schema is kept) is one
  file `DIR/<table>.parquet`.

DIR is elopipe's own: a folder that does not exist yet or is empty, or one an earlier export
marked with `DIR/.elopipe-export` (JSON: the table outputs it wrote). Any other folder is refused
(`ExportFolderError`) before anything is written, so `export --parquet ~` cannot touch `~/games`.
In a marked folder only the outputs the marker lists are replaced, and only when they still hold
nothing but what DuckDB's COPY writes (`system=<s>/list_date=<d>/data_<n>.parquet`); the user's
other files stay.

Read back with e.g. `duckdb.sql("FROM read_parquet('DIR/rating_lists/**/*.parquet',
hive_partitioning=true)")` or `polars.scan_parquet('DIR/rating_lists/**/*.parquet')`.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import duckdb

from elopipe.publish.atomic import write_text
from elopipe.runtime.errors import ElopipeError
from elopipe.store.schema import TABLES

#: The file that marks a folder as an elopipe export; it lists the outputs the export wrote.
EXPORT_MARKER = ".elopipe-export"
#: the name DuckDB's COPY gives each file of a partition
_COPY_FILE = re.compile(r"data_[0-9]+\.parquet")


class ExportFolderError(ElopipeError, ValueError):
    """The folder given to `export --parquet` is not elopipe's to write: it holds files of the
    user's and no export marker, or one of the table outputs holds something elopipe did not
    write. Nothing is written or removed. A usage error (exit 2), as an output folder that is a
    file is."""

    exit_code = 2


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]


def _outputs() -> set[str]:
    """Every name an export may write directly under DIR: `<table>` and `<table>.parquet`."""
    return {n for t in TABLES for n in (t, f"{t}.parquet")}


def _marked(out_dir: Path) -> set[str]:
    """The outputs the marker of `out_dir` lists, kept to the names an export writes (the marker
    is a file anyone can edit: it can never name a path outside a table's own output)."""
    try:
        listed = json.loads((out_dir / EXPORT_MARKER).read_text(encoding="utf-8")).get("written", [])
    except (OSError, ValueError, AttributeError):
        return set()
    return {n for n in listed if isinstance(n, str)} & _outputs()


def _only_copy_output(path: Path) -> bool:
    """True when `path` holds only what DuckDB's COPY writes: a `.parquet` file, or a folder of
    partitions, `system=<s>/list_date=<d>/data_<n>.parquet` and nothing else (a file of the
    user's anywhere in it, even a `.parquet` one, makes the folder the user's too)."""
    if path.is_symlink():
        return False
    if path.is_file():
        return path.suffix == ".parquet"
    for p in path.rglob("*"):
        parts = p.relative_to(path).parts
        keys = all("=" in part for part in parts[:2])
        if p.is_symlink() or not keys:
            return False
        if p.is_dir() and len(parts) <= 2:
            continue
        if not (p.is_file() and len(parts) == 3 and _COPY_FILE.fullmatch(parts[2])):
            return False
    return True


def _claim(out_dir: Path) -> set[str]:
    """Check that `out_dir` is elopipe's to write (see the module docstring) and return the outputs
    an earlier export wrote there; raise `ExportFolderError` naming the path otherwise."""
    if not out_dir.exists():
        out_dir.mkdir(parents=True)
        return set()
    if not out_dir.is_dir():
        out_dir.mkdir()  # FileExistsError: the CLI's one line "cannot use DIR: File exists"
    if not (out_dir / EXPORT_MARKER).is_file():
        if any(out_dir.iterdir()):
            raise ExportFolderError(
                f"{out_dir} is not an elopipe export folder (it holds other files and no {EXPORT_MARKER}): "
                "nothing was written; give a new or empty folder"
            )
        return set()
    ours = _marked(out_dir)
    for name in sorted(_outputs()):
        path = out_dir / name
        if not (path.exists() or path.is_symlink()):
            continue
        if name not in ours or not _only_copy_output(path):
            raise ExportFolderError(
                f"{path} was not written by elopipe's export (or holds other files): nothing was written; "
                "move it away or give a new folder"
            )
    return ours


def _mark(out_dir: Path, written: set[str]) -> None:
    write_text(out_dir / EXPORT_MARKER, json.dumps({"written": sorted(written)}, indent=1) + "\n")


def export_parquet(con: duckdb.DuckDBPyConnection, out_dir: Path) -> list[Path]:
    """Write every table to `out_dir` (see the module docstring); return the paths written
    (one per table: a file or a partition folder). An earlier export's output of a table is
    replaced. Raises `ExportFolderError` when `out_dir` is not elopipe's to write.
    """
    out_dir = out_dir.absolute()  # DuckDB reads a leading '~' as the home folder
    ours = _claim(out_dir)
    written: list[Path] = []
    for table in TABLES:
        cols = _columns(con, table)
        n = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        folder, single = out_dir / table, out_dir / f"{table}.parquet"
        partitioned = "system" in cols and "list_date" in cols and n
        target = folder if partitioned else single
        # the marker names an output before it is written: an export killed midway can run again
        ours |= {target.name}
        _mark(out_dir, ours)
        for old in (folder, single):
            if old.name in ours and old.is_dir():
                shutil.rmtree(old)
            elif old.name in ours:
                old.unlink(missing_ok=True)
        quoted = str(target).replace("'", "''")
        if partitioned:
            con.execute(
                f"COPY (SELECT * FROM {table}) TO '{quoted}' (FORMAT PARQUET, PARTITION_BY (system, list_date))"
            ).fetchall()  # DuckDB 2: finish each result so the caller's connection stays usable
        else:
            con.execute(f"COPY (SELECT * FROM {table}) TO '{quoted}' (FORMAT PARQUET)").fetchall()
        written.append(target)
    return written
