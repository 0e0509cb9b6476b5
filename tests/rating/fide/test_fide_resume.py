"""A FIDE run resumed from a checkpoint (`elopipe.rating.fide.resume`, issue 27) stores the lists a
run from the first period stores, on real Irish TRF files of 2011 (lists of May, July, September and
November 2011 and January 2012) and variants made from them: a new file after the last period, a new
file in the last period, a late file in an earlier period, a corrected file, a players merge, a game
found to be another source's, a hand edit of a list, the 'file' Ro policy. Each case also says which
way the run went."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from elopipe.identity import decisions
from elopipe.ingest.driver import ingest_paths
from elopipe.rating.fide.resume import EVERY_PERIOD, SHARED_WORDS
from elopipe.rating.run import rate
from elopipe.rating.summary import RateSummary
from elopipe.store.connect import open_writer
from tests.helpers.ingested import ingested, rated
from tests.helpers.paths import SHARED_DATA
from tests.helpers.store_rows import db_rows, system_rows

TRF = SHARED_DATA / "trf"
BUNRATTY = TRF / "irl_bunratty_masters_2011_crlf.trf"  # February 2011: the first list, May 2011
JUNIOR = TRF / "irl_irish_junior_champs_2011_crlf.trf"  # July 2011
INTERMEDIATE = TRF / "irl_irish_intermediate_champs_2011_latin1_crlf.trf"  # July 2011, beside the junior
GALWAY = TRF / "irl_galway_major_2011_partial_birthdates.trf"  # September-October 2011
KILKENNY = TRF / "irl_kilkenny_masters_2011_gms_national_ids.trf"  # November 2011
OPTIONS_CHANGED = f"every period's inputs changed: {SHARED_WORDS['options']}"
TABLES = (
    "rating_lists",
    "rating_changes",
    "tournament_ratings",
    "rating_discrepancies",
    "rating_skips",
    "rate_of_play",
    "title_norms",
    "title_norm_inputs",
)
COUNTS = (
    "lists", "first_list", "last_list", "players_rated", "new_ratings", "games_counted", "not_counted",
    "events_skipped", "unknown_tc_games", "discrepancies", "ro_far", "ro_far_entries", "assumed_events",
)  # fmt: skip

pytestmark = pytest.mark.skipif(not TRF.exists(), reason="../shared/data is not available")


def _rate(db: Path, **params: object) -> RateSummary:
    with open_writer(db) as con:
        return rate(con, "fide", **params)


def _rows(db: Path, where: str = "") -> dict[str, list[tuple]]:
    """Every stored row of the system's results, run ids left out; `where`: only the rows of the
    dated tables it keeps."""
    return system_rows(db, TABLES if not where else TABLES[:4], "fide", where)


def _same_as_scratch(tmp_path: Path, inc: Path, batches: list[list[Path]], resumed: RateSummary, **params: object):
    """A store that ingested the same `batches` in order and rated once holds the same rows, and
    `resumed`'s counts are its run's."""
    full = ingested(tmp_path / "full.duckdb", *batches)
    scratch = _rate(full, **params)
    assert scratch.full_reason is not None and scratch.resumed_from is None
    assert _rows(inc) == _rows(full)
    assert _rows(inc)["rating_lists"], "no list computed"
    for field in COUNTS:
        assert getattr(resumed, field) == getattr(scratch, field), field


def test_a_new_file_after_the_last_period_resumes_after_it(tmp_path):
    inc = tmp_path / "inc.duckdb"
    first = rated(inc, [[BUNRATTY, GALWAY]], "fide")
    assert first.resumed_from is None and first.full_reason and "no checkpoint" in first.full_reason
    ingest_paths([KILKENNY], inc)
    again = _rate(inc)
    assert again.resumed_from == dt.date(2012, 1, 1) and again.full_reason is None
    assert again.changed_lists == [dt.date(2012, 1, 1)]
    _same_as_scratch(tmp_path, inc, [[BUNRATTY, GALWAY], [KILKENNY]], again)


def test_a_new_file_in_the_last_period_resumes_from_it(tmp_path, monkeypatch):
    """... and decides again the title norms of its own event only: the junior championship
    beside it on the same list keeps its rows (issue 27), which are those a run from scratch stores."""
    from elopipe.rating.fide import norms_store

    inc = tmp_path / "inc.duckdb"
    rated(inc, [[BUNRATTY, JUNIOR]], "fide")
    last = db_rows(inc, "SELECT max(list_date) FROM rating_lists WHERE system = 'fide'")[0][0]
    junior = db_rows(inc, f"SELECT DISTINCT tournament_id FROM title_norms WHERE list_date = '{last}'")
    assert junior, "no norm row of the junior championship: nothing would be kept"
    ingest_paths([INTERMEDIATE], inc)
    decided: list[int] = []
    evaluate = norms_store.evaluate_events

    def spy(con, tids, system, **kw):
        decided.extend(tids)
        return evaluate(con, tids, system, **kw)

    monkeypatch.setattr(norms_store, "evaluate_events", spy)
    again = _rate(inc)
    monkeypatch.undo()
    assert again.resumed_from == last
    new = db_rows(inc, f"SELECT DISTINCT tournament_id FROM tournament_ratings WHERE list_date = '{last}'")
    assert decided and sorted(decided) == sorted(t for (t,) in new if (t,) not in junior)
    _same_as_scratch(tmp_path, inc, [[BUNRATTY, JUNIOR], [INTERMEDIATE]], again)


def test_a_late_file_in_an_earlier_period_resumes_from_its_period(tmp_path):
    inc = tmp_path / "inc.duckdb"
    rated(inc, [[BUNRATTY, GALWAY, KILKENNY]], "fide")
    ingest_paths([JUNIOR], inc)
    again = _rate(inc)
    # the junior championship (July 2011) is rated on the September list; the later lists follow
    assert again.resumed_from == dt.date(2011, 9, 1)
    assert again.changed_lists and min(again.changed_lists) >= dt.date(2011, 9, 1)
    _same_as_scratch(tmp_path, inc, [[BUNRATTY, GALWAY, KILKENNY], [JUNIOR]], again)


def test_a_corrected_file_resumes_from_its_period(tmp_path):
    work = tmp_path / "files"
    work.mkdir()
    galway = work / "galway.trf"
    shutil.copyfile(GALWAY, galway)
    inc = tmp_path / "inc.duckdb"
    ingest_paths([BUNRATTY, galway, KILKENNY], inc)
    _rate(inc)
    # the organiser's correction: one game's result reversed, the same file name
    lines = galway.read_bytes().split(b"\n")
    row = next(i for i, line in enumerate(lines) if line.startswith(b"001") and b" 1 " in line[91:])
    at = lines[row].index(b" 1 ", 91)
    lines[row] = lines[row][:at] + b" 0 " + lines[row][at + 3 :]
    galway.write_bytes(b"\n".join(lines))
    ingest_paths([galway], inc)
    assert db_rows(inc, "SELECT count(*) FROM source_files WHERE status = 'replaced'")[0][0] == 1
    again = _rate(inc)
    assert again.resumed_from is not None and again.resumed_from > dt.date(2011, 5, 1)
    full = tmp_path / "full.duckdb"
    ingest_paths([BUNRATTY, galway, KILKENNY], full)
    _rate(full)
    # the replaced file's rows are gone from `inc`: compare by what the lists say, not by ids
    sql = """SELECT l.list_date, coalesce(p.fide_id::VARCHAR, p.name) AS who, l.rating, l.games, l.k, l.change,
                    l.flags, l.total_games FROM rating_lists l JOIN players p USING (player_id)
             WHERE l.system = 'fide' ORDER BY ALL"""
    assert db_rows(inc, sql) == db_rows(full, sql)


def _rated_and_not(tmp_path: Path) -> tuple[Path, Path]:
    """Two stores of the Irish files: `inc` rated under fide (to be changed and resumed), `full`
    only ingested (to be changed the same way and rated from scratch)."""
    inc, full = tmp_path / "inc.duckdb", tmp_path / "full.duckdb"
    ingested(full, [BUNRATTY, GALWAY, KILKENNY])
    rated(inc, [[BUNRATTY, GALWAY, KILKENNY]], "fide")
    return inc, full


def test_a_players_merge_matches_from_scratch(tmp_path):
    inc, full = _rated_and_not(tmp_path)
    # two players of the later events whose IDs do not tell them apart, who never met (the first
    # list, May 2011, is kept)
    pair = db_rows(
        inc,
        """
        SELECT a.player_id, b.player_id FROM
          (SELECT DISTINCT player_id, tournament_id FROM rating_changes WHERE system = 'fide'
             AND list_date > DATE '2011-05-01') a,
          (SELECT DISTINCT player_id, tournament_id FROM rating_changes WHERE system = 'fide'
             AND list_date > DATE '2011-05-01') b,
          players pa, players pb
        WHERE pa.player_id = a.player_id AND pb.player_id = b.player_id
          AND (pa.fide_id IS NULL OR pb.fide_id IS NULL) AND (pa.national_id IS NULL OR pb.national_id IS NULL)
          AND a.tournament_id < b.tournament_id
          AND NOT EXISTS (SELECT 1 FROM tournament_players x JOIN tournament_players y USING (tournament_id)
                          WHERE x.player_id = a.player_id AND y.player_id = b.player_id)
          AND NOT EXISTS (SELECT 1 FROM rating_changes c WHERE c.system = 'fide' AND c.list_date = DATE '2011-05-01'
                          AND c.player_id IN (a.player_id, b.player_id))
        ORDER BY 1, 2 LIMIT 1
        """,
    )
    assert pair, "no pair of players to merge"
    kept, merged = pair[0]
    for db in (inc, full):
        with open_writer(db) as con:
            decisions.merge_players(con, kept, merged, "test: one person")
    again = _rate(inc)
    assert again.resumed_from is not None and again.first_changed is not None
    scratch = _rate(full)
    assert scratch.resumed_from is None
    assert _rows(inc) == _rows(full)
    for field in COUNTS:
        assert getattr(again, field) == getattr(scratch, field), field


def test_a_game_found_to_be_another_sources_resumes_from_its_period(tmp_path):
    # the plan digests games as stored: a game that a game_sources row marks as another source
    # row of a canonical game leaves canonical_games, and its period is computed again
    inc, full = _rated_and_not(tmp_path)
    rows = db_rows(
        inc,
        """SELECT c.game_id, c.list_date FROM rating_changes c WHERE c.system = 'fide' AND c.counted
           AND c.list_date > DATE '2011-05-01' ORDER BY c.list_date, c.game_id LIMIT 1""",
    )
    assert rows, "no rated game after the first list"
    hidden, period = rows[0]
    other = db_rows(inc, f"SELECT min(game_id) FROM games WHERE game_id <> {hidden}")[0][0]
    for db in (inc, full):
        with open_writer(db) as con:
            con.execute(
                "INSERT INTO game_sources (game_id, source_game_id, file_id, match_rule, role)"
                " SELECT ?, game_id, file_id, 'test', 'duplicate' FROM games WHERE game_id = ?",
                [other, hidden],
            )
    again = _rate(inc)
    assert again.resumed_from == period and again.full_reason is None
    assert not db_rows(inc, f"SELECT 1 FROM rating_changes WHERE system = 'fide' AND game_id = {hidden}")
    scratch = _rate(full)
    assert scratch.resumed_from is None
    assert _rows(inc) == _rows(full)
    for field in COUNTS:
        assert getattr(again, field) == getattr(scratch, field), field


def test_a_hand_edited_list_is_never_read_as_the_engines(tmp_path):
    inc = tmp_path / "inc.duckdb"
    rated(inc, [[BUNRATTY, JUNIOR, GALWAY]], "fide")
    edited = "list_date = DATE '2011-11-01'"
    with open_writer(inc) as con:
        con.execute(f"UPDATE rating_lists SET rating = rating + 100 WHERE system = 'fide' AND {edited}")
    ingest_paths([KILKENNY], inc)
    again = _rate(inc)
    assert again.resumed_from is None and again.full_reason == "a stored list was changed since it was computed"
    full = ingested(tmp_path / "full.duckdb", [BUNRATTY, JUNIOR, GALWAY], [KILKENNY])
    _rate(full)
    # the list computed after the edited one is the engine's, not one computed from the edit, and
    # the edited list is the engine's again
    assert _rows(inc) == _rows(full)


EDITS = {
    "a rating": "UPDATE rating_lists SET rating = rating + 100 WHERE system = 'fide' AND list_date = DATE '2011-09-01'",
    "a list's rows": "DELETE FROM rating_lists WHERE system = 'fide' AND list_date = DATE '2011-07-01'",
    "a list's games": "DELETE FROM rating_changes WHERE system = 'fide' AND list_date = DATE '2011-09-01'",
}


@pytest.mark.parametrize("window", [None, "1"], ids=["one piece", "windows"])
@pytest.mark.parametrize("edit", list(EDITS))
def test_stored_results_edited_by_hand_are_the_engines_again_after_rate(tmp_path, monkeypatch, edit, window):
    """With nothing new, a run that finds the stored results edited (a rating changed, a list's
    rows or its games deleted) compares every list, not only those whose inputs changed, and
    rewrites the edited one: the store then holds what a run from scratch stores."""
    if window is not None:
        from elopipe.rating.fide import windows

        monkeypatch.setenv(windows.WINDOW_SETTING, window)  # a window a period
    inc = tmp_path / "inc.duckdb"
    rated(inc, [[BUNRATTY, JUNIOR, GALWAY, KILKENNY]], "fide")
    full = _rows(inc)
    with open_writer(inc) as con:
        con.execute(EDITS[edit])
    assert _rows(inc) != full
    again = _rate(inc)
    assert again.resumed_from is None and again.lists_written == 1
    assert _rows(inc) == full
    assert _rate(inc).from_last_run


def test_the_file_ro_policy_resumes_and_a_change_of_policy_does_not(tmp_path):
    inc = tmp_path / "inc.duckdb"
    rated(inc, [[BUNRATTY, GALWAY]], "fide", ro_from="file")
    ingest_paths([KILKENNY], inc)
    again = _rate(inc, ro_from="file")
    assert again.resumed_from == dt.date(2012, 1, 1) and again.ro_from == "file"
    _same_as_scratch(tmp_path, inc, [[BUNRATTY, GALWAY], [KILKENNY]], again, ro_from="file")
    # another policy changes what every period reads: every period is computed again
    other = _rate(inc)
    assert other.resumed_from is None and other.full_reason == OPTIONS_CHANGED


def test_a_players_fact_changed_in_the_store_resumes_from_the_period_of_his_games(tmp_path):
    """A fact the engine reads of a player (`store_io.load_players`: here his birth date, no row of
    an event changing) makes the periods of his games change (`event_inputs.facts`): the run
    resumes from the first of them and stores what a from-scratch run of the same store stores."""
    edit = (
        "UPDATE players SET birth_date = DATE '2009-06-01' WHERE player_id = (SELECT min(tp.player_id)"
        " FROM tournament_players tp JOIN tournaments t USING (tournament_id) WHERE t.end_date >= DATE '2011-11-01'"
        " AND tp.player_id NOT IN (SELECT player_id FROM tournament_players tp2 JOIN tournaments t2"
        " USING (tournament_id) WHERE t2.end_date < DATE '2011-11-01'))"
    )
    inc = tmp_path / "inc.duckdb"
    rated(inc, [[BUNRATTY, GALWAY, KILKENNY]], "fide")
    with open_writer(inc) as con:
        con.execute(edit)
    again = _rate(inc)
    assert again.resumed_from is not None and again.resumed_from >= dt.date(2011, 11, 1)
    full = ingested(tmp_path / "full.duckdb", [BUNRATTY, GALWAY, KILKENNY])
    with open_writer(full) as con:
        con.execute(edit)
    scratch = _rate(full)
    assert scratch.resumed_from is None
    assert _rows(inc) == _rows(full)
    for field in COUNTS:
        assert getattr(again, field) == getattr(scratch, field), field


def test_new_data_before_the_first_list_says_so(tmp_path):
    inc = tmp_path / "inc.duckdb"
    rated(inc, [[GALWAY, KILKENNY]], "fide")
    ingest_paths([BUNRATTY], inc)
    again = _rate(inc)
    assert again.resumed_from is None
    assert again.full_reason == (
        "the inputs of a period before the first list (2011-11) changed, the period of 2011-05: new games,"
        " a corrected file or an identity decision"
    )
    _same_as_scratch(tmp_path, inc, [[GALWAY, KILKENNY], [BUNRATTY]], again)


def test_the_first_periods_own_change_is_named():
    from elopipe.rating.fide.resume import _first_period_reason

    lists = [dt.date(2011, 5, 1), dt.date(2011, 7, 1), dt.date(2011, 9, 1)]
    first = "the inputs of the first period (2011-05) changed: its games, events, players or identity decisions"
    # what every period reads is known unchanged ([]), changed (its parts named) or unknown (None)
    assert _first_period_reason(set(lists), lists, None) == EVERY_PERIOD
    assert _first_period_reason(set(lists), lists, []) == (
        "the inputs of every period changed: their games, events, players or identity decisions"
    )
    assert _first_period_reason(set(lists), lists, ["code"]) == (
        "every period's inputs changed: elopipe's rating code (another version)"
    )
    assert _first_period_reason({lists[0]}, lists, []) == first
    assert _first_period_reason({lists[0]}, lists, None) == first
    # one list: its period is every period, and only what every period reads says which changed
    one = lists[:1]
    assert _first_period_reason({lists[0]}, one, []) == first
    assert _first_period_reason({lists[0]}, one, None) == (
        f"{first}, or what every period reads (the options, an imported official list or elopipe's rating code)"
    )
    assert _first_period_reason({lists[0]}, one, ["options", "lists"]) == (
        "every period's inputs changed: the options (the rules, a parameter, --ro-from, --no-moves or --unknown-tc);"
        " an imported official list (for rapid or blitz, the standard lists)"
    )


class _Later(dt.date):
    """A date class whose `today` is `_Later.shift` days after the machine's."""

    shift = 0

    @classmethod
    def today(cls) -> dt.date:
        return dt.date.today() + dt.timedelta(days=cls.shift)


def _machine_date_moves(monkeypatch: pytest.MonkeyPatch, days: int) -> None:
    """The machine's date as `elopipe.read.dates` reads it moves `days` on."""
    import types

    from elopipe.read import dates

    later = type("_LaterBy", (_Later,), {"shift": days})
    monkeypatch.setattr(dates, "dt", types.SimpleNamespace(date=later, timedelta=dt.timedelta, datetime=dt.datetime))


def test_a_rate_on_a_new_day_with_nothing_new_computes_nothing(tmp_path, monkeypatch):
    """The date bound moves every day; what it leaves out of the store does not (issue 27): the
    run on a later day returns the last run's summary, and a new file then resumes after the
    last period as on the day of the first run."""
    inc = tmp_path / "inc.duckdb"
    rated(inc, [[BUNRATTY, GALWAY]], "fide")
    before = _rows(inc)
    _machine_date_moves(monkeypatch, 400)
    again = _rate(inc)
    assert again.from_last_run and again.full_reason is None and again.lists_written == 0
    assert _rows(inc) == before
    ingest_paths([KILKENNY], inc)
    later = _rate(inc)
    assert later.resumed_from == dt.date(2012, 1, 1) and later.full_reason is None


def test_a_stored_date_crossing_the_date_bound_recomputes_and_says_why(tmp_path, monkeypatch):
    """A date beyond today + the margin (a store written by an older version) is read as unknown;
    the day it becomes plausible the event's period changes, so every period is computed again,
    and the run names the machine's date as the reason."""
    inc = tmp_path / "inc.duckdb"
    ingested(inc, [BUNRATTY, GALWAY])
    ahead = dt.date.today() + dt.timedelta(days=90)
    with open_writer(inc) as con:
        tid = con.execute("SELECT min(tournament_id) FROM tournaments").fetchone()[0]
        con.execute("UPDATE tournaments SET end_date = ? WHERE tournament_id = ?", [ahead, tid])
    _rate(inc)
    _machine_date_moves(monkeypatch, 30)
    assert _rate(inc).from_last_run  # still beyond the bound: nothing the run reads changed
    _machine_date_moves(monkeypatch, 90)
    crossed = _rate(inc)
    assert crossed.resumed_from is None and not crossed.from_last_run
    assert crossed.full_reason == f"every period's inputs changed: {SHARED_WORDS['dates']}"
