"""Differences between two rating lists: who is new, changed, dropped or delisted.

A list is given either as a list date of the store (with the system) or as a file that
`elopipe publish` wrote (`.csv` or `.parquet`). Players are matched on player_id when both
lists come from the store, else on FIDE ID, else on name (namesakes of one file, without a FIDE
ID, on name and player_id).

Statuses: 'new' (only in B), 'changed' (rating differs), 'dropped' (only in A),
'delisted' (rated in A, in B's period but below the floor, so shown unrated: FIDE B.02
(2024) 7.2.1), 'unchanged'.

`diff_lists` columns: status String, player_id Int32 (null for files), fide_id Int64,
name String, rating_a Int32, rating_b Int32, delta Int32 (rating points, B − A),
games_b Int32, change_b Int32 (the change stored for B's period).
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import duckdb
import polars as pl

from elopipe.publish.lists import rating_list
from elopipe.read.control_chars import escape_controls
from elopipe.read.dates import parse_list_date

STATUS_ORDER = ["new", "changed", "delisted", "dropped", "unchanged"]


# what a side that names a list of the store looks like: `parse_list_date`'s two forms
_DATE_SHAPED = re.compile(r"\s*[0-9]{4}-[0-9]{2}(?:-[0-9]{2})?\s*")


def list_date_ref(ref: str) -> dt.date | None:
    """The list date a `--diff` side names: 'YYYY-MM-DD', or 'YYYY-MM' for that month's list (as
    `--list-date` and `rate --through` read it); None when `ref` names a file. Raises ListDateError
    (elopipe.read.dates: a usage error naming `--diff`) for a side of that shape that no list can
    have ('2024-13', '1200-01-01')."""
    return parse_list_date(ref, "--diff") if _DATE_SHAPED.fullmatch(ref) else None


def side_title(ref: str) -> str:
    """A `--diff` side for a message or a title: the list date it names (`list_date_ref`), else
    the file as given, its control characters written \\xNN (`escape_controls`)."""
    date = list_date_ref(ref)
    return date.isoformat() if date is not None else escape_controls(ref)


def load_list(con: duckdb.DuckDBPyConnection | None, system: str, ref: str) -> tuple[pl.DataFrame, dt.date | None]:
    """A list from a store date (`list_date_ref`) or a published CSV/Parquet file, with its date
    (None for a file). Raises LookupError / FileNotFoundError / ValueError on a bad `ref`."""
    date = list_date_ref(ref)
    if date is not None:
        if con is None:
            raise ValueError(f"{side_title(ref)} is a list date; a database is needed to read it")
        return rating_list(con, system, date), date
    path = Path(ref)
    if not path.exists():
        raise FileNotFoundError(f"{side_title(ref)} is neither a list date (YYYY-MM-DD or YYYY-MM) nor a file")
    # glob=False: the file named, never a pattern (Polars expands `*`, `?`, `[...]` in a path)
    if path.suffix.lower() == ".parquet":
        df = pl.read_parquet(path.absolute(), glob=False)
    elif path.suffix.lower() == ".csv":
        df = pl.read_csv(path.absolute(), glob=False, infer_schema_length=None)
    else:
        raise ValueError(f"{side_title(ref)}: a list file must be .csv or .parquet")
    missing = {"name", "rating"} - set(df.columns)
    if missing:
        raise ValueError(
            f"{side_title(ref)}: not a rating list, missing the column{'s' * (len(missing) > 1)}"
            f" {', '.join(sorted(missing))}"
        )
    return df, None


def diff_file_name(system: str, ref_a: str, ref_b: str) -> str:
    """File name of the diff CSV: 'diff_<system>_<A>_<B>.csv', where A and B are the list
    dates or the files' stems; a stem that `publish` wrote ('<system>_<date>') loses its
    system, which the name already gives (so not 'diff_fide_fide_2018-07-01_...')."""

    def label(ref: str) -> str:
        date = list_date_ref(ref)
        if date is not None:  # '2024-01' names the list of 2024-01-01, and the file says so
            return date.isoformat()
        stem = Path(ref).stem
        return stem.removeprefix(f"{system}_")

    return f"diff_{system}_{label(ref_a)}_{label(ref_b)}.csv"


def _key(df: pl.DataFrame, use_player_id: bool) -> pl.Series:
    """Each row's matching key: its player_id for two store lists; in a file its FIDE ID, else its
    name, and a name two rows of the file share (namesakes without a FIDE ID) with the row's
    player_id too, when the file has it, so that two namesakes are never paired crosswise."""
    if use_player_id:
        return df["player_id"].cast(pl.String)
    fid = df["fide_id"].cast(pl.String) if "fide_id" in df.columns else pl.Series([None] * df.height, dtype=pl.String)
    name = df["name"].cast(pl.String)
    pid = df["player_id"].cast(pl.String) if "player_id" in df.columns else None
    keys = pl.DataFrame({"fid": fid, "name": name}).select(
        pl.when(pl.col("fid").is_not_null() & (pl.col("fid") != ""))
        .then("f:" + pl.col("fid"))
        .otherwise("n:" + pl.col("name"))
        .alias("key")
    )
    if pid is None:
        return keys.to_series()
    shared = keys.with_columns(pid.alias("pid")).select(
        pl.when(pl.col("key").str.starts_with("n:") & pl.col("key").is_duplicated() & pl.col("pid").is_not_null())
        .then(pl.col("key") + "#" + pl.col("pid"))
        .otherwise(pl.col("key"))
        .alias("key")
    )
    return shared.to_series()


def _delisted(con: duckdb.DuckDBPyConnection | None, system: str, date_b: dt.date | None) -> set[int]:
    if con is None or date_b is None:
        return set()
    rows = con.execute(
        "SELECT player_id FROM rating_lists WHERE system = ? AND list_date = ? AND rating IS NULL",
        [system, date_b],
    ).fetchall()
    return {int(r[0]) for r in rows}


def diff_lists(con: duckdb.DuckDBPyConnection | None, system: str, ref_a: str, ref_b: str) -> pl.DataFrame:
    """Compare list A and list B (see the module docstring for inputs and columns)."""
    a, date_a = load_list(con, system, ref_a)
    b, date_b = load_list(con, system, ref_b)
    by_pid = date_a is not None and date_b is not None
    delisted = _delisted(con, system, date_b)

    def prep(df: pl.DataFrame, suffix: str) -> pl.DataFrame:
        cols = {
            "key": _key(df, by_pid),
            "player_id": df["player_id"].cast(pl.Int32) if "player_id" in df.columns else None,
            "fide_id": df["fide_id"].cast(pl.Int64) if "fide_id" in df.columns else None,
            "name": df["name"].cast(pl.String),
            f"rating_{suffix}": df["rating"].cast(pl.Int32),
        }
        if suffix == "b":
            for c in ("games", "change"):
                cols[f"{c}_b"] = df[c].cast(pl.Int32) if c in df.columns else None
        n = df.height
        return pl.DataFrame(
            {k: (v if v is not None else pl.Series(k, [None] * n, dtype=pl.Int64)) for k, v in cols.items()}
        )

    pa, pb = prep(a, "a"), prep(b, "b")
    joined = pa.join(pb, on="key", how="full", coalesce=True, suffix="_b_side")
    for c in ("player_id", "fide_id", "name"):
        joined = joined.with_columns(pl.coalesce(c, f"{c}_b_side").alias(c)).drop(f"{c}_b_side")
    in_a, in_b = pl.col("rating_a").is_not_null(), pl.col("rating_b").is_not_null()
    dropped = pl.lit("dropped")
    if by_pid and delisted:
        dropped = pl.when(pl.col("player_id").is_in(sorted(delisted))).then(pl.lit("delisted")).otherwise(dropped)
    out = joined.with_columns(
        pl.when(in_a & ~in_b)
        .then(dropped)
        .when(in_b & ~in_a)
        .then(pl.lit("new"))
        .when(pl.col("rating_a") != pl.col("rating_b"))
        .then(pl.lit("changed"))
        .otherwise(pl.lit("unchanged"))
        .alias("status"),
        (pl.col("rating_b") - pl.col("rating_a")).cast(pl.Int32).alias("delta"),
    )
    order = {s: i for i, s in enumerate(STATUS_ORDER)}
    out = out.with_columns(pl.col("status").replace_strict(order, return_dtype=pl.Int32).alias("_o")).sort(
        ["_o", "delta", "name"], descending=[False, True, False], nulls_last=True
    )
    return out.select(
        "status",
        pl.col("player_id").cast(pl.Int32),
        pl.col("fide_id").cast(pl.Int64),
        "name",
        "rating_a",
        "rating_b",
        "delta",
        pl.col("games_b").cast(pl.Int32),
        pl.col("change_b").cast(pl.Int32),
    )
