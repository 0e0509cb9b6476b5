"""Games removed from the store (a correction that moves an event to other dates, issue #27 hx1):
every list is then what a computation from scratch on the store's games gives. A list the
removed games were rated on, and no game is rated on any more, is removed, and the run says so;
its games are never counted on two lists."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.ingest.driver import ingest_paths
from elopipe.rating.fide import windows
from elopipe.rating.run import rate
from elopipe.rating.summary import RateSummary
from elopipe.store.connect import open_writer
from tests.helpers.store_rows import db_rows
from tests.helpers.trf_build import round_robin

# the lists by what they say, not by ids: the corrected store keeps the replaced file's players
LISTS = """SELECT l.list_date, coalesce(p.fide_id::VARCHAR, p.name) AS who, l.rating, l.games, l.k, l.change,
                  l.flags, l.total_games FROM rating_lists l JOIN players p USING (player_id)
           WHERE l.system = ? ORDER BY ALL"""
CHANGES = """SELECT c.list_date, coalesce(p.fide_id::VARCHAR, p.name), c.ro, c.rc, c.pd, c.score, c.k, c.counted,
             c.reason FROM rating_changes c JOIN players p USING (player_id) WHERE c.system = ? ORDER BY ALL"""


def _rate(db: Path, system: str = "fide") -> RateSummary:
    with open_writer(db) as con:
        return rate(con, system)


def _same_as_scratch(tmp_path: Path, inc: Path, files: list[Path], system: str = "fide") -> None:
    full = tmp_path / f"scratch-{system}.duckdb"
    ingest_paths(files, full)
    _rate(full, system)
    for sql in (LISTS, CHANGES):
        assert db_rows(inc, sql.replace("?", f"'{system}'")) == db_rows(full, sql.replace("?", f"'{system}'"))


@pytest.mark.parametrize("system", ["fide", "elo", "ffe"])
def test_an_event_moved_to_a_later_period_leaves_no_list_behind(tmp_path: Path, system: str) -> None:
    # the club's file dated April by mistake, rated, then its date fixed to May: the April games
    # were rated on the May list; they are now the June list's, and the May list has no game
    d = tmp_path / "files"
    d.mkdir()
    club = d / "club.trf"
    club.write_text(round_robin("2023/04/01", "2023/04/05"))
    inc = tmp_path / "inc.duckdb"
    ingest_paths([club], inc)
    _rate(inc, system)
    before = {r[0] for r in db_rows(inc, f"SELECT DISTINCT list_date FROM rating_lists WHERE system = '{system}'")}
    club.write_text(round_robin("2023/05/01", "2023/05/05"))
    assert ingest_paths([club], inc).files[0].replaced_file_ids == [1]
    again = _rate(inc, system)
    _same_as_scratch(tmp_path, inc, [club], system)
    after = {r[0] for r in db_rows(inc, f"SELECT DISTINCT list_date FROM rating_lists WHERE system = '{system}'")}
    assert again.removed_lists == sorted(before - after)
    if system == "fide":
        assert after == {dt.date(2023, 6, 1)} and again.removed_lists == [dt.date(2023, 5, 1)]
        assert again.removed_line() == "fide: 1 list removed, no game is rated on it any more (2023-05-01)"
        # each game on one list
        assert db_rows(inc, "SELECT sum(games) FROM rating_lists WHERE system = 'fide'") == [(30,)]


def _ingested(tmp_path: Path, files: dict[str, str]) -> tuple[list[Path], Path]:
    """The TRF `files` (name: text) written to tmp_path/files and ingested into a new store:
    (their paths, the store)."""
    d = tmp_path / "files"
    d.mkdir()
    paths = [d / name for name in files]
    for path, text in zip(paths, files.values(), strict=True):
        path.write_text(text)
    inc = tmp_path / "inc.duckdb"
    ingest_paths(paths, inc)
    return paths, inc


def test_an_event_moved_to_an_earlier_period_removes_the_later_lists(tmp_path: Path) -> None:
    # two events: February (the first list, March) and June, fixed to April: the lists of June
    # and July go (a run resumed from the May list)
    (winter, late), inc = _ingested(
        tmp_path,
        {
            "winter.trf": round_robin("2023/02/01", "2023/02/05", name="Winter Open"),
            "late.trf": round_robin("2023/06/01", "2023/06/05", result="="),
        },
    )
    first = _rate(inc)
    assert (first.first_list, first.last_list) == (dt.date(2023, 3, 1), dt.date(2023, 7, 1))
    late.write_text(round_robin("2023/04/01", "2023/04/05", result="="))
    assert ingest_paths([late], inc).files[0].replaced_file_ids == [2]
    again = _rate(inc)
    assert again.resumed_from is not None
    assert again.removed_lists == [dt.date(2023, 6, 1), dt.date(2023, 7, 1)]
    _same_as_scratch(tmp_path, inc, [winter, late])
    # the checkpoints of the lists removed went with them: the next run has nothing to do
    third = _rate(inc)
    assert third.lists_written == 0 and third.removed_lists == [] and third.full_reason is None
    assert db_rows(inc, "SELECT max(list_date) FROM rating_lists WHERE system = 'fide'") == [(dt.date(2023, 5, 1),)]


def test_rate_says_which_lists_it_removed(tmp_path: Path) -> None:
    d = tmp_path / "files"
    d.mkdir()
    club, db = d / "club.trf", tmp_path / "s.duckdb"
    club.write_text(round_robin("2023/04/01", "2023/04/05"))
    ingest_paths([club], db)
    assert CliRunner().invoke(app, ["rate", "--system", "fide", "--db", str(db)]).exit_code == 0
    club.write_text(round_robin("2023/05/01", "2023/05/05"))
    ingest_paths([club], db)
    res = CliRunner().invoke(app, ["rate", "--system", "fide", "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert "fide: 1 list removed, no game is rated on it any more (2023-05-01)" in " ".join(res.output.split())


@pytest.mark.parametrize("window", [None, "1"], ids=["one-piece", "windows"])
def test_the_first_event_moved_a_month_later_removes_the_first_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: str | None
) -> None:
    # the first event (February: the March list) fixed to March: the March list goes; a run of
    # every period, in one piece or window by window
    if window is not None:
        monkeypatch.setenv(windows.WINDOW_SETTING, window)
    (winter, spring), inc = _ingested(
        tmp_path,
        {
            "winter.trf": round_robin("2023/02/01", "2023/02/05", name="Winter Open"),
            "spring.trf": round_robin("2023/04/01", "2023/04/05", result="="),
        },
    )
    assert _rate(inc).first_list == dt.date(2023, 3, 1)
    winter.write_text(round_robin("2023/03/01", "2023/03/05", name="Winter Open"))
    assert ingest_paths([winter], inc).files[0].replaced_file_ids == [1]
    again = _rate(inc)
    assert again.removed_lists == [dt.date(2023, 3, 1)]
    _same_as_scratch(tmp_path, inc, [winter, spring])


def test_a_run_that_only_removes_lists_says_that_alone(tmp_path: Path) -> None:
    """`--unknown-tc rapid` moves the events without a time control off the standard list: every
    fide list goes, none is rewritten, and rate says the removal (it said 'rewritten from
    2023-03-01: 0 lists' beside it)."""
    (_, _), db = _ingested(
        tmp_path,
        {
            "winter.trf": round_robin("2023/02/01", "2023/02/05", name="Winter Open"),
            "spring.trf": round_robin("2023/04/01", "2023/04/05", result="="),
        },
    )
    assert CliRunner().invoke(app, ["rate", "--system", "fide", "--db", str(db)]).exit_code == 0
    res = CliRunner().invoke(app, ["rate", "--system", "fide", "--unknown-tc", "rapid", "--db", str(db)])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "fide: 3 lists removed, no game is rated on them any more (2023-03-01, 2023-04-01, 2023-05-01)" in out
    assert "rewritten from" not in out
