"""What-if scenarios: a system's lists computed under other rules or options, stored beside the
official computed lists and never in their place.

Naming (the one convention every command relies on): a scenario NAME of system BASE keeps its
rows under the system key ``BASE@NAME`` (``fide@v2017``, ``ffe@test``) in every table keyed by
``system`` (``rating_lists``, ``rating_changes``, ``tournament_ratings``, ``rating_runs``,
``rating_period_digests``, ``rating_skips``, ...). NAME is lower-case
``[a-z0-9][a-z0-9_-]{0,31}`` (``V2017`` is folded to ``v2017``, BASE too), and a new one is not
a system's name (``fide@ffe`` is refused); plain system keys never hold ``@``. The rules are
BASE's; ``--rules`` and ``--param`` change them.

Ro: a scenario is a whole alternative history from its first period. Its Ro comes from its own
earlier lists and from the imported official lists, as the plain run's does, never from the
plain run's computed lists. Where a system reads another system's lists (a rapid list credits
standard ratings: FIDE R&B 7.2.1, FFE E02), a scenario reads the lists of the same scenario
name under that other system (``fide-rapid@x`` reads ``fide@x``), so rate the standard system
under the scenario first to have them.

Each scenario's definition is one row of the ``scenarios`` table (`record`): base system, rules,
params and through of its last run, when it was first and last rated. A scenario keeps its
definition (`resolve`): rated again, it takes its stored rules and params, and other ones are
refused (`ScenarioConflict`), so its lists always come from the rules it shows.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from typing import Any

import duckdb
import polars as pl

from elopipe.runtime.errors import ElopipeError
from elopipe.store import schema, write
from elopipe.store.frames import to_polars

SEP = "@"
NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")


class ScenarioError(ElopipeError, ValueError):
    """A scenario name that is not valid."""

    exit_code = 2


class NoSuchScenario(ScenarioError):
    """A scenario the store does not hold."""

    exit_code = 1


class ScenarioConflict(ScenarioError):
    """A run of a scenario with rules or options other than those it is defined with."""


def fold_name(text: str) -> str:
    """`text` as a scenario name: stripped, lower-case. Raises ScenarioError when it is not
    ``[a-z0-9][a-z0-9_-]{0,31}`` after folding."""
    name = text.strip().lower()
    if not NAME_RE.fullmatch(name):
        raise ScenarioError(
            f"scenario name {text.strip()!r} is not valid: use 1 to 32 letters, digits, '-' or '_', "
            "starting with a letter or digit"
        )
    return name


def split_system(system: str) -> tuple[str, str | None]:
    """'fide@v2017' -> ('fide', 'v2017'); 'fide' -> ('fide', None); both parts folded
    ('FIDE@V2017' -> ('fide', 'v2017')). Raises ScenarioError for a bad scenario name or a
    missing system ('@x')."""
    base, sep, name = system.strip().partition(SEP)
    base = base.strip().lower()
    if sep and not base:
        raise ScenarioError(f"{system.strip()!r} names no system: expected SYSTEM@NAME such as fide@v2017")
    return (base, fold_name(name)) if sep else (base, None)


def scenario_system(base: str, name: str) -> str:
    """The system key of a new scenario `name` of `base` ('fide', 'V2017' -> 'fide@v2017').
    Raises ScenarioError for a bad name or one that is a system's name ('fide@ffe' would read
    as the 'ffe' lists wherever a scenario is named alone)."""
    from elopipe.rating import systems

    folded = fold_name(name)
    if folded in systems.names():
        raise ScenarioError(f"scenario name {folded!r} is the name of a rating system: choose another name")
    return f"{base.strip().lower()}{SEP}{folded}"


def companion(system: str, other_base: str) -> str:
    """The key of `other_base` in the same scenario as `system` ('fide-rapid@x', 'fide' ->
    'fide@x'); `other_base` itself for a plain system."""
    _, name = split_system(system)
    return other_base if name is None else f"{other_base}{SEP}{name}"


def record(
    con: duckdb.DuckDBPyConnection,
    system: str,
    *,
    rules: str | None,
    params: Mapping[str, Any],
    through: dt.date | None,
) -> None:
    """Store (or update) the definition of scenario `system` ('BASE@NAME') after a run:
    rules, params (JSON) and through of this run; ``created_at`` is kept from the first run."""
    base, name = split_system(system)
    if name is None:
        raise ScenarioError(f"{system!r} is not a scenario (expected BASE@NAME)")
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    con.execute(
        """
        INSERT INTO scenarios (system, name, base_system, rules, params, through, created_at, rated_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (system) DO UPDATE SET rules = excluded.rules, params = excluded.params,
            through = excluded.through, rated_at = excluded.rated_at
        """,
        [system, name, base, rules, json.dumps(dict(params), default=str, sort_keys=True), through, now, now],
    )


# the options of `elopipe rate` that are not a --param KEY=VALUE, for the messages
_OPTION = {
    "no_moves": "--no-moves", "ro_from": "--ro-from", "unknown_tc": "--unknown-tc",
    "v2022_cap_lower": "--v2022-cap-lower",
}  # fmt: skip


def definition(con: duckdb.DuckDBPyConnection, system: str) -> tuple[str | None, dict[str, Any]] | None:
    """(rules, params) scenario `system` ('BASE@NAME', as stored) is defined with, the params
    as stored (JSON: dates are 'YYYY-MM-DD' text); None when the store holds no definition."""
    if not _has_scenarios(con):
        return None
    rows = con.execute("SELECT rules, params FROM scenarios WHERE system = ?", [system]).fetchall()
    if not rows:
        return None
    rules, params = rows[0]
    return rules, (json.loads(params) if params else {})


def resolve(
    con: duckdb.DuckDBPyConnection,
    system: str,
    rules: str | None,
    given: Mapping[str, Any],
    defaults: Mapping[str, Any],
) -> tuple[str | None, dict[str, Any]]:
    """The (rules, params) to rate scenario `system` with: a scenario keeps its definition.

    A new scenario: `rules`, and `defaults` overridden by `given` (the options the user gave).
    A defined one: its stored rules and params; `rules` and each `given` option must equal
    them (re-running the same command is fine), `defaults` (e.g. the no-moves policy of the
    environment) are ignored. Raises ScenarioConflict naming the definition otherwise, so that
    a run never silently redefines a scenario whose lists were computed under other rules."""
    stored = definition(con, system)
    if stored is None:
        return rules, {**defaults, **given}
    stored_rules, stored_params = stored
    differ = []
    if rules is not None and rules != stored_rules:
        differ.append(f"--rules {stored_rules}" if stored_rules else "the rules by date (no --rules)")
    for key, value in sorted(given.items()):
        if key not in stored_params:
            differ.append(f"no {_OPTION[key]}" if key in _OPTION else f"no --param {key}")
        elif json.loads(json.dumps(value, default=str)) != stored_params[key]:
            differ.append(_as_option(key, stored_params[key]))
    if differ:
        name = system.partition(SEP)[2]
        raise ScenarioConflict(
            f"scenario {name} is defined with {', '.join(differ)}; drop it first"
            f" (elopipe scenarios drop {system}) or choose another name"
        )
    return stored_rules, stored_params


def _as_option(key: str, value: object) -> str:
    text = str(value).lower() if isinstance(value, bool) else str(value)
    if key == "v2022_cap_lower":
        return _OPTION[key] if value else f"no {_OPTION[key]}"
    return f"{_OPTION[key]} {text}" if key in _OPTION else f"--param {key}={text}"


def missing_standard(con: duckdb.DuckDBPyConnection, system: str) -> list[str]:
    """For a rapid or blitz scenario ('fide-rapid@x'): the systems whose computed lists it
    credits standard ratings from (FIDE R&B 7.2.1: 'fide@x'; FFE E02: 'ffe@x', else 'fide@x')
    when none of them holds a list; else (and for any other system) []. Such a scenario credits
    no computed standard rating (a FIDE one still credits the imported official FIDE lists),
    never the plain system's computed ones."""
    base, name = split_system(system)
    wanted = {"fide-rapid": ("fide",), "fide-blitz": ("fide",), "ffe-rapid": ("ffe", "fide")}.get(base, ())
    if name is None or not wanted:
        return []
    keys = [f"{w}{SEP}{name}" for w in wanted]
    held = con.execute(
        "SELECT count(*) FROM rating_lists WHERE system IN (SELECT unnest(?::VARCHAR[]))", [keys]
    ).fetchall()[0][0]
    return [] if held else keys


_MATCH = "(name = $name OR system = $name)"


def overview(con: duckdb.DuckDBPyConnection, name: str | None = None) -> pl.DataFrame:
    """One row per scenario system, sorted by name then system: name Utf8, system Utf8,
    base_system Utf8, rules Utf8 (null: the base's rules by date), params Utf8 (JSON), through
    Date, created_at and rated_at Datetime (UTC), lists Int64 (lists stored), first_list and
    last_list Date, unfinished Boolean (a run that stopped before its definition was recorded:
    its ``rating_runs`` rows only, see `remove_unfinished`; its dates are its runs' starts, its
    params null).
    `name`: only that scenario (a NAME or a BASE@NAME). Needs a store whose schema has the
    ``scenarios`` table (`elopipe.store.schema.ensure_schema`)."""
    where, params = "", {}
    if not _has_scenarios(con):  # a store made before scenarios existed, opened read-only
        con = duckdb.connect()
        for table in ("scenarios", "rating_lists", "rating_runs"):
            con.execute(f"CREATE TABLE {table} ({schema.TABLES[table]})")
    if name is not None:
        where, params = f"WHERE {_MATCH}", {"name": _folded_ref(name)}
    frame = to_polars(
        con.sql(
            f"""
        WITH l AS (SELECT system, count(DISTINCT list_date) AS lists, min(list_date) AS first_list,
                          max(list_date) AS last_list
                   FROM rating_lists WHERE contains(system, '{SEP}') GROUP BY system),
        s AS (
            SELECT name, system, base_system, rules, params::VARCHAR AS params, through, created_at, rated_at,
                   FALSE AS unfinished
            FROM scenarios
            UNION ALL
            SELECT split_part(system, '{SEP}', 2), system, split_part(system, '{SEP}', 1), max(rules_forced),
                   NULL::VARCHAR, NULL::DATE, min(started_at), max(started_at), TRUE
            FROM rating_runs
            WHERE contains(system, '{SEP}') AND system NOT IN (SELECT system FROM scenarios)
            GROUP BY system
        )
        SELECT s.name, s.system, s.base_system, s.rules, s.params, s.through,
               s.created_at, s.rated_at, coalesce(l.lists, 0)::BIGINT AS lists, l.first_list, l.last_list,
               s.unfinished
        FROM s LEFT JOIN l USING (system) {where}
        ORDER BY s.name, s.system
        """,
            params=params or None,
        )
    )
    return frame


def remove_unfinished(con: duckdb.DuckDBPyConnection, system: str) -> list[int]:
    """Remove what a `rate --scenario` stopped before its end (a kill between its writes) left of
    scenario `system`: its ``rating_runs`` rows when the store has no definition of it
    (``scenarios``) and no list of it, with any other row keyed by `system` (none is expected).
    Returns the run ids removed (empty when there was nothing to remove). One transaction."""
    runs = [
        r[0]
        for r in con.execute(
            "SELECT run_id FROM rating_runs WHERE system = $s"
            " AND NOT EXISTS (SELECT 1 FROM scenarios WHERE system = $s)"
            " AND NOT EXISTS (SELECT 1 FROM rating_lists WHERE system = $s) ORDER BY run_id",
            {"s": system},
        ).fetchall()
    ]
    if runs:
        with write.transaction(con):
            for table in system_tables(con):
                con.execute(f"DELETE FROM {table} WHERE system = ?", [system])
    return runs


def _has_scenarios(con: duckdb.DuckDBPyConnection) -> bool:
    found = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main' AND table_name = 'scenarios'"
    ).fetchall()[0][0]
    return bool(found)


def _folded_ref(ref: str) -> str:
    """A NAME or BASE@NAME as the store writes it (both parts folded). Raises ScenarioError for
    a bad name or a missing system ('@x')."""
    base, name = split_system(ref)
    return fold_name(ref) if name is None else f"{base}{SEP}{name}"


def system_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every table of the store with a ``system`` column, sorted."""
    rows = con.execute(
        "SELECT DISTINCT table_name FROM information_schema.columns"
        " WHERE table_schema = 'main' AND column_name = 'system' AND table_name IN"
        " (SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE')"
        " ORDER BY 1"
    ).fetchall()
    return [r[0] for r in rows]


def drop(con: duckdb.DuckDBPyConnection, ref: str) -> dict[str, int]:
    """Delete every row of scenario `ref` (a NAME: all its systems; or one BASE@NAME) from every
    table keyed by ``system`` and its ``scenarios`` rows, in one transaction. Rows of plain
    systems are never touched (their keys hold no '@'). Returns {table: rows deleted} for the
    tables that lost rows. Raises ScenarioError when the store holds no such scenario."""
    key = _folded_ref(ref)
    systems = _systems_of(con, key)
    if not systems:
        raise NoSuchScenario(f"no scenario {key!r} in the store (see `elopipe scenarios list`)")
    deleted: dict[str, int] = {}
    with write.transaction(con):
        for table in system_tables(con):
            n = con.execute(f"DELETE FROM {table} WHERE system IN (SELECT unnest(?::VARCHAR[]))", [systems]).fetchall()[
                0
            ][0]
            if n:
                deleted[table] = int(n)
    return deleted


def _systems_of(con: duckdb.DuckDBPyConnection, key: str) -> list[str]:
    """The scenario systems `key` names (a NAME or a BASE@NAME), from the definitions and from
    the runs (a run whose definition was not recorded still has rows to drop)."""
    rows = con.execute(
        f"""
        SELECT system FROM scenarios WHERE {_MATCH}
        UNION
        SELECT DISTINCT system FROM rating_runs
        WHERE contains(system, '{SEP}') AND (split_part(system, '{SEP}', 2) = $name OR system = $name)
        ORDER BY 1
        """,
        {"name": key},
    ).fetchall()
    return [r[0] for r in rows]
