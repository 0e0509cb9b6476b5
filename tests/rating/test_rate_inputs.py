"""Incremental rating (issue 27): every list an incremental run leaves equals the from-scratch one,
and a run that finds its inputs unchanged (`elopipe.rating.inputs`) writes nothing; a correction
(a players merge, a TRF replacing another) is never taken for "nothing changed"."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from elopipe.identity import decisions
from elopipe.ingest.driver import ingest_paths
from elopipe.rating import inputs
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
from tests.helpers.ingested import ingested, rated
from tests.helpers.paths import SHARED_DATA
from tests.helpers.store_rows import db_rows, system_rows

TRF, PGN = SHARED_DATA / "trf", SHARED_DATA / "pgn"
# later events first (2011 from May on, a 2022 PGN), then earlier ones (February 2011, 2010, 2008)
FIRST = [
    TRF / "irl_kilkenny_masters_2011_gms_national_ids.trf",
    TRF / "irl_galway_major_2011_partial_birthdates.trf",
    PGN / "fide_candidates_2022_madrid_spain.pgn",
]
LATER = [
    TRF / "irl_bunratty_masters_2011_crlf.trf",
    TRF / "irl_bunratty_major_2011_crlf.trf",
    TRF / "irl_bunratty_challengers_2011_crlf.trf",
    TRF / "irl_gonzaga_classic_2008_fide_ids.trf",
    PGN / "wchcand22.pgn",
]
SYSTEMS = ("fide", "ffe", "elo", "glicko2")
RESULTS = ("rating_lists", "rating_changes", "tournament_ratings", "rating_discrepancies", "ffe_details")

pytestmark = pytest.mark.skipif(not TRF.exists(), reason="../shared/data is not available")


def _rate(db: Path, system: str):
    with open_writer(db) as con:
        return rate(con, system)


def _results(db: Path, system: str) -> dict[str, list[tuple]]:
    """Every stored result row of `system`, run ids left out (ids of players, events and games
    are the same in two stores that ingested the same files in the same order)."""
    return system_rows(db, RESULTS, system)


def _runs(db: Path) -> int:
    return int(db_rows(db, "SELECT count(*) FROM rating_runs")[0][0])


def _same_summary(a, b) -> None:
    for field in ("lists", "first_list", "last_list", "players_rated", "new_ratings", "games_counted", "not_counted"):
        assert getattr(a, field) == getattr(b, field), field


@pytest.mark.parametrize("system", SYSTEMS)
def test_incremental_runs_store_the_from_scratch_lists(tmp_path, system):
    inc, full = tmp_path / "inc.duckdb", tmp_path / "full.duckdb"
    rated(inc, [FIRST], system)
    ingest_paths(LATER, inc)  # lands in periods before the lists already stored
    computed = _rate(inc, system)
    assert computed.first_changed is not None
    ingested(full, FIRST, LATER)
    scratch = _rate(full, system)
    assert _results(inc, system)["rating_lists"], "no list computed"
    assert _results(inc, system) == _results(full, system)
    # nothing new: the engine does not run, nothing is written, the summary is the last run's
    runs = _runs(inc)
    again = _rate(inc, system)
    assert again.first_changed is None and again.lists_written == 0 and again.changed_lists == []
    assert _runs(inc) == runs
    _same_summary(again, scratch)
    assert _results(inc, system) == _results(full, system)


def test_a_players_merge_rerates_and_matches_from_scratch(tmp_path):
    inc, full = tmp_path / "inc.duckdb", tmp_path / "full.duckdb"
    ingested(full, FIRST + LATER)
    rated(inc, [FIRST + LATER], "fide")
    # two rated players without FIDE ID of events that share no player entry
    pair = db_rows(
        inc,
        """
        SELECT a.player_id, b.player_id FROM
          (SELECT DISTINCT player_id, tournament_id FROM rating_changes WHERE system = 'fide' AND counted) a,
          (SELECT DISTINCT player_id, tournament_id FROM rating_changes WHERE system = 'fide' AND counted) b,
          players pa, players pb
        WHERE pa.player_id = a.player_id AND pb.player_id = b.player_id
          AND pa.fide_id IS NULL AND pb.fide_id IS NULL AND pa.national_id IS NULL AND pb.national_id IS NULL
          AND a.tournament_id < b.tournament_id
          AND NOT EXISTS (SELECT 1 FROM tournament_players x JOIN tournament_players y USING (tournament_id)
                          WHERE x.player_id = a.player_id AND y.player_id = b.player_id)
        ORDER BY 1, 2 LIMIT 1
        """,
    )
    assert pair, "no pair of players to merge"
    kept, merged = pair[0]
    for db in (inc, full):
        with open_writer(db) as con:
            decisions.merge_players(con, kept, merged, "test: one person")
    again = _rate(inc, "fide")
    assert again.first_changed is not None
    _rate(full, "fide")
    assert _results(inc, "fide") == _results(full, "fide")


def test_a_trf_replacing_another_rerates_and_matches_from_scratch(tmp_path):
    work = tmp_path / "files"
    work.mkdir()
    trf = work / "galway.trf"
    shutil.copyfile(FIRST[1], trf)
    inc, full = tmp_path / "inc.duckdb", tmp_path / "full.duckdb"
    ingest_paths([FIRST[0], trf], inc)
    _rate(inc, "fide")
    assert _rate(inc, "fide").first_changed is None
    # the organiser's correction: one game's result reversed, the same file name
    lines = trf.read_bytes().split(b"\n")
    row = next(i for i, line in enumerate(lines) if line.startswith(b"001") and b" 1 " in line[91:])
    at = lines[row].index(b" 1 ", 91)
    lines[row] = lines[row][:at] + b" 0 " + lines[row][at + 3 :]
    trf.write_bytes(b"\n".join(lines))
    ingest_paths([trf], inc)
    assert db_rows(inc, "SELECT count(*) FROM source_files WHERE status = 'replaced'")[0][0] == 1
    again = _rate(inc, "fide")
    assert again.first_changed is not None
    ingest_paths([FIRST[0], trf], full)
    _rate(full, "fide")
    # the replaced file's rows are gone from `inc`: compare by what the lists say, not by ids
    sql = """SELECT l.list_date, coalesce(p.fide_id::VARCHAR, p.name) AS who, l.rating, l.games, l.k, l.change, l.flags
             FROM rating_lists l JOIN players p USING (player_id) WHERE l.system = 'fide' ORDER BY ALL"""
    assert db_rows(inc, sql) == db_rows(full, sql)


def test_a_preview_is_not_kept_as_the_last_full_run(tmp_path):
    db = tmp_path / "p.duckdb"
    rated(db, [FIRST + LATER], "fide")
    with open_writer(db) as con:
        rate(con, "fide", through="2011-06")
    assert db_rows(db, "SELECT count(*) FROM rating_inputs WHERE system = 'fide'")[0][0] == 0
    _rate(db, "fide")  # computes (the digests were forgotten), then keeps them
    assert db_rows(db, "SELECT count(*) FROM rating_inputs WHERE system = 'fide'")[0][0] == 1


def test_a_hand_edit_of_the_lists_is_seen_and_the_rapid_digest_reads_the_standard_lists(tmp_path):
    db = tmp_path / "h.duckdb"
    rated(db, [FIRST], "fide")
    with open_writer(db) as con:
        rapid = inputs.fingerprint(con, "fide-rapid", None, {})
        standard = inputs.fingerprint(con, "fide", None, {})
        con.execute(
            "DELETE FROM rating_lists WHERE system = 'fide' AND (list_date, player_id) IN"
            " (SELECT (list_date, player_id) FROM rating_lists WHERE system = 'fide' ORDER BY ALL LIMIT 1)"
        )
        # the standard lists seed unrated rapid players: rapid's inputs changed, standard's did not
        assert inputs.fingerprint(con, "fide-rapid", None, {}) != rapid
        assert inputs.fingerprint(con, "fide", None, {}) == standard
    kept = "SELECT outputs FROM rating_inputs WHERE system = 'fide'"
    left = db_rows(db, kept)
    # its own lists are not as its last run left them: the engine runs (its period digests decide
    # what to rewrite) and the digest of what it leaves is kept anew
    _rate(db, "fide")
    assert db_rows(db, kept) != left


def test_a_resumed_fide_run_reads_the_events_once_and_sees_a_change_to_one_of_them(tmp_path, monkeypatch):
    """`rate` digests each event's rows once (`event_inputs.digests`): the fingerprint, the FIDE
    plan's period digests and its events' dates all take that frame, the plan adding its players'
    facts (`event_inputs.facts`, once); a change to a game the rating reads, to an entry or to an
    event's row changes the fingerprint, and the lists stay the from-scratch ones."""
    from elopipe.rating import event_inputs

    db = tmp_path / "e.duckdb"
    rated(db, [FIRST[:2]], "fide")
    ingest_paths(FIRST[2:], db)  # a 2022 event, after the 2011 ones
    reads: list[str] = []
    for name in ("digests", "facts"):
        real = getattr(event_inputs, name)
        monkeypatch.setattr(event_inputs, name, lambda *a, _f=real, _n=name, **k: reads.append(_n) or _f(*a, **k))
    summary = _rate(db, "fide")
    assert summary.resumed_from is not None and sorted(reads) == ["digests", "facts"]
    assert event_inputs.reused(object()) is None  # lent for that run only  # type: ignore[arg-type]
    scratch = tmp_path / "s.duckdb"
    rated(scratch, [FIRST], "fide")
    assert _results(db, "fide") == _results(scratch, "fide")
    edits = (
        "UPDATE games SET round = round + 1 WHERE game_id = (SELECT min(game_id) FROM games)",
        "UPDATE tournament_players SET rating_in_file = 2000 WHERE player_id ="
        " (SELECT min(player_id) FROM tournament_players)",
        "UPDATE tournaments SET end_date = end_date + 1"
        " WHERE tournament_id = (SELECT min(tournament_id) FROM tournaments)",
    )
    for edit in edits:
        with open_writer(db) as con:
            before = inputs.fingerprint(con, "fide", None, {})
            con.execute(edit)
            assert inputs.fingerprint(con, "fide", None, {}) != before, edit


def test_the_events_game_dates_read_with_their_digests_are_those_load_tournaments_reads(tmp_path):
    """`event_inputs.digests` counts each event's canonical games and their dates in its one pass:
    `load_tournaments` given them returns what it reads itself, on a store where a PGN repeats the
    games of another (``game_sources`` hides them) and events are held in several files."""
    from elopipe.rating import event_inputs, store_io
    from tests.identity.test_split_events import split_by_rounds

    db = tmp_path / "d.duckdb"
    ingested(db, FIRST + LATER)
    ingest_paths(list(split_by_rounds(PGN / "wjun19.pgn", 2, tmp_path / "split")), db)
    with open_writer(db) as con:
        assert con.execute("SELECT count(*) FROM game_sources WHERE game_id <> source_game_id").fetchall()[0][0] > 0
        assert con.execute("SELECT count(*) FROM tournaments WHERE event_id IS NOT NULL").fetchall()[0][0] > 0
        own = store_io.load_tournaments(con)
        given = store_io.load_tournaments(con, event_inputs.digests(con))
    assert given.equals(own)
