"""What-if scenarios: a system's lists computed under other rules or options, stored beside the
official computed lists and never in their place.

Naming (the one convention every command relies on): a scenario NAME of system BASE keeps its
rows under the system key ``BASE@NAME`` (``fide@v2017``, ``ffe@test``) in every table keyed by
``system`` (``rating_lists``, ``rating_changes``, ``tournament_ratings``, ``rating_runs``,
``rating_period_digests``, ``rating_skips``, ...). NAME is lower-case
``[a-z0-9][a-z0-9_-]{0,31}`` (``V2017`` is folded to ``v2017``); plain system keys never hold
``@``. The rules are BASE's; ``--rules`` and ``--param`` change them.

Ro: a scenario is a whole alternative history from its first period. Its Ro comes from its own
earlier lists and from the imported official lists, as the plain run's does, never from the
plain run's computed lists. Where a system reads another system's lists (a rapid list credits
standard ratings: FIDE R&B 7.2.1, FFE E02), a scenario reads the lists of the same scenario
name under that other system (``fide-rapid@x`` reads ``fide@x``), so rate the standard system
under the scenario first to have them.

Each scenario's definition is one row of the ``scenarios`` table (`record`): base system, rules,
params and through of its last run, when it was first and last rated.
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
from elopipe.store import schema

SEP = "@"
NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")


class ScenarioError(ElopipeError, ValueError):
    """A scenario name that is not valid."""

    exit_code = 2


class NoSuchScenario(ScenarioError):
    """A scenario the store does not hold."""

    exit_code = 1


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
    """'fide@v2017' -> ('fide', 'v2017'); 'fide' -> ('fide', None). Raises ScenarioError for a
    bad scenario name."""
    base, sep, name = system.partition(SEP)
    return (base, fold_name(name)) if sep else (base, None)


def scenario_system(base: str, name: str) -> str:
    """The system key of scenario `name` of `base` ('fide', 'V2017' -> 'fide@v2017')."""
    return f"{base}{SEP}{fold_name(name)}"


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


_MATCH = "(name = $name OR system = $name)"


def overview(con: duckdb.DuckDBPyConnection, name: str | None = None) -> pl.DataFrame:
    """One row per scenario system, sorted by name then system: name Utf8, system Utf8,
    base_system Utf8, rules Utf8 (null: the base's rules by date), params Utf8 (JSON), through
    Date, created_at and rated_at Datetime (UTC), lists Int64 (lists stored), first_list and
    last_list Date. `name`: only that scenario (a NAME or a BASE@NAME). Needs a store whose
    schema has the ``scenarios`` table (`elopipe.store.schema.ensure_schema`)."""
    where, params = "", {}
    if not _has_scenarios(con):  # a store made before scenarios existed, opened read-only
        con = duckdb.connect()
        con.execute(f"CREATE TABLE scenarios ({schema.TABLES['scenarios']})")
        con.execute(f"CREATE TABLE rating_lists ({schema.TABLES['rating_lists']})")
    if name is not None:
        where, params = f"WHERE {_MATCH}", {"name": _folded_ref(name)}
    frame: pl.DataFrame = con.sql(
        f"""
        WITH l AS (SELECT system, count(DISTINCT list_date) AS lists, min(list_date) AS first_list,
                          max(list_date) AS last_list
                   FROM rating_lists WHERE contains(system, '{SEP}') GROUP BY system)
        SELECT s.name, s.system, s.base_system, s.rules, s.params::VARCHAR AS params, s.through,
               s.created_at, s.rated_at, coalesce(l.lists, 0)::BIGINT AS lists, l.first_list, l.last_list
        FROM scenarios s LEFT JOIN l USING (system) {where}
        ORDER BY s.name, s.system
        """,
        params=params or None,
    ).pl()
    return frame


def _has_scenarios(con: duckdb.DuckDBPyConnection) -> bool:
    found = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main' AND table_name = 'scenarios'"
    ).fetchall()[0][0]
    return bool(found)


def _folded_ref(ref: str) -> str:
    """A NAME or BASE@NAME as the store writes it (the name folded)."""
    if SEP not in ref:
        return fold_name(ref)
    base, name = ref.strip().partition(SEP)[::2]
    return f"{base}{SEP}{fold_name(name)}"


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
    con.execute("BEGIN TRANSACTION")
    try:
        for table in system_tables(con):
            n = con.execute(f"DELETE FROM {table} WHERE system IN (SELECT unnest(?::VARCHAR[]))", [systems]).fetchall()[
                0
            ][0]
            if n:
                deleted[table] = int(n)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
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
