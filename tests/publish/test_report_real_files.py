"""Reports of the real sample files (`sample_pgn/`): every participant of San Viator 2018, the
header each TRF gives, and an event the rating left out."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish.report_header import report_header
from elopipe.publish.reports import find_tournament, nothing_rated_reason, performance_frame
from tests.helpers.paths import SAMPLE_PGN

FILES = [
    "esp_torneo_san_viator_2018_vega_137players.trf",
    "irl_irish_intermediate_champs_2011_latin1_crlf.trf",
    "ger_karl_mala_gedenkturnier_2005_fide_example1_284players.trf",
    "wchcand22.pgn",
]


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory):
    from elopipe.ingest.driver import ingest_paths

    db = tmp_path_factory.mktemp("real") / "real.duckdb"
    ingest_paths([SAMPLE_PGN / f for f in FILES], db)
    res = CliRunner().invoke(app, ["rate", "--system", "fide", "--db", str(db)])
    assert res.exit_code == 0, res.output
    c = duckdb.connect(str(db), read_only=True)
    yield c
    c.close()


def test_san_viator_sno_68_has_a_row_saying_why(con) -> None:
    tid = find_tournament(con, "San Viator")
    perf = performance_frame(con, tid, "fide")
    assert perf.height == 137  # every participant, 136 of them with rated games
    assert perf["no_rating_reason"].null_count() == 136
    row = perf.filter(pl.col("start_rank") == 68).row(0, named=True)
    assert row["name"] == "Munoz Lopez, Mauricio"
    assert row["no_rating_reason"] == "no rated game: 1 forfeit, 6 zero-point byes (Z)"
    # unrated players who scored 0 in this first event: said in words, no '?' and no '–'
    zero = perf.filter(pl.col("unrated") & (pl.col("score") == 0))
    assert zero.height > 0
    assert set(zero["note"]) == {"0 points in a first event: disregarded (B.02 8.2.1), nothing pooled"}


def test_irish_intermediate_player_with_byes_and_an_unrated_game(con) -> None:
    tid = find_tournament(con, "Irish Championship Intermediate")
    perf = performance_frame(con, tid, "fide")
    row = perf.filter(pl.col("start_rank") == 19).row(0, named=True)
    # the rating's own reason for the one game played (rating_changes: 'unrated_opponent')
    assert row["no_rating_reason"] == "no rated game: 4 zero-point byes (Z), 1 game against an unrated opponent"


def test_headers_of_the_real_files(con) -> None:
    sv = report_header(con, find_tournament(con, "San Viator"))
    assert (sv["federation"], sv["city"], sv["rounds"]) == ("ESP", "Madrid", "7")
    assert sv["dates"] == "2018-04-08 – 2018-06-10"
    assert sv["time_control"] == "90 minutes + 30 seconds per move"
    assert sv["chief_arbiter"] == "Francisco Javier Sanz Morinigo - AN 2216434"
    km = report_header(con, find_tournament(con, "Karl-Mala"))
    assert km["deputy_arbiter"] == "NSR Thomas Rondio, NSR Wolfgang Hettler"  # TRF 112, given twice
    assert km["time_control"] == "40/120, 60" and km["dates"] == "2005-07-28 – 2005-07-31"
    # TRF 022 'Frankfurt (Main) /GER' and no 032: the city, and its code as the federation
    assert (km["city"], km["federation"]) == ("Frankfurt (Main)", "GER")
    cand = report_header(con, find_tournament(con, "Candidates 2022"))
    assert (cand["federation"], cand["rounds"], cand["dates"]) == ("ESP", "14", "2022-06-17 – 2022-07-04")
    assert cand["city"] == "Madrid"  # Site 'Madrid ESP': the federation is not glued to the city


def test_an_event_left_out_says_why(con, tmp_path: Path) -> None:
    tid = find_tournament(con, "Karl-Mala")
    why = nothing_rated_reason(con, tid, "fide")
    assert why is not None and not why.participants
    assert (
        why.text == "9. Karl-Mala-Gedenkturnier: not rated under 'fide': the event is older than the first list rated"
    )


def test_change_explained_gives_every_entry_of_a_player_with_no_rated_game(con) -> None:
    """A player whose entries are all unplayed has no tournament_ratings row; the view still
    explains each of them, with its reason and no change (B.02: unplayed games are not rated)."""
    rows = con.execute(
        "SELECT round, kind, reason, unplayed_code, counted, k_w_minus_pd FROM v_change_explained"
        " WHERE player = 'Munoz Lopez, Mauricio' AND system = 'fide' ORDER BY round"
    ).fetchall()
    assert rows == [
        (1, "game", "forfeit", None, False, None),
        *[(r, "unplayed", "bye", "Z", False, None) for r in range(2, 8)],
    ]
    # one game against an unrated opponent and four zero-point byes (SNo 19, as the report says)
    rows = con.execute(
        "SELECT round, kind, reason, unplayed_code FROM v_change_explained"
        " WHERE player = 'Delaney, Rory' AND system = 'fide' ORDER BY round"
    ).fetchall()
    assert rows == [
        (1, "unplayed", "bye", "Z"),
        (2, "game", "unrated_opponent", None),
        (3, "unplayed", "bye", "Z"),
        (4, "unplayed", "bye", "Z"),
        (5, "unplayed", "bye", "Z"),
    ]
