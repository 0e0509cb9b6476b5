"""FIDE runs over a real store: order independence, incremental re-rating, the CLI."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.ingest.driver import ingest_paths
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
from tests.helpers.paths import REPO

DATA = REPO.parent / "shared" / "data" / "trf"
LATE = ["irl_kilkenny_masters_2011_gms_national_ids.trf", "irl_galway_major_2011_partial_birthdates.trf"]
EARLY = [
    "irl_bunratty_masters_2011_crlf.trf",
    "irl_bunratty_major_2011_crlf.trf",
    "irl_bunratty_challengers_2011_crlf.trf",
    "irl_gonzaga_classic_2008_fide_ids.trf",
]

pytestmark = pytest.mark.skipif(not DATA.exists(), reason="../shared/data is not available")


def _lists(db: Path) -> list[tuple]:
    """rating_lists keyed by player identity (ids depend on the ingestion order)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(
            """
            SELECT l.list_date, coalesce(p.fide_id::VARCHAR, p.name_key) AS who, l.rating, l.games,
                   l.total_games, l.k, l.change, l.flags, l.source
            FROM rating_lists l JOIN players p USING (player_id)
            WHERE l.system = 'fide'
            ORDER BY ALL
            """
        ).fetchall()
    finally:
        con.close()


def _rate(db: Path, **kw):
    with open_writer(db) as con:
        return rate(con, "fide", **kw)


def test_order_independence_two_ingest_orders(tmp_path):
    files = [DATA / f for f in EARLY + LATE]
    a, b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    for f in files:
        ingest_paths([f], a)
    for f in reversed(files):
        ingest_paths([f], b)
    _rate(a)
    _rate(b)
    la, lb = _lists(a), _lists(b)
    assert la, "no list computed"
    assert la == lb


def test_late_file_rerates_from_its_period_and_rerun_changes_nothing(tmp_path):
    inc, full = tmp_path / "inc.duckdb", tmp_path / "full.duckdb"
    ingest_paths([DATA / f for f in LATE], inc)
    first = _rate(inc)
    assert first.first_changed == first.first_list
    # a late file for an older period
    ingest_paths([DATA / f for f in EARLY[:3]], inc)
    second = _rate(inc)
    assert second.first_changed == dt.date(2011, 5, 1)  # Bunratty ends 27 Feb 2011 -> May list
    assert second.first_changed < first.first_list
    ingest_paths([DATA / f for f in LATE + EARLY[:3]], full)
    _rate(full)
    assert _lists(inc) == _lists(full)
    # nothing new: nothing written
    con = duckdb.connect(str(inc), read_only=True)
    runs_before = con.execute("SELECT count(*) FROM rating_runs").fetchone()[0]
    con.close()
    third = _rate(inc)
    assert third.first_changed is None and third.lists_written == 0
    con = duckdb.connect(str(inc), read_only=True)
    assert con.execute("SELECT count(*) FROM rating_runs").fetchone()[0] == runs_before
    con.close()
    assert _lists(inc) == _lists(full)


def test_lists_contract_and_changes_explain_every_point(tmp_path):
    db = tmp_path / "c.duckdb"
    ingest_paths([DATA / f for f in EARLY[:3] + LATE], db)
    s = _rate(db)
    assert s.lists > 0 and s.players_rated > 0
    con = duckdb.connect(str(db), read_only=True)
    # every rated player of the previous list is on the next one (0 games included)
    missing = con.execute(
        """
        WITH l AS (SELECT * FROM rating_lists WHERE system = 'fide'),
             d AS (SELECT DISTINCT list_date FROM l),
             nxt AS (SELECT list_date, lead(list_date) OVER (ORDER BY list_date) AS next FROM d)
        SELECT count(*) FROM l JOIN nxt USING (list_date)
        WHERE l.rating IS NOT NULL AND nxt.next IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM rating_lists m
            WHERE m.system = 'fide' AND m.list_date = nxt.next AND m.player_id = l.player_id)
        """
    ).fetchone()[0]
    assert missing == 0
    # the change of every computed list row equals round(K x sum(W - PD)) of its games
    bad = con.execute(
        """
        WITH c AS (
            SELECT list_date, player_id, sum(w_minus_pd) AS s, any_value(k) AS k, count(*) AS n
            FROM rating_changes WHERE system = 'fide' AND counted GROUP BY ALL)
        SELECT count(*) FROM rating_lists l JOIN c USING (list_date, player_id)
        WHERE l.system = 'fide' AND l.source <> 'imported'
          AND (l.games <> c.n OR l.k <> c.k
               OR l.change <> sign(c.k * c.s) * floor(abs(c.k * c.s) + 0.5))
        """
    ).fetchone()[0]
    assert bad == 0
    # the per-tournament exact sums add up to the period's unrounded change
    mismatch = con.execute(
        """
        WITH t AS (SELECT list_date, player_id, sum(change_x100) AS x FROM tournament_ratings
                   WHERE system = 'fide' AND NOT unrated GROUP BY ALL),
             c AS (SELECT list_date, player_id, sum(w_minus_pd * k) * 100 AS x
                   FROM rating_changes WHERE system = 'fide' AND counted GROUP BY ALL)
        SELECT count(*) FROM t JOIN c USING (list_date, player_id) WHERE t.x <> c.x
        """
    ).fetchone()[0]
    assert mismatch == 0
    con.close()


def test_cli_rate_and_bad_arguments(tmp_path):
    db = tmp_path / "cli.duckdb"
    ingest_paths([DATA / LATE[0]], db)
    runner = CliRunner()
    res = runner.invoke(app, ["rate", "--system", "fide", "--db", str(db), "--through", "2012-01"])
    assert res.exit_code == 0, res.output
    assert "fide: 1 list (2012-01-01 .. 2012-01-01)" in res.output
    again = runner.invoke(app, ["rate", "--system", "fide", "--db", str(db), "--through", "2012-01"])
    # a preview computes every time (its run is not kept as the last full run): no list changed, and
    # it says so, not "nothing changed since the last run" beside "computed from the first period"
    assert "no list changed: every list computed is the one stored; nothing written" in again.output
    assert "since the last run" not in again.output
    assert runner.invoke(app, ["rate", "--system", "nope", "--db", str(db)]).exit_code == 2
    assert runner.invoke(app, ["rate", "--db", str(db), "--through", "2012"]).exit_code == 2
    assert runner.invoke(app, ["rate", "--db", str(db), "--scenario", "x", "--rules", "V1999"]).exit_code == 2


SAMPLE = REPO / "sample_pgn"


def test_events_sharing_a_list_in_force_rated_on_different_lists(tmp_path):
    # Candidates 2022 from two files: the 20 games only in the Madrid file form an event
    # rated on July, the rest one rated on August; both start under the 1 June list
    # bootstrapped from the files' WhiteElo/BlackElo
    db = tmp_path / "c.duckdb"
    ingest_paths([SAMPLE / "wchcand22.pgn", SAMPLE / "fide_candidates_2022_madrid_spain.pgn"], db)
    _rate(db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        bad = con.execute("SELECT count(*) FROM rating_changes WHERE system = 'fide' AND NOT counted").fetchone()[0]
        wrong_ro = con.execute(
            """
            SELECT count(*) FROM rating_changes c
            JOIN tournament_players tp ON tp.tournament_id = c.tournament_id AND tp.player_id = c.player_id
            JOIN tournament_players tq ON tq.tournament_id = c.tournament_id AND tq.player_id = c.opponent_id
            WHERE c.system = 'fide' AND (c.ro IS DISTINCT FROM tp.rating_in_file
                                         OR c.rc IS DISTINCT FROM tq.rating_in_file)
            """
        ).fetchone()[0]
        n = con.execute("SELECT count(*) FROM rating_changes WHERE system = 'fide'").fetchone()[0]
    finally:
        con.close()
    # 56 distinct games, two sides each (however dedup assigns the 20 shared games)
    assert n == 112
    assert (bad, wrong_ro) == (0, 0)


def _monthly_scenario():
    from tests.helpers.fide import Scenario

    s = Scenario()
    for p in range(1, 5):
        s.official(dt.date(2023, 12, 1), p, 2000 + 50 * p, k=20)
    for m in range(1, 13):
        s.event(dt.date(2024, m, 5), dt.date(2024, m, 8), [(1, 2, "W"), (3, 4, "D"), (1, 3, "L")])
    return s


def _stored(con, table: str) -> list[tuple]:
    return con.execute(f"SELECT * EXCLUDE (system) FROM {table} WHERE system = 'fide' ORDER BY ALL").fetchall()


def test_event_of_unrated_players_only_rewrites_its_own_list():
    from elopipe.rating.fide.run import rate_fide

    s = _monthly_scenario()
    first = rate_fide(s.con)
    assert first.lists_written == 12
    # two players nobody rated, playing each other in March: no published row changes
    # except the April list's rating_changes (their sides, not counted)
    s.event(dt.date(2024, 3, 10), dt.date(2024, 3, 12), [(50, 51, "W"), (51, 50, "D")])
    second = rate_fide(s.con)
    assert (second.first_changed, second.lists_written) == (dt.date(2024, 4, 1), 1)
    assert second.changed_lists == [dt.date(2024, 4, 1)]
    # the store equals a full recomputation
    full = _monthly_scenario()
    full.event(dt.date(2024, 3, 10), dt.date(2024, 3, 12), [(50, 51, "W"), (51, 50, "D")])
    rate_fide(full.con)
    for table in ("rating_lists", "rating_changes", "tournament_ratings", "rating_period_digests"):
        cols = "list_date, digest" if table == "rating_period_digests" else "*"
        a = s.con.execute(f"SELECT {cols} FROM {table} WHERE system = 'fide' ORDER BY ALL").fetchall()
        b = full.con.execute(f"SELECT {cols} FROM {table} WHERE system = 'fide' ORDER BY ALL").fetchall()
        assert a == b, table
    assert rate_fide(s.con).lists_written == 0


def test_pooled_games_of_a_new_player_change_every_later_list():
    from elopipe.rating.fide.run import rate_fide

    s = _monthly_scenario()
    rate_fide(s.con)
    # an unrated player scoring against a rated one pools the game: the pool row (games
    # pooled so far) is carried on every later list, which therefore really changes
    s.event(dt.date(2024, 3, 10), dt.date(2024, 3, 12), [(60, 1, "D")])
    again = rate_fide(s.con)
    assert again.first_changed == dt.date(2024, 4, 1)
    assert again.changed_lists == [dt.date(2024, m, 1) for m in range(4, 13)] + [dt.date(2025, 1, 1)]
    rows = s.con.execute(
        "SELECT count(*) FROM rating_lists WHERE system = 'fide' AND player_id = 60 AND rating IS NULL"
    ).fetchone()[0]
    assert rows == 10


TRF = REPO.parent / "shared" / "data" / "trf"
ONLINE_PGN = """[Event "Titled Arena"]
[Site "lichess.org INT"]
[Date "2024.05.10"]
[Round "1"]
[White "Alpha, A"]
[Black "Beta, B"]
[Result "1-0"]
[WhiteElo "2500"]
[BlackElo "2400"]

1. e4 e5 2. Nf3 Nc6 1-0

[Event "Banter Blitz"]
[Site "Chess.com"]
[Date "2024.05.11"]
[Round "1"]
[White "Alpha, A"]
[Black "Gamma, C"]
[Result "0-1"]
[WhiteElo "2500"]
[BlackElo "2300"]

1. d4 d5 0-1

[Event "Club Open"]
[Site "Leuven BEL"]
[Date "2024.05.12"]
[Round "1"]
[White "Alpha, A"]
[Black "Beta, B"]
[Result "1/2-1/2"]
[WhiteElo "2500"]
[BlackElo "2400"]

1. c4 c5 1/2-1/2
"""


def test_online_events_are_skipped_not_rated(tmp_path):
    # a lichess swiss exported as TRF (lichess ratings in the rating column, no time
    # control: standard by default) and PGN games played on online platforms: FIDE does
    # not rate online play, so none of them may reach a FIDE list
    pgn = tmp_path / "online.pgn"
    pgn.write_text(ONLINE_PGN, encoding="utf-8")
    db = tmp_path / "o.duckdb"
    ingest_paths([TRF / "lichess_swiss_2020_06_juni_blitz_9players.trf", pgn], db)
    summary = _rate(db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        skips = con.execute(
            """
            SELECT t.name, s.reason, s.n_games FROM rating_skips s JOIN tournaments t USING (tournament_id)
            WHERE s.system = 'fide' ORDER BY 1
            """
        ).fetchall()
        rated = con.execute(
            """
            SELECT DISTINCT t.name FROM rating_changes c JOIN tournaments t USING (tournament_id)
            WHERE c.system = 'fide'
            """
        ).fetchall()
    finally:
        con.close()
    names = {name: (reason, n) for name, reason, n in skips}
    assert names["Titled Arena"] == ("online:lichess.org", 1)
    assert names["Banter Blitz"] == ("online:chess.com", 1)
    reason, n = names["Juni Blitzschach 5 Plus 0"]
    assert reason == "online:lichess" and n > 0
    assert rated == [("Club Open",)]
    assert summary.events_skipped["online:lichess"] == 1


def _import_base(db: Path, list_date: dt.date, system: str = "fide") -> None:
    """An official list (dated `list_date`) rating every player of the store 2000, K 20."""
    con = duckdb.connect(str(db))
    con.execute(
        "INSERT INTO official_lists (system, list_date, player_id, fide_id, name, rating, k, games)"
        " SELECT ?, ?, player_id, fide_id, name, 2000, 20, 0 FROM players WHERE merged_into IS NULL",
        [system, list_date],
    )
    con.close()


def test_a_base_list_imported_after_a_run_rerates_from_the_first_list(tmp_path):
    """An official list dated before the first computed list feeds every period: importing
    it after a run makes the first list stale, and the result equals a fresh run."""
    inc, fresh = tmp_path / "inc.duckdb", tmp_path / "fresh.duckdb"
    for db in (inc, fresh):
        ingest_paths([DATA / f for f in LATE], db)
    first = _rate(inc)
    _import_base(inc, dt.date(2011, 1, 1))
    again = _rate(inc)
    assert again.first_changed == first.first_list
    _import_base(fresh, dt.date(2011, 1, 1))
    _rate(fresh)
    assert _lists(inc) == _lists(fresh)


def test_rapid_lists_follow_the_standard_lists_that_seed_them(tmp_path):
    """From March 2024 an unrated rapid player takes their standard rating (R&B 7.2.1): a
    change of the standard lists makes the rapid lists stale."""
    from elopipe.rating.fide.params import FideParams
    from elopipe.rating.fide.prepare import prepare
    from elopipe.rating.fide.run import load_inputs, period_digests
    from elopipe.rating.periods import get_scheme

    db = tmp_path / "s.duckdb"
    ingest_paths([DATA / f for f in LATE], db)
    con = duckdb.connect(str(db))
    # the 2011 events, rated as rapid in 2024 (players unrated in rapid)
    con.execute(
        "UPDATE tournaments SET rate_class = 'rapid', start_date = start_date + INTERVAL 13 YEAR,"
        " end_date = end_date + INTERVAL 13 YEAR"
    )
    con.execute("UPDATE games SET game_date = game_date + INTERVAL 13 YEAR, time_control = NULL")
    fp = FideParams(system="fide-rapid")

    def digests() -> dict:
        prep = prepare(load_inputs(con, "fide-rapid"), fp, get_scheme("fide"))
        return period_digests(prep, fp, prep.list_dates)

    before = digests()
    con.close()
    _import_base(db, dt.date(2024, 3, 1))  # a standard list: the seed of unrated rapid players
    con = duckdb.connect(str(db))
    after = digests()
    con.close()
    assert before.keys() == after.keys() and before
    assert before[min(before)] != after[min(after)]
