"""A changed file at a known path: a correction of the same event, or a new file under a reused
name (issue 26, item 2). A correction deletes the earlier version's rows, so it needs evidence:
the same event (its name, or overlapping days) and most of the earlier games' pairings."""

from __future__ import annotations

import gzip
import logging
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.ingest.driver import ingest_paths
from elopipe.jobs.requests import IngestRequest
from tests.helpers.paths import REPO, SHARED_DATA
from tests.helpers.small_pgn import event_pgn
from tests.helpers.store_rows import db_rows
from tests.helpers.trf_build import round_robin


def _games_by_event(db: Path) -> list[tuple]:
    return db_rows(
        db, "SELECT t.name, count(*) FROM games g JOIN tournaments t USING (tournament_id) GROUP BY 1 ORDER BY 1"
    )


def test_a_reused_name_with_another_event_is_a_new_file(tmp_path: Path) -> None:
    # the May event's name is a part of the June event's: not the same event, no day in common
    f, db = tmp_path / "y.pgn", tmp_path / "y.duckdb"
    f.write_text(event_pgn("Leinster Championship", [1, 2], "2022.05.07", "Dublin IRL"))
    ingest_paths([f], db)
    f.write_text(event_pgn("Leinster Championship Under 1600", [1, 2], "2022.06.11", "Cork IRL"))
    summary = ingest_paths([f], db)
    assert summary.files[0].replaced_file_ids == []
    assert _games_by_event(db) == [("Leinster Championship", 8), ("Leinster Championship Under 1600", 8)]
    assert db_rows(db, "SELECT status FROM source_files ORDER BY file_id") == [("loaded",), ("loaded",)]


def test_a_file_that_keeps_none_of_the_earlier_games_is_a_new_file(tmp_path: Path) -> None:
    # a league's drop folder: league.pgn holds rounds 1-2; a week later a new league.pgn, rounds 3-4
    f, db = tmp_path / "league.pgn", tmp_path / "s.duckdb"
    f.write_text(event_pgn("Club League", [1, 2], "2022.05.07", "Dublin IRL"))
    ingest_paths([f], db)
    f.write_text(event_pgn("Club League", [3, 4], "2022.05.14", "Dublin IRL"))
    summary = ingest_paths([f], db)
    assert summary.files[0].replaced_file_ids == [] and summary.files[0].removed_games == 0
    assert db_rows(db, "SELECT round, count(*) FROM games GROUP BY 1 ORDER BY 1") == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert "removed" not in summary.line()


def test_the_same_event_with_one_result_corrected_replaces_it(tmp_path: Path) -> None:
    f, db = tmp_path / "e.pgn", tmp_path / "s.duckdb"
    text = event_pgn("Club League", [1, 2], "2022.05.07", "Dublin IRL")
    f.write_text(text)
    ingest_paths([f], db)
    first, rest = text.split('[Result "1-0"]', 1)
    f.write_text(first + '[Result "0-1"]' + rest.replace("1. d4 d5 1-0", "1. d4 d5 0-1", 1))
    summary = ingest_paths([f], db)
    assert summary.files[0].replaced_file_ids == [1] and summary.files[0].removed_games == 0
    assert db_rows(db, "SELECT result, count(*) FROM games GROUP BY 1 ORDER BY 1") == [("0-1", 1), ("1-0", 7)]
    assert "removed" not in summary.line()


@pytest.mark.parametrize(
    ("event", "date"),
    [("Club Leageu", "2022.05.07"), ("Club League", "2021.05.07")],
    ids=["event-name-mistyped", "year-mistyped"],
)
def test_a_corrected_event_name_or_date_with_the_same_games_replaces_it(tmp_path: Path, event: str, date: str) -> None:
    # the same games and either the same name or the same days: evidence enough
    f, db = tmp_path / "e.pgn", tmp_path / "s.duckdb"
    f.write_text(event_pgn(event, [1, 2], date, "Dublin IRL"))
    ingest_paths([f], db)
    f.write_text(event_pgn("Club League", [1, 2], "2022.05.07", "Dublin IRL"))
    summary = ingest_paths([f], db)
    assert summary.files[0].replaced_file_ids == [1]
    assert _games_by_event(db) == [("Club League", 8)]


def test_a_correction_that_removes_games_says_how_many(tmp_path: Path) -> None:
    # round 3 was put in by mistake: the correction keeps rounds 1-2 (8 of the 12 games)
    f, db = tmp_path / "e.pgn", tmp_path / "s.duckdb"
    f.write_text(event_pgn("Club League", [1, 2, 3], "2022.05.07", "Dublin IRL"))
    assert CliRunner().invoke(app, ["ingest", str(f), "--db", str(db)]).exit_code == 0
    f.write_text(event_pgn("Club League", [1, 2], "2022.05.07", "Dublin IRL"))
    res = CliRunner().invoke(app, ["ingest", str(f), "--db", str(db)])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "corrected:" in out and "4 games of the earlier version are not in it and were removed" in out
    assert "4 games removed by a correction" in out  # in the summary line
    assert db_rows(db, "SELECT round, count(*) FROM games GROUP BY 1 ORDER BY 1") == [(1, 4), (2, 4)]


def test_a_correction_of_a_real_trf_file_still_replaces_it(tmp_path: Path) -> None:
    f, db = tmp_path / "event.trf", tmp_path / "s.duckdb"
    shutil.copy(SHARED_DATA / "trf" / "irl_gonzaga_classic_2008_fide_ids.trf", f)
    ingest_paths([f], db)
    n = db_rows(db, "SELECT count(*) FROM games")[0][0]
    lines = f.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    # one player's name mistyped and fixed, and the tournament's name too
    fixed = [ln.replace("Gonzaga", "Gonzaga (corrected)") if ln.startswith("012") else ln for ln in lines]
    f.write_text("".join(fixed), encoding="utf-8")
    summary = ingest_paths([f], db)
    assert summary.files[0].replaced_file_ids == [1]
    assert db_rows(db, "SELECT count(*) FROM games")[0][0] == n


def test_the_ingest_flow_warns_of_removed_games_in_the_watch_log(
    tmp_path: Path, prefect_harness: str, caplog: pytest.LogCaptureFixture
) -> None:
    # `watch` shows the ingest stage's lines: the correction and its count are among them
    import flows.ingest_files as fi
    from flows.prefect_env import STAGE_LOGGER

    f, db = tmp_path / "league.pgn", tmp_path / "s.duckdb"
    f.write_text(event_pgn("Club League", [1, 2, 3], "2022.05.07", "Dublin IRL"))
    fi.ingest_files(IngestRequest((str(f),), str(db)))
    f.write_text(event_pgn("Club League", [1, 2], "2022.05.07", "Dublin IRL"))
    with caplog.at_level(logging.INFO, logger=STAGE_LOGGER):
        fi.ingest_files(IngestRequest((str(f),), str(db)))
    said = [r.getMessage() for r in caplog.records if r.name == STAGE_LOGGER]
    assert any("corrected" in s and "4 games of the earlier version" in s for s in said), said
    assert any("4 games removed by a correction" in s for s in said), said


def test_next_years_event_of_the_same_name_and_pairings_is_a_new_file(tmp_path: Path) -> None:
    # a club's yearly round-robin: club.trf, the same name, players and Berger pairings, a year
    # later and every result different. The pairings prove nothing: the 2023 event must stay
    f, db = tmp_path / "club.trf", tmp_path / "s.duckdb"
    f.write_text(round_robin("2023/05/01", "2023/05/05"))
    assert CliRunner().invoke(app, ["ingest", str(f), "--db", str(db)]).exit_code == 0
    f.write_text(round_robin("2024/05/01", "2024/05/05", result="="))
    res = CliRunner().invoke(app, ["ingest", str(f), "--db", str(db)])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "corrected" not in out
    assert (
        "club.trf: a new event under the name of a file already loaded"
        " (Club Championship 2023-05-01 stays; this one is of 2024-05-01)" in out
    ), out
    assert db_rows(db, "SELECT start_date::VARCHAR, count(*) FROM games JOIN tournaments USING (tournament_id)"
                       " GROUP BY 1 ORDER BY 1") == [("2023-05-01", 15), ("2024-05-01", 15)]  # fmt: skip
    assert db_rows(db, "SELECT status FROM source_files ORDER BY file_id") == [("loaded",), ("loaded",)]
    # and the year after: both earlier events stay
    f.write_text(round_robin("2025/05/02", "2025/05/06", result="0"))
    summary = ingest_paths([f], db)
    assert summary.files[0].kept_line() == (
        f"{f}: a new event under the name of a file already loaded (Club Championship 2023-05-01 stays;"
        " Club Championship 2024-05-01 stays; this one is of 2025-05-02)"
    )
    assert db_rows(db, "SELECT count(*) FROM games") == [(45,)]


def test_a_date_typo_with_a_result_fixed_too_is_a_new_file(tmp_path: Path) -> None:
    # other days and other results: nothing proves it is the same event; both kept, said
    f, db = tmp_path / "club.trf", tmp_path / "s.duckdb"
    f.write_text(round_robin("2023/04/01", "2023/04/05"))
    ingest_paths([f], db)
    text = round_robin("2023/05/01", "2023/05/05")
    f.write_text(
        text.replace(" 6 w 1     5 b 0", " 6 w =     5 b 0", 1).replace("1 b 0     4 b 0", "1 b =     4 b 0", 1)
    )
    summary = ingest_paths([f], db)
    assert summary.files[0].replaced_file_ids == []
    assert summary.files[0].kept_versions == ["Club Championship 2023-04-01 stays", "this one is of 2023-05-01"]
    assert db_rows(db, "SELECT count(*) FROM games") == [(30,)]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (("2023/04/01", "2023/04/05"), ("2023/05/01", "2023/05/05")),
        (("2023/05/03", "2023/05/07"), ("2023/05/01", "2023/05/05")),
    ],
    ids=["month-typo-same-games", "days-overlap"],
)
def test_a_date_typo_of_a_trf_fixed_is_a_correction(
    tmp_path: Path, before: tuple[str, str], after: tuple[str, str]
) -> None:
    # the same games with the same results on other days, or days in common: a correction
    f, db = tmp_path / "club.trf", tmp_path / "s.duckdb"
    f.write_text(round_robin(*before))
    ingest_paths([f], db)
    f.write_text(round_robin(*after))
    summary = ingest_paths([f], db)
    assert summary.files[0].replaced_file_ids == [1] and summary.files[0].kept_versions == []
    assert db_rows(db, "SELECT start_date::VARCHAR, count(*) FROM games JOIN tournaments USING (tournament_id)"
                       " GROUP BY 1") == [(after[0].replace("/", "-"), 15)]  # fmt: skip


def test_the_watch_log_says_a_new_event_under_a_known_name_is_kept(
    tmp_path: Path, prefect_harness: str, caplog: pytest.LogCaptureFixture
) -> None:
    # `watch` (club.trf dropped in the inbox each year) shows the ingest stage's lines
    import flows.ingest_files as fi
    from flows.prefect_env import STAGE_LOGGER

    f, db = tmp_path / "club.trf", tmp_path / "s.duckdb"
    f.write_text(round_robin("2023/05/01", "2023/05/05"))
    fi.ingest_files(IngestRequest((str(f),), str(db)))
    f.write_text(round_robin("2024/05/01", "2024/05/05", result="0"))
    with caplog.at_level(logging.INFO, logger=STAGE_LOGGER):
        fi.ingest_files(IngestRequest((str(f),), str(db)))
    said = [r.getMessage() for r in caplog.records if r.name == STAGE_LOGGER]
    assert any("a new event under the name of a file already loaded" in s and "2023-05-01 stays" in s for s in said)
    assert not any("corrected" in s for s in said), said
    assert db_rows(db, "SELECT count(*) FROM games") == [(30,)]
    # a correction that removes no game is said too: stored rows were replaced
    f.write_text(round_robin("2024/05/01", "2024/05/05", result="="))
    with caplog.at_level(logging.INFO, logger=STAGE_LOGGER):
        fi.ingest_files(IngestRequest((str(f),), str(db)))
    said = [r.getMessage() for r in caplog.records if r.name == STAGE_LOGGER]
    assert any("corrected:" in s and "replaces its earlier version" in s for s in said), said


# a real line of 50 plies (a Berlin), cut to the length a test needs
_LINE = (
    "e4 e5 Nf3 Nc6 Bb5 Nf6 O-O Nxe4 Re1 Nd6 Nxe5 Be7 Bf1 Nxe5 Rxe5 O-O d4 Bf6 Re1 Re8 c3 Rxe1 Qxe1 Ne8 Bf4"
    " d6 Nd2 Bf5 Qe3 Nf6 Nf3 h6 h3 Qd7 Bd3 Bxd3 Qxd3 Re8 Re1 Rxe1+ Nxe1 Qe6 Nf3 Qe4 Qxe4 Nxe4 Kf1 Kf8 Ke2 Ke7"
).split()


def _match_pgn(days: list[str], plies: int) -> str:
    """A match of three games between two players with FIDE IDs, colours alternating, on `days`,
    each game the first `plies` plies of `_LINE` (the same moves every game), drawn."""
    moves = " ".join(f"{i // 2 + 1}. {w}" if i % 2 == 0 else w for i, w in enumerate(_LINE[:plies]))
    games = []
    for r, day in enumerate(days, start=1):
        w, b = ("Carlsen, Magnus", "Wang, Hao") if r % 2 else ("Wang, Hao", "Carlsen, Magnus")
        wi, bi = (1503014, 8603820) if r % 2 else (8603820, 1503014)
        games.append(
            f'[Event "Carlsen Match 2022"]\n[Site "Stavanger NOR"]\n[Date "{day}"]\n[EventDate "{days[0]}"]\n'
            f'[Round "{r}"]\n[White "{w}"]\n[Black "{b}"]\n[Result "1/2-1/2"]\n[WhiteFideId "{wi}"]\n'
            f'[BlackFideId "{bi}"]\n\n{moves} 1/2-1/2\n'
        )
    return "\n".join(games)


@pytest.mark.parametrize(("plies", "corrects"), [(50, True), (30, False)], ids=["long-moves", "short-moves"])
def test_fewer_games_than_moved_min_with_dates_moved_correct_only_with_the_same_long_moves(
    tmp_path: Path, plies: int, corrects: bool
) -> None:
    # three games, the same moves, results and pairings, every date moved two months: identical
    # move records of 50 plies are the same games (a date typo fixed); three short draws repeated
    # can be the next match of the same players (fewer than MOVED_MIN_GAMES games: both kept)
    f, db = tmp_path / "ev.pgn", tmp_path / "s.duckdb"
    f.write_text(_match_pgn(["2022.05.31", "2022.06.01", "2022.06.02"], plies))
    ingest_paths([f], db)
    f.write_text(_match_pgn(["2022.07.31", "2022.08.01", "2022.08.02"], plies))
    summary = ingest_paths([f], db)
    assert summary.files[0].replaced_file_ids == ([1] if corrects else [])
    expected = [("2022-07-31", 3)] if corrects else [("2022-05-31", 3), ("2022-07-31", 3)]
    assert db_rows(db, "SELECT start_date::VARCHAR, count(*) FROM games JOIN tournaments USING (tournament_id)"
                       " GROUP BY 1 ORDER BY 1") == expected  # fmt: skip


def _counted_sides(db: Path) -> int:
    return db_rows(db, "SELECT count(*) FROM v_change_explained WHERE counted")[0][0]


@pytest.mark.parametrize("compressed", [False, True])
def test_a_copy_cut_short_never_replaces_the_complete_version(tmp_path: Path, compressed: bool) -> None:
    """A download or copy that stopped, at the path of the complete version: the same event and most
    of its games, so it passed for a correction and deleted the games it lacked (181 -> 133). Both
    are kept now, the games they share counted once, and the line says it is a copy cut short.
    A .gz cut short (status 'partial') likewise."""
    whole = (REPO / "sample_pgn" / "wjun19.pgn").read_bytes()
    f = tmp_path / ("j.pgn.gz" if compressed else "j.pgn")
    db, ref_db = tmp_path / "s.duckdb", tmp_path / "ref.duckdb"
    f.write_bytes(gzip.compress(whole) if compressed else whole)
    ingest_paths([f], db)
    ingest_paths([f], ref_db)  # the complete version alone: what must be counted
    f.write_bytes(gzip.compress(whole)[:30_000] if compressed else whole[:120_000])
    summary = ingest_paths([f], db)
    res = summary.files[0]
    assert res.replaced_file_ids == [] and res.removed_games == 0
    assert res.cut_short and "a copy cut short under the name of a file already loaded" in (res.kept_line() or "")
    assert db_rows(db, "SELECT status FROM source_files ORDER BY file_id") == [
        ("loaded",),
        ("partial" if compressed else "loaded",),
    ]
    for store in (db, ref_db):
        assert CliRunner().invoke(app, ["rate", "--system", "fide", "--db", str(store)]).exit_code == 0
    assert _counted_sides(db) == _counted_sides(ref_db) == 2 * 181


@pytest.mark.parametrize("cut", ["in_first_tag", "bare_half", "trf_mid_line"])
def test_a_copy_cut_anywhere_never_replaces_the_complete_version(tmp_path: Path, cut: str) -> None:
    """Cut in the last game's first tags (its game has no result at all), right after "1/2" (no
    whole marker), or a TRF in the middle of a line: each passed for a correction and deleted the
    games it lacked (hostile tester, round 2). A file that does not end where a finished one ends
    is a copy cut short (`read.unfinished`, as `watch` judges a file still arriving)."""
    if cut == "trf_mid_line":
        whole = (SHARED_DATA / "trf" / "ger_karl_mala_gedenkturnier_2005_fide_example1_284players.trf").read_bytes()
        f, part = tmp_path / "x.trf", whole[:35_000]
    else:
        whole = (REPO / "sample_pgn" / "wjun19.pgn").read_bytes()
        f = tmp_path / "x.pgn"
        at = whole.index(b"[Event ", 90_000) + 15 if cut == "in_first_tag" else whole.index(b" 1/2-1/2", 90_000) + 4
        part = whole[:at]
    db = tmp_path / "s.duckdb"
    f.write_bytes(whole)
    ingest_paths([f], db)
    before = db_rows(db, "SELECT count(*) FROM games")
    f.write_bytes(part)
    res = ingest_paths([f], db).files[0]
    assert res.cut_short and res.replaced_file_ids == [] and res.removed_games == 0
    assert db_rows(db, "SELECT count(*) FROM games WHERE file_id = 1") == before


def test_a_longer_version_cut_short_still_replaces_a_shorter_one(tmp_path: Path) -> None:
    """A file still growing (a live event's export) whose last game is cut holds every game of
    the earlier version: a correction, as before."""
    whole = (REPO / "sample_pgn" / "wjun19.pgn").read_bytes()
    f, db = tmp_path / "j.pgn", tmp_path / "s.duckdb"
    cut = whole.index(b"[Event ", 60_000)
    f.write_bytes(whole[:cut])
    ingest_paths([f], db)
    f.write_bytes(whole[:120_000])
    res = ingest_paths([f], db).files[0]
    assert res.cut_short and res.replaced_file_ids == [1] and res.removed_games == 0
