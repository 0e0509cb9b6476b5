"""The checks that let a batch skip a query that can return no row (issue 27): the same-game
evidence (`same_game._ANY_PAIR_SQL`), the tournament pairs' evidence (`event_sources._ANY_COMMON_SQL`), the
abbreviations within an event (`consolidate._ANY_EVENT_SQL`) and the parts of an event
(`events.join_events`, one member). Each check says no only when the full
query returns nothing (checked on every call of an ingest that merges and links across files), a
new event alone on its days skips the queries, and a later file still merges and links as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from elopipe.identity import consolidate, event_sources, events, same_game
from elopipe.identity.nearby import near_tournaments
from elopipe.ingest.driver import ingest_paths
from tests.helpers.schema_store import schema_connect
from tests.helpers.store_rows import db_rows
from tests.identity.test_identity_batch import _load_one_by_one, _synthetic_sources
from tests.identity.test_same_game import NORWAY, _abbreviated_variant, _carlsen_norway_2022, _games

_FAIL = "SELECT error('this query was to be skipped')"


def _spy_checks(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[tuple[bool, bool]]]:
    """Record, on every call, (the check's answer, whether the full query returned a row)."""
    seen: dict[str, list[tuple[bool, bool]]] = {"same_game": [], "pairs": [], "initials": []}
    pairs_of, verdicts_of, initials_of = (
        same_game.same_game_pairs,
        event_sources.pair_verdicts,
        consolidate._initials_pairs,
    )

    def same_game_pairs(con: duckdb.DuckDBPyConnection, file_ids: list[int]) -> Any:
        files = sorted(set(file_ids))
        in_files = "SELECT tournament_id FROM tournaments WHERE file_id IN (SELECT UNNEST(?))"
        tids = {r[0] for r in con.execute(in_files, [files]).fetchall()}
        if tids:
            params = {"files": files, "near": sorted(near_tournaments(con, tids))}
            check = con.execute(same_game._ANY_PAIR_SQL, params).fetchall()[0][0]
            rows = con.execute(same_game._SQL, {**params, "short": same_game.SHORT_PLIES}).fetchall()
            seen["same_game"].append((bool(check), bool(rows)))
        return pairs_of(con, file_ids)

    def pair_verdicts(con: duckdb.DuckDBPyConnection, left: set[int], right: set[int]) -> Any:
        if left and right:
            params = {"left": sorted(left), "right": sorted(right), "right_only": sorted(right - left)}
            check = con.execute(event_sources._ANY_COMMON_SQL, params).fetchall()[0][0]
            rows = con.execute(event_sources._PAIRS_SQL, {**params, "short": event_sources.SHORT_PLIES}).fetchall()
            seen["pairs"].append((bool(check), bool(rows)))
        return verdicts_of(con, left, right)

    def initials_pairs(con: duckdb.DuckDBPyConnection, touched: set[int], anchors: set[int]) -> Any:
        if touched and anchors:
            check = con.execute(consolidate._ANY_EVENT_SQL, {"anchors": sorted(anchors)}).fetchall()[0][0]
            with monkeypatch.context() as m:  # the pairs the joins find, asked whatever the check says
                m.setattr(consolidate, "_ANY_EVENT_SQL", "SELECT len($anchors) >= 0")
                seen["initials"].append((bool(check), bool(initials_of(con, touched, anchors))))
        return initials_of(con, touched, anchors)

    monkeypatch.setattr(same_game, "same_game_pairs", same_game_pairs)
    monkeypatch.setattr(consolidate, "_initials_pairs", initials_pairs)
    monkeypatch.setattr(event_sources, "pair_verdicts", pair_verdicts)
    return seen


def test_a_check_says_no_only_when_the_query_returns_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _spy_checks(monkeypatch)
    db = tmp_path / "s.duckdb"
    # one file an ingest, as they arrive: the organiser's file, then TWIC's abbreviated copy and
    # Carlsen's extract, whose games are the organiser's games under other spellings
    for path in (NORWAY, _abbreviated_variant(tmp_path), _carlsen_norway_2022(tmp_path)):
        assert ingest_paths([path], db).exit_code == 0
    for name, calls in seen.items():
        assert all(check for check, rows in calls if rows), (name, calls)
    # both answers met: the checks were asked where the queries find rows, and where they find none
    for name in ("same_game", "pairs"):
        assert {rows for _, rows in seen[name]} == {True, False}, (name, seen[name])
    # the later files merged and linked as before (`test_same_game`): ten players, each game once
    assert db_rows(db, "SELECT count(*) FROM players WHERE merged_into IS NULL")[0][0] == 10
    assert db_rows(db, "SELECT count(*) FROM canonical_games")[0][0] == len(_games(NORWAY))


def test_the_initials_check_says_no_only_when_no_pair_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _spy_checks(monkeypatch)
    con = schema_connect()
    # files one by one: 'Carlsen,M' and 'Duda,J' beside their full names in one event's sources
    _load_one_by_one(con, _synthetic_sources())
    calls = seen["initials"]
    assert all(check for check, pairs in calls if pairs), calls
    assert {pairs for _, pairs in calls} == {True, False}, calls
    merges = con.execute("SELECT count(*) FROM player_merges WHERE decided_by = 'rule:initials_context'").fetchall()
    assert merges[0][0] >= 1


def test_a_new_event_alone_on_its_days_skips_the_pair_queries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "s.duckdb"
    assert ingest_paths([_carlsen_norway_2022(tmp_path)], db).exit_code == 0
    # queries that fail if run: the ingest of an event no other source holds must not run them
    monkeypatch.setattr(same_game, "_SQL", _FAIL)
    monkeypatch.setattr(event_sources, "_PAIRS_SQL", _FAIL)
    monkeypatch.setattr(events, "_PARTS_SQL", _FAIL)
    monkeypatch.setattr(consolidate, "_events_sql", lambda: "no SQL: the initials' joins were to be skipped")
    other = tmp_path / "other.pgn"
    other.write_text(
        '[Event "Club evening"]\n[Site "Oslo"]\n[Date "2023.01.05"]\n[Round "1"]\n[White "Hansen, Per"]\n'
        '[Black "Olsen, Kari"]\n[Result "1-0"]\n\n1. e4 e5 2. Nf3 Nc6 1-0\n',
        encoding="utf-8",
    )
    assert ingest_paths([other], db).exit_code == 0
    assert db_rows(db, "SELECT event_id FROM tournaments WHERE name = 'Club evening'") == [(None,)]
