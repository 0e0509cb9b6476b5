"""A FIDE run from the first period in windows of periods (`elopipe.rating.fide.windows`, issue 27)
stores every row a run in one piece stores, on the real TRF files of ../shared/data: every TRF at
once (events from 2005 to 2025, a team league over a season, events in progress, online events),
and the Irish files of 2011 rated, previewed, rated again under another Ro policy and resumed after a
new file. ELOPIPE_RATE_WINDOW_GAMES=1 makes every period with events a window of its own."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from elopipe.ingest.driver import ingest_paths
from elopipe.rating.fide import run as fide_run
from elopipe.rating.fide import windows
from elopipe.rating.fide.resume import SHARED_WORDS
from elopipe.rating.run import rate
from elopipe.rating.summary import RateSummary
from elopipe.runtime.settings import SettingError, check_environment
from elopipe.store.connect import open_writer
from tests.helpers.ingested import ingested
from tests.helpers.paths import SHARED_DATA
from tests.helpers.store_rows import db_rows, store_tables, system_rows

TRF = SHARED_DATA / "trf"
IRISH = [
    TRF / "irl_bunratty_masters_2011_crlf.trf",  # February 2011: the first list, May 2011
    TRF / "irl_irish_junior_champs_2011_crlf.trf",  # July 2011
    TRF / "irl_galway_major_2011_partial_birthdates.trf",  # September-October 2011
]
KILKENNY = TRF / "irl_kilkenny_masters_2011_gms_national_ids.trf"  # November 2011

needs_data = pytest.mark.skipif(not TRF.exists(), reason="../shared/data is not available")


@pytest.fixture
def counted(monkeypatch):
    """The number of windows of each run (`windows.plan_windows`), in order."""
    seen: list[int] = []
    plan = windows.plan_windows

    def spy(tournaments, budget):
        out = plan(tournaments, budget)
        seen.append(len(out))
        return out

    monkeypatch.setattr(windows, "plan_windows", spy)
    return seen


def _stored(db: Path) -> dict[str, list[tuple]]:
    """Every row of the store (`store_tables`); of the kept summaries, all but the run's seconds."""
    rows = store_tables(db)
    summaries = []
    for row in db_rows(db, "SELECT system, summary FROM rating_inputs ORDER BY system"):
        summary = json.loads(row[1])
        summary.pop("seconds")
        summaries.append((row[0], summary))
    rows["rating_inputs"] = [r[:3] for r in rows["rating_inputs"]]
    rows["rating_inputs summaries"] = summaries  # type: ignore[assignment]
    return rows


def _counts(summary: RateSummary) -> dict[str, object]:
    return {k: v for k, v in vars(summary).items() if k != "seconds"}


def _rate_both(tmp_path: Path, monkeypatch, steps, files: list[Path]) -> tuple[list, list]:
    """The summaries of `steps(con)` (a list of `rate` calls) on two copies of a store of `files`:
    in one piece, then one period a window."""
    src = ingested(tmp_path / "src.duckdb", files)
    out = []
    for name, window in (("one", None), ("windows", "1")):
        db = tmp_path / f"{name}.duckdb"
        shutil.copyfile(src, db)
        if window is None:
            monkeypatch.delenv(windows.WINDOW_SETTING, raising=False)
        else:
            monkeypatch.setenv(windows.WINDOW_SETTING, window)
        with open_writer(db) as con:
            out.append([_counts(s) for s in steps(con)])
    return out[0], out[1]


@needs_data
def test_every_trf_rated_in_windows_stores_what_one_run_stores(tmp_path, monkeypatch, counted):
    one, win = _rate_both(tmp_path, monkeypatch, lambda con: [rate(con, "fide")], sorted(TRF.glob("*.trf")))
    assert counted[0] == 1 and counted[1] > 10, counted
    assert win == one
    assert one[0]["lists"] > 100 and one[0]["failed_events"] == []
    stored, expected = _stored(tmp_path / "windows.duckdb"), _stored(tmp_path / "one.duckdb")
    for table in expected:
        assert stored[table] == expected[table], table
    assert expected["rating_lists"] and expected["title_norms"] and expected["rating_checkpoint_rows"]


@needs_data
def test_a_preview_a_rerate_and_another_policy_in_windows_store_what_one_run_stores(tmp_path, monkeypatch, counted):
    def steps(con):
        return [
            rate(con, "fide", through="2011-09"),
            # no checkpoint after a preview: every period again, the lists up to September unchanged
            rate(con, "fide"),
            # another Ro policy reaches the first period: every period again over the stored lists
            rate(con, "fide", ro_from="file"),
            rate(con, "fide-rapid"),
        ]

    one, win = _rate_both(tmp_path, monkeypatch, steps, [*IRISH, KILKENNY])
    assert counted[:3] == [1, 1, 1] and all(n > 1 for n in counted[3:]), counted
    assert win == one
    # the lists the preview stored are compared, not written again
    assert one[1]["changed_lists"] == [dt.date(2011, 11, 1), dt.date(2012, 1, 1)]
    assert one[2]["full_reason"] == f"every period's inputs changed: {SHARED_WORDS['options']}"
    assert _stored(tmp_path / "windows.duckdb") == _stored(tmp_path / "one.duckdb")


@needs_data
def test_a_run_after_a_run_in_windows_resumes_from_its_checkpoints(tmp_path, monkeypatch):
    monkeypatch.setenv(windows.WINDOW_SETTING, "1")
    inc = ingested(tmp_path / "inc.duckdb", IRISH)
    with open_writer(inc) as con:
        assert rate(con, "fide").full_reason is not None
    ingest_paths([KILKENNY], inc)
    with open_writer(inc) as con:
        again = rate(con, "fide")
    assert again.resumed_from == dt.date(2012, 1, 1) and again.changed_lists == [dt.date(2012, 1, 1)]
    monkeypatch.delenv(windows.WINDOW_SETTING)
    full = ingested(tmp_path / "full.duckdb", IRISH, [KILKENNY])
    with open_writer(full) as con:
        rate(con, "fide")
    _same_rows(inc, full, ("rating_lists", "rating_changes", "tournament_ratings", "title_norms", "rating_checkpoints"))


def _same_rows(a: Path, b: Path, tables: tuple[str, ...]) -> None:
    rows_a, rows_b = system_rows(a, tables, "fide"), system_rows(b, tables, "fide")
    for table in tables:
        assert rows_a[table] == rows_b[table], table


@needs_data
def test_a_run_in_windows_stopped_while_deciding_title_norms_resumes_to_what_one_run_stores(tmp_path, monkeypatch):
    """A window's lists, checkpoint and title norms commit together: a run stopped while a window's
    norms are decided (a Ctrl-C, a kill) keeps none of that window, and the next run stores the
    norms a run in one piece stores (they were lost for good when the norms committed last)."""
    src = ingested(tmp_path / "src.duckdb", [*IRISH, KILKENNY])
    one, stopped = tmp_path / "one.duckdb", tmp_path / "stopped.duckdb"
    shutil.copyfile(src, one)
    shutil.copyfile(src, stopped)
    with open_writer(one) as con:
        rate(con, "fide")
    assert db_rows(one, "SELECT count(*) FROM title_norms WHERE system = 'fide'")[0][0] > 0
    monkeypatch.setenv(windows.WINDOW_SETTING, "1")
    refresh, calls = windows.norms_store.refresh, []

    def stop_in_the_second_window(*args, **kwargs):
        calls.append(args)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return refresh(*args, **kwargs)

    monkeypatch.setattr(windows.norms_store, "refresh", stop_in_the_second_window)
    with open_writer(stopped) as con, pytest.raises(KeyboardInterrupt):
        rate(con, "fide")
    monkeypatch.setattr(windows.norms_store, "refresh", refresh)
    first = db_rows(stopped, "SELECT max(list_date) FROM rating_lists WHERE system = 'fide'")[0][0]
    assert first == db_rows(stopped, "SELECT max(list_date) FROM title_norms WHERE system = 'fide'")[0][0]
    with open_writer(stopped) as con:
        rate(con, "fide")
    _same_rows(stopped, one, ("rating_lists", "rating_changes", "tournament_ratings", "title_norms"))


@needs_data
def test_an_event_the_engine_fails_on_is_left_out_in_its_window(tmp_path, monkeypatch):
    src = ingested(tmp_path / "src.duckdb", [*IRISH, KILKENNY])
    galway = db_rows(src, "SELECT tournament_id FROM tournaments WHERE name ILIKE '%galway%'")[0][0]

    def failing(run_periods):
        def run(prep, *args, **kwargs):
            if galway in prep.sides.get_column("tournament_id").to_list():
                raise RuntimeError("simulated engine fault")
            return run_periods(prep, *args, **kwargs)

        return run

    out = {}
    for name, module, window in (("one", fide_run, None), ("windows", windows, "1")):
        db = tmp_path / f"{name}.duckdb"
        shutil.copyfile(src, db)
        with monkeypatch.context() as m:
            m.setattr(module, "run_periods", failing(module.run_periods))
            if window is not None:
                m.setenv(windows.WINDOW_SETTING, window)
            with open_writer(db) as con:
                out[name] = _counts(rate(con, "fide"))
    assert out["windows"] == out["one"]
    assert len(out["one"]["failed_events"]) == 1 and "simulated engine fault" in out["one"]["failed_events"][0]
    assert _stored(tmp_path / "windows.duckdb") == _stored(tmp_path / "one.duckdb")
    skips = db_rows(tmp_path / "windows.duckdb", "SELECT reason FROM rating_skips WHERE tournament_id = ?", [galway])
    assert skips == [("rating_failed: simulated engine fault",)]
    assert not db_rows(tmp_path / "windows.duckdb", "SELECT 1 FROM rating_checkpoints")


def _events(*rows: tuple[int, str | None, str | None, int]) -> pl.DataFrame:
    """Events as `store_io.load_tournaments` gives them: (id, first day, last day, games)."""
    day = [dt.date.fromisoformat(r[1]) if r[1] else None for r in rows]
    end = [dt.date.fromisoformat(r[2]) if r[2] else None for r in rows]
    return pl.DataFrame(
        {"tournament_id": [r[0] for r in rows], "eff_start": day, "eff_end": end, "n_games": [r[3] for r in rows]},
        schema={"tournament_id": pl.Int64, "eff_start": pl.Date, "eff_end": pl.Date, "n_games": pl.Int64},
    )


def test_windows_hold_whole_periods_of_at_most_the_budget_in_date_order():
    events = _events(
        (1, "2024-01-05", "2024-01-10", 60),  # rated on the February 2024 list
        (2, "2023-06-01", "2024-01-20", 30),  # February 2024, in force from June 2023: a season's league
        (3, "2024-02-03", "2024-02-09", 50),  # March
        (4, "2024-03-02", "2024-03-08", 200),  # April: more than the budget, a window alone
        (5, None, None, 0),  # no dates, no period: with the first window
        (6, "2024-04-02", "2024-04-08", 40),  # May
        (7, "2024-05-02", "2024-05-08", 40),  # June
    )
    found = windows.plan_windows(events, 100)
    assert [w.events for w in found] == [[5, 1, 2], [3], [4], [6, 7]]
    # the earliest list in force at the start of an event of the window or a later one
    assert [w.in_force_from for w in found] == [dt.date(2023, 6, 1)] + [dt.date(2024, m, 1) for m in (2, 3, 4)]
    assert [w.events for w in windows.plan_windows(events, 1000)] == [[5, 1, 2, 3, 4, 6, 7]]


def test_the_window_size_is_a_whole_number_of_games(monkeypatch):
    monkeypatch.delenv(windows.WINDOW_SETTING, raising=False)
    assert windows.window_games() == windows.WINDOW_GAMES
    monkeypatch.setenv(windows.WINDOW_SETTING, "50_000")
    assert windows.window_games() == 50_000
    for bad in ("0", "many", "-5", "\u0663"):  # an Arabic-Indic 3 is no ASCII whole number
        monkeypatch.setenv(windows.WINDOW_SETTING, bad)
        with pytest.raises(SettingError, match=f"{windows.WINDOW_SETTING} .*whole number, 1 or more"):
            check_environment()
