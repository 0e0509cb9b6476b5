"""Hostile values in a file (issue 12, items 2-4): a huge event, a mistyped year, a date out of
range. Nothing is lost, the problem is reported with its line, and rating goes on."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.ingest.driver import ingest_paths
from elopipe.rating import full_run
from elopipe.rating.fide import run as fide_run
from elopipe.rating.periods import get_scheme, per_event_calendar
from elopipe.rating.run import rate
from elopipe.read.dates import latest_plausible
from elopipe.read.pgn import read_loop
from elopipe.read.pgn import reader as pgn_reader
from elopipe.read.trf.reader import read_trf
from elopipe.store.connect import open_writer
from tests.helpers.store_rows import db_rows
from tests.helpers.trf_build import block, row

runner = CliRunner()

_GAME = (
    '[Event "{event}"]\n[Site "Dublin"]\n[Date "{date}"]\n[Round "{rnd}"]\n[White "{white}"]\n'
    '[Black "{black}"]\n[Result "{result}"]\n[WhiteElo "{welo}"]\n[BlackElo "{belo}"]\n'
    '[TimeControl "5400+30"]\n\n1. e4 e5 2. Nf3 Nc6 {result}\n\n'
)


def _game(event="Open", date="2023.03.10", rnd=1, white="Alpha, Ann", black="Beta, Bob", result="1-0", **kw) -> str:
    return _GAME.format(
        event=event,
        date=date,
        rnd=rnd,
        white=white,
        black=black,
        result=result,
        welo=kw.get("welo", 2100),
        belo=kw.get("belo", 2000),
    )


def _huge_trf(rounds: int) -> str:
    # the reproduction of issue 12 item 2: two players meeting `rounds` times, A winning all
    lines = ["012 X", "042 2023.03.01", "052 2023.03.28", "122 90 min + 30 s"]
    for start, name, opp, colour, res in ((1, "A, A", 2, "w", "1"), (2, "B, B", 1, "b", "0")):
        lines.append(
            f"001 {start:4d}      {name:<33} 2200 IRL                         0.0 {start:4d}"
            + f"  {opp:4d} {colour} {res}" * rounds
        )
    return "\n".join(lines) + "\n"


# ---- item 4: an out-of-range date is a warning on its game; the other games land -------


@pytest.mark.parametrize("bad", ["9999.12.31", "0001.01.01", "2923.03.10"])
@pytest.mark.parametrize("columns", [True, False])
def test_an_out_of_range_pgn_date_is_a_warning_and_every_game_lands(tmp_path, monkeypatch, bad, columns):
    monkeypatch.setattr(read_loop, "USE_COLUMNS", columns)
    f = tmp_path / "dates.pgn"
    f.write_text(_game(date="2023.03.10") + _game(date=bad, rnd=2) + _game(date="2023.03.11", rnd=3))
    db = tmp_path / "s.duckdb"
    summary = ingest_paths([f], db)
    assert [r.status for r in summary.files] == ["loaded"]
    assert db_rows(db, "SELECT round, game_date FROM games ORDER BY round") == [
        (1, dt.date(2023, 3, 10)),
        (2, None),
        (3, dt.date(2023, 3, 11)),
    ]
    (line, gi, code, msg), *_ = db_rows(db, "SELECT line, game_index, code, message FROM ingest_errors")
    first_line_of_game_2 = f.read_text().split("\n").index('[Event "Open"]', 1) + 1
    assert (line, gi, code) == (first_line_of_game_2, 1, "date_implausible")
    assert bad in msg and "Error" not in msg


@pytest.mark.parametrize("columns", [True, False])
def test_an_out_of_range_event_date_is_reported_and_not_stored(tmp_path, monkeypatch, columns):
    monkeypatch.setattr(read_loop, "USE_COLUMNS", columns)
    text = _game().replace('[Round "1"]', '[EventDate "9999.12.31"]\n[Round "1"]')
    pf = pgn_reader.read_pgn(text + _game(rnd=2))
    assert [(i.code, i.line, i.game_index) for i in pf.issues] == [("date_implausible", 1, 0)]
    assert "EventDate '9999.12.31'" in pf.issues[0].message
    assert len(pf.games) == 2 and all(t.start_date != dt.date(9999, 12, 31) for t in pf.tournaments)


def test_out_of_range_trf_dates_are_warnings_and_the_games_land(tmp_path):
    text = (
        "012 X\n042 0001/01/01\n052 9999/12/31\n122 90 min + 30 s\n"
        "132"
        + " " * 88
        + "2923/03/01  23/03/02\n"
        + row(1, "A, A", [block(2, "w", "1"), block(2, "b", "1")], rating=2200, fed="IRL", points="2.0")
        + "\n"
        + row(2, "B, B", [block(1, "b", "0"), block(1, "w", "0")], rating=2200, fed="IRL", points="0.0")
        + "\n"
    )
    pf = read_trf(text)
    found = {(i.code, i.line) for i in pf.issues if i.code == "trf_date_implausible"}
    assert found == {("trf_date_implausible", 2), ("trf_date_implausible", 3), ("trf_date_implausible", 5)}
    assert pf.tournaments[0].start_date is None and pf.tournaments[0].end_date is None
    assert sorted((g.round, g.game_date) for g in pf.games) == [(1, None), (2, dt.date(2023, 3, 2))]
    f = tmp_path / "t.trf"
    f.write_text(text)
    db = tmp_path / "s.duckdb"
    assert [r.status for r in ingest_paths([f], db).files] == ["loaded"]
    assert db_rows(db, "SELECT count(*) FROM games") == [(2,)]


# ---- item 3: a mistyped year never stretches the calendar ------------------------------


def test_calendars_do_not_overflow_on_year_1_or_9999():
    fide, monthly = get_scheme("fide"), get_scheme("monthly")
    assert fide.calendar(dt.date(1, 1, 1), dt.date(1, 1, 1)).height < 10
    assert monthly.calendar(dt.date(9999, 12, 31), dt.date(9999, 12, 31)).height < 10
    # quarterly FIDE lists before July 2009 (issue 15)
    assert fide.lists_between(dt.date(1, 1, 1), dt.date(1400, 4, 1)) == [dt.date(1400, 1, 1), dt.date(1400, 4, 1)]
    df = pl.DataFrame(
        {
            "start_date": [dt.date(1, 1, 1), dt.date(2023, 3, 1)],
            "end_date": [dt.date(9999, 12, 31), dt.date(2023, 3, 5)],
        }
    )
    out = fide.assign(df)
    assert out.get_column("list_date").to_list() == [None, dt.date(2023, 4, 1)]
    assert out.get_column("in_force").to_list() == [None, dt.date(2023, 3, 1)]
    assert per_event_calendar([dt.date(9999, 12, 31), dt.date(2023, 3, 5)]) == [dt.date(2023, 3, 6)]


def test_a_store_holding_a_mistyped_year_rates_up_to_today_only(tmp_path):
    f = tmp_path / "g.pgn"
    f.write_text(_game() + _game(rnd=2, white="Beta, Bob", black="Alpha, Ann", welo=2000, belo=2100))
    db = tmp_path / "s.duckdb"
    ingest_paths([f], db)
    with open_writer(db) as con:  # as an older version stored it, before the readers refused it
        con.execute("UPDATE games SET game_date = DATE '2923-03-10' WHERE round = 2")
        con.execute("UPDATE tournaments SET end_date = DATE '2923-03-10'")
        inputs = fide_run.load_inputs(con, "fide")
        prep = fide_run.prepare(inputs, fide_run.FideParams(), get_scheme("fide"))
        assert prep.list_dates and prep.list_dates[-1] <= latest_plausible()
        summary = rate(con, "fide")
    assert summary.last_list <= latest_plausible() and summary.lists < 50


# ---- item 2: implausible values are flagged; sums fit; a failing event is left out -----


def test_a_thousand_round_trf_is_flagged_and_rates(tmp_path):
    f = tmp_path / "t.trf"
    f.write_text(_huge_trf(1001))
    db = tmp_path / "p.duckdb"
    read = runner.invoke(app, ["ingest", str(f), "--db", str(db)])
    # the officer is told, and how to list them
    where = "WHERE severity IN ('error', 'warning') AND file_id = 1"  # this ingest's errors and warnings
    query = f'elopipe sql "SELECT path, line, game_index, message FROM v_ingest_errors {where}" --db {db}'
    assert read.exit_code == 0 and f"2 warnings (`{query}` lists them)" in read.output, read.output
    flagged = db_rows(db, "SELECT line, message FROM ingest_errors WHERE code = 'trf_implausible_rounds'")
    assert len(flagged) == 1 and flagged[0][0] == 5 and "1001" in flagged[0][1]
    result = runner.invoke(app, ["rate", "--system", "fide", "--db", str(db)])
    assert result.exit_code == 0, result.output
    got = db_rows(db, "SELECT score::VARCHAR, we::VARCHAR, n FROM tournament_ratings WHERE system = 'fide' ORDER BY 1")
    assert got == [("0.0", "500.50", 1001), ("1001.0", "500.50", 1001)]
    for system in ("ffe", "elo", "glicko2"):
        assert runner.invoke(app, ["rate", "--system", system, "--db", str(db)]).exit_code == 0


def test_a_player_with_over_a_thousand_games_in_one_pgn_event_is_flagged():
    text = "".join(
        _game(
            event="Marathon",
            rnd=i + 1,
            white=("Alpha, Ann", "Beta, Bob")[i % 2],
            black=("Beta, Bob", "Alpha, Ann")[i % 2],
        )
        for i in range(1001)
    )
    for columns in (True, False):
        read_loop.USE_COLUMNS = columns
        try:
            pf = pgn_reader.read_pgn(text + _game(event="Other", white="Gamma, Cy", black="Delta, Di"))
        finally:
            read_loop.USE_COLUMNS = True
        flagged = [i for i in pf.issues if i.code == "implausible_games"]
        assert len(pf.games) == 1002
        assert {i.game_index for i in flagged} == {1000} and len(flagged) == 2
        assert all("1001 games" in i.message and "Marathon" in i.message for i in flagged)


def test_an_older_store_gets_the_wide_decimal_columns(tmp_path):
    db = tmp_path / "old.duckdb"
    with open_writer(db) as con:  # the column types of an older version
        con.execute("ALTER TABLE tournament_ratings ALTER COLUMN score SET DATA TYPE DECIMAL(5,1)")
        con.execute("ALTER TABLE tournament_ratings ALTER COLUMN we SET DATA TYPE DECIMAL(7,2)")
        con.execute("DROP TABLE store_schema")  # as an older store has none
    with open_writer(db):
        pass
    types = dict(
        db_rows(
            db,
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'tournament_ratings' AND column_name IN ('score', 'we')",
        )
    )
    assert types == {"score": "DECIMAL(18,1)", "we": "DECIMAL(18,2)"}


def _two_events(tmp_path: Path) -> Path:
    f = tmp_path / "two.pgn"
    games = [
        _game(event="Good Open", date="2023.03.10", rnd=1),
        _game(event="Good Open", date="2023.03.11", rnd=2, white="Beta, Bob", black="Alpha, Ann"),
        _game(event="Bad Open", date="2023.05.10", rnd=1, white="Gamma, Cy", black="Alpha, Ann"),
        _game(event="Later Open", date="2023.07.10", rnd=1, white="Alpha, Ann", black="Gamma, Cy"),
    ]
    f.write_text("".join(games))
    db = tmp_path / "s.duckdb"
    ingest_paths([f], db)
    return db


def _bad_id(db: Path) -> int:
    return db_rows(db, "SELECT tournament_id FROM tournaments WHERE name = 'Bad Open'")[0][0]


def _fail_on(bad: int, fn):
    def wrapped(frame, *args, **kwargs):
        ids = frame.sides if hasattr(frame, "sides") else frame
        if bad in ids.get_column("tournament_id").to_list():
            raise RuntimeError("simulated engine fault\nsecond line of detail")
        return fn(frame, *args, **kwargs)

    return wrapped


@pytest.mark.parametrize("system", ["fide", "ffe", "elo", "glicko2"])
def test_a_tournament_that_breaks_the_engine_is_named_and_the_rest_is_rated(tmp_path, monkeypatch, system):
    db = _two_events(tmp_path)
    bad = _bad_id(db)
    if system == "fide":
        monkeypatch.setattr(fide_run, "run_periods", _fail_on(bad, fide_run.run_periods))
    else:  # ffe, elo, glicko2: their drivers leave events out through `full_run`
        monkeypatch.setattr(full_run, "scope_skips", _fail_on(bad, full_run.scope_skips))
    result = runner.invoke(app, ["rate", "--system", system, "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "RuntimeError" not in result.output
    named = [ln for ln in result.output.splitlines() if "Bad Open" in ln]
    assert len(named) == 1 and f"tournament {bad}" in named[0] and "simulated engine fault" in named[0]
    rated = db_rows(
        db,
        "SELECT DISTINCT t.name FROM tournament_ratings r JOIN tournaments t USING (tournament_id) "
        f"WHERE system = '{system}'",
    )
    assert sorted(n for (n,) in rated) == ["Good Open", "Later Open"]
    skips = db_rows(db, f"SELECT tournament_id, reason, n_games FROM rating_skips WHERE system = '{system}'")
    assert (bad, "rating_failed: simulated engine fault", 1) in skips


def test_isolate_finds_every_failing_tournament_and_leaves_healthy_runs_alone():
    from elopipe.rating import faults

    calls: list[tuple[frozenset[int], bool]] = []

    def run(excluded, write):
        calls.append((frozenset(excluded), write))
        broken = {3, 7} - set(excluded)
        if broken:
            raise ValueError(f"tournament {min(broken)} overflows\nexpression detail")
        return sorted(set(range(10)) - set(excluded))

    result, failed = faults.isolate(run, lambda: list(range(10)))
    assert result == [0, 1, 2, 4, 5, 6, 8, 9]
    assert failed == {3: "rating_failed: tournament 3 overflows", 7: "rating_failed: tournament 7 overflows"}
    # the bisection probes never write; the full run and one run per culprit found may
    assert [ex for ex, write in calls if write] == [frozenset(), frozenset({3}), frozenset({3, 7})]

    calls.clear()
    assert faults.isolate(lambda excluded, write: calls.append(write) or "ok", lambda: [1, 2]) == ("ok", {})
    assert calls == [True]  # a healthy run: computed once, written once

    def always(excluded, write):
        raise RuntimeError("store unreadable")

    with pytest.raises(RuntimeError, match="store unreadable"):
        faults.isolate(always, lambda: [1, 2, 3])  # not a tournament's doing: the error stands
