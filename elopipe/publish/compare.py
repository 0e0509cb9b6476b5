"""`elopipe compare A B`: two rating lists of one date, player by player, with the cause of each
difference (issue 18).

A side is a computed system ('fide', 'ffe'), a scenario stored under 'BASE@NAME' ('fide@v2017')
or an imported official list: 'official:fide', or 'official' alone for the official list of the
other side's system. The rows come from the SQL of `v_compare` (`elopipe.store.compare_view`, where
every cause column and the precedence of causes are documented), run for the one pair.

`Comparison.rows` columns (Polars, one row per player rated on either side): side_a, side_b String;
list_date Date; player_id Int32; fide_id Int64; national_id, name, match_key String; rating_a,
rating_b Int32 (rating points, NULL: not rated on that side); diff Int32 (rating_b − rating_a);
rank_a, rank_b Int32 (each list's own rank, as published: `v_rating_lists.rank` for a computed side,
the same rule over an official list: active players with the list's ID; NULL for the others);
games_a, games_b Int32 (games counted up to the date; against an official list: each list's games
of its period); games_only_a, games_only_b, seen_one_side, cap_differs, k_differs, rc_differs Int32
(games); k_a, k_b Int32; start_a, start_b Int32 (Ro of the first game, NULL: began unrated);
first_rating_a, first_rating_b Int32; delisted_a, delisted_b Int32 (lists below the floor); status
String ('same' | 'changed' | 'only_a' | 'only_b'); cause String (NULL when the ratings are equal, or
for a player an official list leaves out: nothing tells why); c_start … c_opponents Boolean (each
cause that applies).

Errors: `CompareError` (an ElopipeError, exit 2) for a side the store does not have, two sides
with no list date in common, or a date on which neither side has a rated player.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import NamedTuple

import duckdb
import polars as pl

from elopipe.publish.atomic import write_text
from elopipe.publish.csvsafe import write_csv
from elopipe.publish.html import render, system_label
from elopipe.publish.lists import nearest_dates
from elopipe.runtime.errors import ElopipeError
from elopipe.store.compare_view import COMPARE_CAUSES, compare_sql
from elopipe.store.frames import to_polars

OFFICIAL = "official"
#: Movers shown each way (largest rises, largest falls of B against A).
TOP_MOVERS = 10

_ONE_PAIR = "SELECT CAST($a AS VARCHAR) AS side_a, CAST($b AS VARCHAR) AS side_b, CAST($d AS DATE) AS list_date"


class CompareError(ElopipeError, ValueError):
    """Two sides that cannot be compared: a side the store does not have, no common list date, or
    no rated player on the date."""

    exit_code = 2


@dataclass
class Summary:
    """Players rated on both sides (`compared`), of them `changed` (a different rating),
    `mean_abs_diff` (mean |B − A| over the compared, rating points, Decimal to 0.1, halves up),
    players rated on one side only, the changed players per main cause (`causes`: each changed
    player counted once, by the first cause that applies, so the counts add up to `changed`) and
    the players rated on one side only per main cause (`one_side_causes`, e.g. 'floor': delisted
    on the other side)."""

    compared: int
    changed: int
    mean_abs_diff: Decimal
    only_a: int
    only_b: int
    causes: dict[str, int] = field(default_factory=dict)
    one_side_causes: dict[str, int] = field(default_factory=dict)


@dataclass
class Comparison:
    """Side A against side B on `list_date`: every row (`rows`), the `summary`, and the
    `TOP_MOVERS` largest rises (`up`) and falls (`down`) of B against A (same columns as `rows`)."""

    side_a: str
    side_b: str
    list_date: dt.date
    rows: pl.DataFrame
    summary: Summary
    up: pl.DataFrame
    down: pl.DataFrame


def _sides(con: duckdb.DuckDBPyConnection) -> dict[str, list[dt.date]]:
    """Every side the store holds, with its list dates."""
    rows = con.execute(
        "SELECT system, list(DISTINCT list_date ORDER BY list_date) FROM rating_lists GROUP BY 1 "
        "UNION ALL SELECT 'official:' || system, list(DISTINCT list_date ORDER BY list_date) "
        "FROM official_lists GROUP BY 1"
    ).fetchall()
    return {str(side): list(dates) for side, dates in rows}


def resolve_side(side: str, other: str) -> str:
    """The side key of `side`: 'official' alone names the official list of `other`'s system
    (a scenario 'fide@x' has the system 'fide'); any other text is kept, trimmed."""
    side = side.strip()
    if side == OFFICIAL:
        base = other.strip().removeprefix(f"{OFFICIAL}:").split("@", 1)[0]
        return f"{OFFICIAL}:{base}"
    return side


def check_sides(con: duckdb.DuckDBPyConnection, *sides: str) -> dict[str, list[dt.date]]:
    """Every side the store holds, with its list dates; raises CompareError, naming the sides it
    holds, for one of `sides` (side keys, as `resolve_side` makes them) it holds no row of."""
    known = _sides(con)
    for side in sides:
        if side not in known:
            names = ", ".join(sorted(known)) or "none (run `elopipe rate` first)"
            raise CompareError(f"the store has no list for {side!r}; sides it has: {names}")
    return known


def resolve(con: duckdb.DuckDBPyConnection, a: str, b: str, list_date: dt.date | None) -> tuple[str, str, dt.date]:
    """Side keys of `a` and `b` and the list date compared: `list_date`, else the latest date both
    sides have a list for. A `list_date` must be a list date of A or of B, within both sides' lists
    (not after a side's last list: its rating there would be carried from an older list; not
    before its first), and a list date of an official side.
    Raises CompareError for an unknown side, such a date, or no common date."""
    side_a, side_b = resolve_side(a, b), resolve_side(b, a)
    known = check_sides(con, side_a, side_b)
    if list_date is not None:
        _check_date(list_date, {side_a: known[side_a], side_b: known[side_b]})
        return side_a, side_b, list_date
    common = sorted(set(known[side_a]) & set(known[side_b]))
    if not common:
        raise CompareError(f"{side_a} and {side_b} have no list date in common; give one with --list-date YYYY-MM-DD")
    return side_a, side_b, common[-1]


def _check_date(day: dt.date, dates: dict[str, list[dt.date]]) -> None:
    """CompareError unless `day` is a list date of one side, within every side's lists (not before
    its first nor after its last), and a list date of an official side (which counts on its own
    date only)."""
    if not any(day in d for d in dates.values()):
        near = "; ".join(f"{side}: {nearest_dates(d, day)}" for side, d in dates.items())
        raise CompareError(f"neither side has a list dated {day}; nearest lists: {near}")
    for side, d in dates.items():
        if d[-1] < day:
            raise CompareError(f"{side}'s last list is {d[-1]}, before {day}: give a date up to {d[-1]}")
        if d[0] > day:
            raise CompareError(f"{side}'s first list is {d[0]}, after {day}: give a date from {d[0]}")
        if side.startswith(f"{OFFICIAL}:") and day not in d:
            # an imported list counts on its own date only
            raise CompareError(f"{side} has no list dated {day}; its nearest: {nearest_dates(d, day)}")


def compare(con: duckdb.DuckDBPyConnection, a: str, b: str, list_date: dt.date | None = None) -> Comparison:
    """Compare side `a` with side `b` on `list_date` (default: see `resolve`); works on a
    read-only connection. Raises CompareError (see the module docstring)."""
    side_a, side_b, date = resolve(con, a, b, list_date)
    rows = to_polars(con.sql(compare_sql(_ONE_PAIR), params={"a": side_a, "b": side_b, "d": date}))
    if rows.height == 0:
        raise CompareError(f"neither {side_a} nor {side_b} has a rated player on {date}")
    rows = rows.sort(
        [pl.col("diff").abs(), "rating_b", "rating_a", "name"], descending=[True, True, True, False], nulls_last=True
    )
    changed = rows.filter(pl.col("status") == "changed")
    return Comparison(
        side_a,
        side_b,
        date,
        rows,
        _summary(rows),
        changed.filter(pl.col("diff") > 0).sort(["diff", "name"], descending=[True, False]).head(TOP_MOVERS),
        changed.filter(pl.col("diff") < 0).sort(["diff", "name"]).head(TOP_MOVERS),
    )


def _summary(rows: pl.DataFrame) -> Summary:
    both = rows.filter(pl.col("status").is_in(["same", "changed"]))
    total = int(both.select(pl.col("diff").abs().sum()).item() or 0)
    mean = (Decimal(total) / both.height).quantize(Decimal("0.1"), ROUND_HALF_UP) if both.height else Decimal(0)
    changed = rows.filter(pl.col("status") == "changed")
    one_side = rows.filter(pl.col("status").is_in(["only_a", "only_b"]) & pl.col("cause").is_not_null())
    counts = dict(changed.group_by("cause").len().iter_rows())
    one_counts = dict(one_side.group_by("cause").len().iter_rows())
    return Summary(
        compared=both.height,
        changed=changed.height,
        mean_abs_diff=mean,
        only_a=rows.filter(pl.col("status") == "only_a").height,
        only_b=rows.filter(pl.col("status") == "only_b").height,
        causes={c: int(counts[c]) for c in COMPARE_CAUSES if c in counts},
        one_side_causes={c: int(one_counts[c]) for c in COMPARE_CAUSES if c in one_counts},
    )


def file_stem(cmp: Comparison) -> str:
    """'compare-fide-vs-ffe-2022-09-01': the outputs' file name, '@' and ':' made safe."""
    return stem_of(cmp.side_a, cmp.side_b, cmp.list_date)


def stem_of(side_a: str, side_b: str, list_date: dt.date) -> str:
    """`file_stem` of the comparison of `side_a` and `side_b` on `list_date`, known before it is made."""
    safe = str.maketrans({"@": "_", ":": "_", "/": "_"})
    return f"compare-{side_a.translate(safe)}-vs-{side_b.translate(safe)}-{list_date}"


def blocked_output(out: Path, side_a: str, side_b: str, list_date: dt.date) -> Path | None:
    """The first of the comparison's output paths in folder `out` that a folder holds (the file
    cannot be written there), or None: said before the comparison is made, which takes a while."""
    stem = stem_of(side_a, side_b, list_date)
    return next((p for p in (out / f"{stem}.csv", out / f"{stem}.html") if p.is_dir()), None)


class Written(NamedTuple):
    """What `write_outputs` wrote: the paths, and the user's files it found under their names and
    kept first ((name, kept as), relative to the output folder: `manifest.protecting`)."""

    paths: list[Path]
    set_aside: list[tuple[str, str]]


def write_outputs(cmp: Comparison, out: Path) -> Written:
    """Write the full comparison as CSV and a standalone HTML page into the folder `out` (made if
    missing), through its manifest: a file under one of their names that elopipe did not write is
    kept first under `.elopipe-kept/`, as `report`, `player` and a publish keep it (it was
    overwritten). Raises OSError (WriteError) when a file cannot be written."""
    from elopipe.publish.manifest import protecting

    out.mkdir(parents=True, exist_ok=True)
    stem = file_stem(cmp)
    csv_path, html_path = out / f"{stem}.csv", out / f"{stem}.html"
    with protecting(out) as manifest:
        write_csv(cmp.rows, csv_path)
        write_text(html_path, render_html(cmp))
    return Written([csv_path, html_path], manifest.set_aside)


# Columns of the HTML page: (column, header, numeric)
_HTML_COLUMNS = [
    ("name", "Name", False), ("fide_id", "FIDE ID", True), ("rating_a", "Rating A", True),
    ("rating_b", "Rating B", True), ("diff", "B − A", True), ("rank_a", "Rank A", True), ("rank_b", "Rank B", True),
    ("games_a", "Games A", True), ("games_b", "Games B", True), ("games_only_a", "Only A", True),
    ("games_only_b", "Only B", True), ("status", "Status", False), ("cause", "Cause", False),
    ("match_key", "Matched on", False),
]  # fmt: skip


def side_label(side: str) -> str:
    """A side in words: 'FIDE standard', 'FIDE standard, scenario v2017', 'official FIDE standard list'."""
    if side.startswith(f"{OFFICIAL}:"):
        return f"official {system_label(side.split(':', 1)[1])} list"
    base, _, scenario = side.partition("@")
    return f"{system_label(base)}, scenario {scenario}" if scenario else system_label(base)


def render_html(cmp: Comparison) -> str:
    """The standalone HTML page of a comparison (template `compare.html.j2`)."""
    # 'Matched on' tells how an official row found its player; between computed sides it is always player_id
    official = OFFICIAL in (cmp.side_a.split(":", 1)[0], cmp.side_b.split(":", 1)[0])
    shown = [c for c in _HTML_COLUMNS if official or c[0] != "match_key"]
    cols = [c for c, _, _ in shown]

    def table(df: pl.DataFrame) -> list[list[str]]:
        return [["" if v is None else str(v) for v in r] for r in df.select(cols).iter_rows()]

    return render(
        "compare.html.j2",
        title=f"{cmp.side_a} vs {cmp.side_b}, {cmp.list_date}",
        side_a=cmp.side_a,
        side_b=cmp.side_b,
        label_a=side_label(cmp.side_a),
        label_b=side_label(cmp.side_b),
        list_date=str(cmp.list_date),
        summary=cmp.summary,
        columns=[{"label": h, "num": n} for _, h, n in shown],
        up=table(cmp.up),
        down=table(cmp.down),
        rows=table(cmp.rows.filter(pl.col("status") != "same")),
        causes=COMPARE_CAUSES,
    )
