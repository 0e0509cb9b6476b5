"""Whether anything a rating run reads has changed since the system's last run (issue 27).

A rating run reads the store's games, events, entries, players, identity decisions, imported
official lists and, for a rapid system or a scenario, the lists of its companion system
(`elopipe.rating.scenarios.companion`). `fingerprint` digests all of them in DuckDB: the games
(the columns a rating reads), events and entries event by event (`elopipe.rating.event_inputs`,
the digests the FIDE engine's period digests then take without reading the games again), each
other input table by its row count, and the sum and the XOR of the rows' hashes
(order-independent; the sum keeps two equal rows from cancelling), together with the run's
options, the stored dates that the date `elopipe.read.dates.latest_plausible` leaves out
(`store_io.implausible_dates_digest`: not the date itself, which moves every day) and the
bytes of the rating and reading code (a new version re-rates). `outputs` digests the
system's own period digests and list rows (and counts its other result rows), so a preview
(``--through``), a dropped scenario or a hand edit of its results makes the engine run (its
period digests then decide what it rewrites).

After a full run (no ``through``) `save` keeps both digests and the run's summary in
``rating_inputs``; the next run whose digests are the same returns that summary without loading
a game (`unchanged`), and writes nothing. Any difference, however small (a re-ingested file, a
players merge or split, a TRF replacing another, an imported list, another option), runs the
engine as before, which finds the periods that changed from its per-period digests
(``rating_period_digests``) and rewrites only the lists whose rows differ. A preview `forget`s
the row, so the next run computes.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from elopipe.rating import event_inputs, scenarios, store_io
from elopipe.rating.summary import RateSummary, RoFar

# Every table a rating engine reads (`elopipe.rating.store_io`, `game_rows`, `norms_store`,
# `faults`) or that a correction of the inputs changes: a table added to the store that the
# engines read must be added here
INPUT_TABLES = (
    "source_files",
    "tournaments",
    "players",
    "tournament_players",
    "games",
    "unplayed_rounds",
    "teams",
    "player_aliases",
    "player_merges",
    "game_sources",
    "official_lists",
)
# the rows of an input table a rating can read, when not all: a rating reads a file's ledger row only
# through its events (the line of an event it failed on names its file), so the row of a file that
# holds none (the same bytes under another name, a rejected file) changes no list; digested, such a
# row made the next `rate` compute every period again and write nothing
_READ_ROWS = {"source_files": "file_id IN (SELECT file_id FROM tournaments)"}
# the companion systems whose lists a system reads (standard ratings credited to rapid/blitz players)
_COMPANIONS = {"fide-rapid": ("fide",), "fide-blitz": ("fide",), "ffe-rapid": ("ffe", "fide")}
# the packages whose code decides a list or its summary (the readers' rate-of-play rules, the store's views)
_CODE = ("rating", "read", "store", "runtime")
# the system's result tables whose rows `outputs` counts (its lists and period digests it hashes)
_COUNTED = ("rating_changes", "tournament_ratings", "rating_discrepancies", "ffe_details")


def _table_digest(table: str, where: str = "") -> str:
    label = (table + where).replace("'", "")
    return (
        f"SELECT '{label}' AS part, count(*)::VARCHAR || ':' || "
        f"coalesce(sum(hash(x)::HUGEINT), 0)::VARCHAR || ':' || coalesce(bit_xor(hash(x)), 0)::VARCHAR AS h "
        f"FROM {table} x {where and 'WHERE ' + where}"
    )


@cache
def code_digest() -> str:
    """SHA-1 of the modules and data files of elopipe's packages named in `_CODE`, by path."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha1()
    for pkg in _CODE:
        for path in sorted((root / pkg).rglob("*")):
            if path.is_file() and path.suffix in (".py", ".csv", ".json"):
                h.update(str(path.relative_to(root)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def fingerprint(
    con: duckdb.DuckDBPyConnection,
    system: str,
    rules: str | None,
    params: Mapping[str, Any],
    events: pl.DataFrame | None = None,
) -> str:
    """SHA-1 of everything a run of `system` with `rules` and `params` reads (module docstring).
    `events`: `event_inputs.digests` of the store (None: read here), which stand for the rows of
    `event_inputs.TABLES`."""
    base, _ = scenarios.split_system(system)
    if events is None:
        events = event_inputs.digests(con)
    parts = [_table_digest(t, _READ_ROWS.get(t, "")) for t in INPUT_TABLES if t not in event_inputs.TABLES]
    for other in _COMPANIONS.get(base, ()):
        key = scenarios.companion(system, other).replace("'", "''")
        parts.append(_table_digest("rating_lists", f"system = '{key}'"))
    rows = sorted(con.execute(" UNION ALL ".join(parts)).fetchall())
    h = hashlib.sha1()
    options = {"system": system, "rules": rules, **params}
    h.update(json.dumps(options, default=str, sort_keys=True).encode())
    h.update(store_io.implausible_dates_digest(con).encode())
    h.update(code_digest().encode())
    h.update(repr(rows).encode())
    # one line per event, in id order (the ids are the store's: the same store, the same lines)
    h.update(events.select("tournament_id", "digest").sort("tournament_id").write_csv().encode())
    return h.hexdigest()


def outputs(con: duckdb.DuckDBPyConnection, system: str) -> str:
    """Digest of `system`'s own stored period digests and list rows."""
    key = system.replace("'", "''")
    # the lists and period digests row by row; the other result tables by their counts
    parts = [_table_digest(t, f"system = '{key}'") for t in ("rating_period_digests", "rating_lists")]
    parts += [
        f"SELECT '{t}' AS part, count(*)::VARCHAR AS h FROM {t} WHERE system = '{key}'"
        for t in (*_COUNTED, "rating_skips", "rate_of_play", "title_norms")
    ]
    sql = " UNION ALL ".join(parts)
    return hashlib.sha1(repr(sorted(con.execute(sql).fetchall())).encode()).hexdigest()


def unchanged(con: duckdb.DuckDBPyConnection, system: str, inputs: str) -> RateSummary | None:
    """The summary kept by `system`'s last full run when its inputs digest was `inputs` and its
    results are as it left them; None otherwise (the engine must run)."""
    rows = con.execute("SELECT inputs, outputs, summary FROM rating_inputs WHERE system = ?", [system]).fetchall()
    if not rows or rows[0][0] != inputs or rows[0][1] != outputs(con, system):
        return None
    row = rows[0]
    summary = _from_json(row[2])
    summary.run_id = None
    summary.first_changed = None
    summary.lists_written = 0
    summary.changed_lists = []
    summary.kept_lists = []
    summary.removed_lists = []
    summary.removed_runs = []
    summary.resumed_from = None
    summary.full_reason = None
    summary.from_last_run = True
    return summary


def save(con: duckdb.DuckDBPyConnection, system: str, inputs: str, summary: RateSummary) -> None:
    """Keep `inputs` (the `fingerprint` read before the run), the digest of the results the run
    left and its `summary` for `system`."""
    con.execute(
        "INSERT OR REPLACE INTO rating_inputs (system, inputs, outputs, summary, run_id, saved_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [
            system,
            inputs,
            outputs(con, system),
            _to_json(summary),
            summary.run_id,
            dt.datetime.now(dt.UTC).replace(tzinfo=None),
        ],
    )


def forget(con: duckdb.DuckDBPyConnection, system: str) -> None:
    """Drop `system`'s kept digests: its next run computes."""
    con.execute("DELETE FROM rating_inputs WHERE system = ?", [system])


_DATES = ("first_list", "last_list", "first_changed", "resumed_from")
_DATE_LISTS = ("changed_lists", "kept_lists", "removed_lists")


def _to_json(s: RateSummary) -> str:
    d = {f.name: getattr(s, f.name) for f in dataclasses.fields(s)}
    d["ro_far_worst"] = [dataclasses.astuple(w) for w in s.ro_far_worst]
    return json.dumps(d, default=lambda v: v.isoformat() if isinstance(v, dt.date) else str(v), sort_keys=True)


def _from_json(text: str) -> RateSummary:
    d = json.loads(text)
    known = {f.name for f in dataclasses.fields(RateSummary)}
    d = {k: v for k, v in d.items() if k in known}
    for k in _DATES:
        d[k] = None if d.get(k) is None else dt.date.fromisoformat(d[k])
    for k in _DATE_LISTS:
        d[k] = None if d.get(k) is None else [dt.date.fromisoformat(v) for v in d[k]]
    d["assumed_events"] = [(str(n), int(k)) for n, k in d.get("assumed_events") or []]
    d["ro_far_worst"] = [RoFar(*w) for w in d.get("ro_far_worst") or []]
    return RateSummary(**d)
