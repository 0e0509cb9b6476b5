"""Tournament reports: every participant, the header, the legend, and what is said when nothing
was rated (the hand-made store of `tests.helpers.publish_store`, plus a few rows per test)."""

from __future__ import annotations

import datetime as dt
import json
import re
from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish.legend import legend, report_legend
from elopipe.publish.participants import ru_note
from elopipe.publish.report_header import report_header
from elopipe.publish.report_tables import rich_table
from elopipe.publish.reports import (
    NothingToReport,
    nothing_rated_reason,
    performance_frame,
    write_report,
)
from tests.helpers.publish_store import FEB, build_store
from tests.helpers.store_build import add_rows


def _store(tmp_path: Path) -> Path:
    """The publish store plus Echo (player 5) entered as SNo 5 of the Spring Open: a forfeit loss
    in round 1, zero-point byes in rounds 2 and 3 and a
    pairing-allocated bye in round 4; the header records a federation, arbiters and a time control."""
    db = build_store(tmp_path / "s.duckdb")
    con = duckdb.connect(str(db))
    try:
        add_rows(
            con,
            tournament_players=[{"tournament_id": 1, "player_id": 5, "start_rank": 5, "name_as_written": "Echo, Emil",
                                 "federation": "FRA", "title": "FM", "rating_in_file": 1420, "file_id": 1, "line": 9}],
            unplayed_rounds=[{"tournament_id": 1, "player_id": 5, "round": r, "code": c, "score": sc, "file_id": 1,
                              "line": 9} for r, c, sc in [(1, "-", 0), (2, "Z", 0), (3, "Z", 0), (4, "U", 1)]],
        )  # fmt: skip
        extra = json.dumps({"headers": {"112": ["Deputy One", "Deputy Two"]}})
        con.execute(
            "UPDATE tournaments SET federation = 'IRL', chief_arbiter = 'IA Chief Arbiter',"
            " time_control = '90 minutes + 30 seconds per move', rate_class = 'standard', extra = ?"
            " WHERE tournament_id = 1",
            [extra],
        )
    finally:
        con.close()
    return db


@pytest.fixture
def con(tmp_path: Path):
    c = duckdb.connect(str(_store(tmp_path)), read_only=True)
    yield c
    c.close()


def test_every_participant_has_a_row_with_the_reason_for_no_rated_game(con) -> None:
    perf = performance_frame(con, 1, "fide")
    assert perf["start_rank"].to_list() == [1, 2, 3, 4, 5]
    echo = perf.filter(pl.col("player_id") == 5).row(0, named=True)
    assert (echo["n"], echo["ro"], echo["list_date"], echo["federation"], echo["title"]) == (0, None, None, "FRA", "FM")
    assert echo["no_rating_reason"] == (
        "no rated game: 1 forfeit, 1 pairing-allocated bye (PAB, U), 2 zero-point byes (Z)"
    )
    assert echo["note"] == echo["no_rating_reason"]
    # the rated players have no such reason; the unrated Delta shows Ru and the games pooled
    assert perf.filter(pl.col("player_id") != 5)["no_rating_reason"].null_count() == 4
    assert perf.filter(pl.col("player_id") == 4)["note"].to_list() == ["Ru 1615 so far, 2 games pooled"]
    assert rich_table(perf, "t").row_count == 5


def test_the_report_files_carry_the_participant_and_the_header(con, tmp_path: Path) -> None:
    paths = write_report(con, 1, "fide", tmp_path)
    players = pl.read_csv(paths[0], infer_schema_length=None)
    assert players.filter(pl.col("start_rank") == 5)["no_rating_reason"].to_list() == [
        "no rated game: 1 forfeit, 1 pairing-allocated bye (PAB, U), 2 zero-point byes (Z)"
    ]
    html = paths[-1].read_text(encoding="utf-8")
    for text in (
        "<dt>Federation</dt><dd>IRL</dd>",
        "<dt>Chief arbiter</dt><dd>IA Chief Arbiter</dd>",
        "<dt>Deputy arbiter</dt><dd>Deputy One, Deputy Two</dd>",
        "<dt>Rounds</dt><dd>3</dd>",
        "<dt>Dates</dt><dd>2024-01-10 – 2024-01-12</dd>",
        "<dt>Time control</dt><dd>90 minutes + 30 seconds per move</dd>",
        "2 zero-point byes (Z)",
        'id="legend"',
    ):
        assert text in html, text


def test_report_legend_explains_the_crosstable_and_game_columns(con, tmp_path: Path) -> None:
    html = write_report(con, 1, "fide", tmp_path)[-1].read_text(encoding="utf-8")
    terms = set(re.findall(r"<dt>([^<]*)</dt>", html.split('id="legend"', 1)[1]))
    cross = re.findall(r"<th[^>]*>([^<]*)</th>", html.split('id="crosstable"', 1)[1].split("</thead>", 1)[0])
    assert cross == ["SNo", "Name", "Rtg", "Ro", "1", "2", "3", "4", "Pts", "Rank"]
    assert {"SNo", "Rtg", "1, 2, …", "Pts", "Rank"} <= terms
    games = re.findall(r"<th[^>]*>([^<]*)</th>", html.split('class="games"', 1)[1].split("</thead>", 1)[0])
    assert {"Rc", "D used", "PD", "W−PD"} <= set(games) & terms
    assert "e.g. 12w1" in html and "Z zero-point bye" in html
    # an FFE report explains the same crosstable
    assert {"Rtg", "1, 2, …", "Pts", "Rank"} <= {t for t, _ in report_legend("ffe")}


def test_no_legend_is_for_the_terminal_only() -> None:
    res = CliRunner().invoke(app, ["report", "--help"])
    text = " ".join(re.sub("[│╭╮╰╯─]", " ", res.output).split())  # the help's box, wrapped at 80 columns
    assert "after the table in the terminal (the HTML report always has its legend)" in text


def test_report_header_of_a_pgn_event_takes_the_games_time_control(tmp_path: Path) -> None:
    db = build_store(tmp_path / "s.duckdb")
    rw = duckdb.connect(str(db))
    rw.execute("UPDATE tournaments SET source_format = 'pgn', rounds = NULL, start_date = NULL, end_date = NULL")
    rw.execute("UPDATE tournaments SET first_day = DATE '2024-01-10', last_day = DATE '2024-01-10'")
    rw.execute("UPDATE games SET time_control = CASE WHEN game_id = 1 THEN '40/7200:1800' ELSE '5400+30' END")
    rw.close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        header = report_header(con, 1)
    finally:
        con.close()
    assert header["time_control"] == "5400+30"  # the most games carry it
    assert header["rounds"] == "3"  # the highest round of its games
    assert header["dates"] == "2024-01-10"  # one day: one date
    assert "federation" not in header and "chief_arbiter" not in header  # never a placeholder


@pytest.mark.parametrize(
    ("city", "federation", "shown"),
    [
        ("Madrid ESP", "ESP", ("Madrid", "ESP")),  # PGN Site: the federation is not said twice
        ("Frankfurt (Main) /GER", None, ("Frankfurt (Main)", "GER")),  # TRF 022 carrying it, no 032
        ("Riga LAT", None, ("Riga", "LAT")),
        ("Lyon FRA", "SUI", ("Lyon FRA", "SUI")),  # another federation: the city as written
        ("Green Isle Hotel, Dublin", "IRL", ("Green Isle Hotel, Dublin", "IRL")),
        ("Cork", "IRL", ("Cork", "IRL")),
    ],
)
def test_report_header_city_never_glues_the_federation(
    tmp_path: Path, city: str, federation: str | None, shown: tuple[str, str]
) -> None:
    db = build_store(tmp_path / "s.duckdb")
    rw = duckdb.connect(str(db))
    rw.execute("UPDATE tournaments SET city = ?, federation = ?", [city, federation])
    rw.close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        header = report_header(con, 1)
    finally:
        con.close()
    assert (header["city"], header["federation"]) == shown


def test_a_game_the_rating_left_out_is_named_by_its_reason(tmp_path: Path) -> None:
    db = _store(tmp_path)
    rw = duckdb.connect(str(db))
    # FFE: Echo's round-1 game was played after all, and left out as incompatible (spec A.3)
    rw.execute("DELETE FROM unplayed_rounds WHERE player_id = 5 AND round = 1")
    add_rows(
        rw,
        games=[{"game_id": 40, "tournament_id": 1, "file_id": 1, "round": 1, "white_id": 5, "black_id": 6,
                "result": "0-1", "white_score": 0, "black_score": 1, "played": True}],
        rating_changes=[{"system": "ffe", "list_date": FEB, "tournament_id": 1, "game_id": 40, "player_id": 5,
                         "opponent_id": 6, "ro": 1420, "rc": 1800, "score": 0, "counted": False,
                         "reason": "incompatible"}],
        tournament_ratings=[{"system": "ffe", "list_date": FEB, "tournament_id": 1, "player_id": 1, "n": 1,
                             "score": 0.5}],
    )  # fmt: skip
    rw.close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        perf = performance_frame(con, 1, "ffe")
    finally:
        con.close()
    assert perf.filter(pl.col("player_id") == 5)["no_rating_reason"].to_list() == [
        "no rated game: 1 pairing-allocated bye (PAB, U), 2 zero-point byes (Z),"
        " 1 incompatible game (FFE: an expected result too far apart)"
    ]


def test_ru_note_says_why_an_unrated_player_has_no_ru() -> None:
    rows = pl.DataFrame(
        {
            "unrated": [True, True, True, False, None, True, True],
            "score": [Decimal("0"), Decimal("2"), Decimal("1"), Decimal("1"), None, Decimal("3"), Decimal("3.5")],
            "pooled_games": [None, 5, 3, None, None, 5, 6],
            "ru_provisional": [None, None, 1450, None, None, None, 1435],
            # the last: the list of the event published his Ru (San Viator 2018, Llanas Del Hoyo)
            "first_rating": [None, None, None, None, None, None, 1435],
            "list_date": [dt.date(2018, 7, 1)] * 7,
            "no_rating_reason": [None, None, None, None, "no rated game: 2 forfeits", None, None],
            # a 2011 event: no initial rating is computed under the rules before July 2014
            "rules_version": ["V2017", "V2024", "V2017", "V2017", None, "V2011", "V2017"],
        }
    )
    assert rows.select(ru_note().alias("note"))["note"].to_list() == [
        "0 points in a first event: disregarded (B.02 8.2.1), nothing pooled",
        "5 games pooled, no Ru yet (too few games, or Ru below the floor)",
        "Ru 1450 so far, 3 games pooled",
        None,
        "no rated game: 2 forfeits",
        "5 games pooled; no initial rating is computed under the rules before July 2014 (they cannot be confirmed)",
        "first rating 1435, published on the 2018-07-01 list (6 games pooled)",
    ]


def test_legends_explain_every_column_of_each_system() -> None:
    fide = dict(legend("fide"))
    for term in ("Ro", "N", "W", "Ra", "We", "W−We", "K", "K×(W−We)", "Rp", "Rc", "D used", "PD", "W−PD"):
        assert term in fide, term
    assert "8.1.2" in fide["PD"] and "400" in fide["D used"] and "8.3.3" in fide["K"]
    # the K of every era, and the list's change rounded once for the period (B.02 8.3.4)
    assert "25, 15 or 10 until June 2011" in fide["K"] and "8.3.4" in fide["Change"]
    ffe = dict(legend("ffe"))
    for term in ("X", "p", "Z", "P", "src", "N inc.", "method"):
        assert term in ffe, term
    assert "F the FIDE rating written in the file" in ffe["src"] and "never a rating" in ffe["src"]
    # a reader has the FFE's rules, not elopipe's research note: no "spec A.4" shorthand in the legend
    for system in ("ffe", "ffe-rapid"):
        assert not [term for term, words in legend(system) if "spec " in words], system
    assert "up_brake" in ffe["method"] and "B = 8 (young) or 16 (adult)" in ffe["method"]
    assert "350" in ffe["N inc."] and "±470" in ffe["Z"] and "1000" in ffe["P"]
    rapid = dict(legend("ffe-rapid"))  # E02: its own thresholds
    assert "320" in rapid["N inc."] and "800" in rapid["P"]


def test_ffe_report_html_has_the_ffe_legend(tmp_path: Path) -> None:
    rw = duckdb.connect(str(_store(tmp_path)))
    add_rows(
        rw,
        tournament_ratings=[{"system": "ffe", "list_date": FEB, "tournament_id": 1, "player_id": 1, "n": 1,
                             "score": 0.5}],
        ffe_details=[{"system": "ffe", "list_date": FEB, "player_id": 1, "r_old": 2100, "n_compatible": 1,
                      "n_incompatible": 0, "x": 1500, "p": 0.5, "z": 0, "perf": 1500, "young": False,
                      "method": "down", "r_new": 2050, "r_source": "F"}],
        rating_lists=[{"system": "ffe", "list_date": FEB, "player_id": 1, "rating": 2050, "games": 1,
                       "source": "computed"}],
    )  # fmt: skip
    try:
        html = write_report(rw, 1, "ffe", tmp_path / "o")[-1].read_text(encoding="utf-8")
    finally:
        rw.close()
    assert "<dt>method</dt>" in html and "up_brake: P &gt; R with fewer games" in html
    assert "<dt>N inc.</dt>" in html and "<dt>src</dt>" in html and "Legend: FFE" in html


def test_nothing_rated_says_what_is_true_and_writes_nothing(tmp_path: Path) -> None:
    db = _store(tmp_path)
    rw = duckdb.connect(str(db))
    # tournament 2: two players without a rating, rated by a run that rated nothing for them
    day1, day2 = dt.date(2024, 1, 5), dt.date(2024, 1, 6)
    add_rows(
        rw,
        tournaments=[{"tournament_id": 2, "file_id": 1, "source_format": "trf", "name": "Winter Cup",
                      "start_date": day1, "end_date": day2, "first_day": day1, "last_day": day2, "rounds": 1}],
        tournament_players=[{"tournament_id": 2, "player_id": 6, "start_rank": 1, "name_as_written": "Foxtrot, Fay",
                             "file_id": 1},
                            {"tournament_id": 2, "player_id": 7, "start_rank": 2, "name_as_written": "Golf, Gus",
                             "file_id": 1}],
        games=[{"game_id": 20, "tournament_id": 2, "file_id": 1, "round": 1, "white_id": 6, "black_id": 7,
                "result": "1-0", "white_score": 1, "black_score": 0, "played": True}],
        rating_skips=[{"system": "fide-rapid", "tournament_id": 1, "reason": "rate_class:standard", "n_games": 6}],
        rating_lists=[{"system": "fide-rapid", "list_date": FEB, "player_id": 1, "rating": 2000, "games": 0,
                       "source": "computed"}],
    )  # fmt: skip
    rw.close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        why = nothing_rated_reason(con, 2, "fide")
        assert why is not None and why.participants
        assert (
            why.text == "Winter Cup: rated under 'fide', but none of its 2 players had a rated game: nothing to report"
        )
        never = nothing_rated_reason(con, 1, "ffe")
        assert (
            never is not None
            and never.text == "nothing is rated under 'ffe' yet: run `elopipe rate --system ffe` first"
        )
        skipped = nothing_rated_reason(con, 1, "fide-rapid")
        assert skipped is not None
        assert (
            skipped.text == "Spring Open 2024: not rated under 'fide-rapid': a standard event, not rated in this system"
        )
        assert nothing_rated_reason(con, 1, "fide") is None
        with pytest.raises(NothingToReport, match="nothing to report"):
            write_report(con, 2, "fide", tmp_path / "none")
        assert not (tmp_path / "none").exists()
    finally:
        con.close()

    runner = CliRunner()
    out = tmp_path / "o"
    res = runner.invoke(app, ["report", "-t", "Winter Cup", "--db", str(db), "--out", str(out)])
    assert res.exit_code == 1, res.output
    flat = " ".join(res.output.split())
    assert "none of its 2 players had a rated game: nothing to report; no report written" in flat
    assert "Foxtrot, Fay" in res.output and "Traceback" not in res.output  # the participants, with reasons
    assert "run `elopipe rate` first?" not in res.output
    res = runner.invoke(app, ["report", "-t", "Spring", "--system", "ffe", "--db", str(db), "--out", str(out)])
    assert res.exit_code == 1 and f"run `elopipe rate --system ffe --db {db}` first" in " ".join(res.output.split())
    res = runner.invoke(app, ["report", "--all", "--system", "ffe", "--db", str(db), "--out", str(out)])
    assert res.exit_code == 1 and "nothing is rated under 'ffe'" in " ".join(res.output.split())
    assert not out.exists()  # no empty file, no empty folder


@pytest.mark.parametrize("command", [["report", "-t", "Spring"], ["player", "Charlie"]])
@pytest.mark.parametrize("system", ["bogus", "bogus@v2017"])
def test_an_unknown_system_is_refused_with_the_list_of_systems(tmp_path: Path, command: list[str], system: str) -> None:
    db = build_store(tmp_path / "s.duckdb")
    res = CliRunner().invoke(app, [*command, "--system", system, "--db", str(db), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    line = " ".join(res.output.split())
    assert line == (
        f"elopipe {command[0]}: error: unknown rating system '{system}':"
        " use one of elo, ffe, ffe-rapid, fide, fide-blitz, fide-rapid, glicko2"
    )
    assert not (tmp_path / "o").exists()


def test_report_command_prints_header_and_legend(tmp_path: Path) -> None:
    db = _store(tmp_path)
    runner = CliRunner()
    res = runner.invoke(app, ["report", "-t", "Spring", "--db", str(db), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())
    assert "Federation: IRL" in flat and "Chief arbiter: IA Chief Arbiter" in flat and "Rounds: 3" in flat
    assert "PD: per game: expected score for D used, from table 8.1.2" in flat
    assert "1 pairing-allocated bye (PAB, U)" in flat
    res = runner.invoke(app, ["report", "-t", "Spring", "--no-legend", "--db", str(db), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0 and "table 8.1.2" not in res.output


def test_report_pages_print_cleanly(con, tmp_path: Path) -> None:
    html = write_report(con, 1, "fide", tmp_path)[-1].read_text(encoding="utf-8")
    css = html.split("@media print", 1)[1].split("</style>", 1)[0]
    assert "input, button, select, .pager, .no-print" in css and "display: none" in css  # no search, no pager
    assert "thead { display: table-header-group; }" in css  # the column heads on every page
    assert "position: static" in css  # sticky heads would sit over the rows on paper
    assert 'class="search no-print"' in html


def test_a_store_of_unrated_players_rated_once_is_no_store_never_rated(tmp_path: Path) -> None:
    """A real event of unrated players only (Bunratty Minor 2011): `rate` ran and said why no game
    counted, but no list holds anyone, and `report` said to run `rate` first. It now says that the
    event was rated and none of its players had a rated game."""
    from elopipe.ingest.driver import ingest_paths
    from elopipe.rating.run import rate
    from elopipe.store.connect import open_writer
    from tests.helpers.paths import SHARED_DATA

    minor = SHARED_DATA / "trf" / "irl_bunratty_minor_2011_crlf_103players.trf"
    if not minor.exists():
        pytest.skip("../shared/data is not available")
    db = tmp_path / "minor.duckdb"
    ingest_paths([minor], db)
    with open_writer(db) as con:
        assert rate(con, "fide").not_counted == {"both_unrated": 596}
    con = duckdb.connect(str(db), read_only=True)
    try:
        tid = con.execute("SELECT min(tournament_id) FROM tournaments").fetchone()[0]
        why = nothing_rated_reason(con, tid, "fide")
    finally:
        con.close()
    assert why == (
        "Bunratty 2011: rated under 'fide', but none of its 103 players had a rated game: nothing to report",
        True,
    )
