"""Player pages: months without games, the 1 March 2024 adjustment, tournament markers, players
never offered, and an event named once (the store of `tests.helpers.publish_store`, extended)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish.charts import ChartEvent, ChartStep, Series, render_series, series_figure
from elopipe.publish.history import chart_marks, find_player, history_frame, tournaments_frame, write_player_page
from tests.helpers.publish_store import FEB, JAN, build_store
from tests.helpers.store_build import add_rows

MAR, APR = dt.date(2024, 3, 1), dt.date(2024, 4, 1)


def _store(tmp_path: Path) -> Path:
    """The publish store plus: Charlie (3) on the lists of March (the 1 March 2024 adjustment
    added 178 to 1554) and April, both without games; Alpha (1, 2096) on March with 'adj2024:+0';
    a ghost 'Golf,G' (8) merged into Golf, Gus (7) and a 'Ghostly, Gil' (9) with no entry at all;
    tournament 2, a duplicate export of the Spring Open holding Charlie's games again."""
    db = build_store(tmp_path / "s.duckdb")
    con = duckdb.connect(str(db))
    try:
        add_rows(
            con,
            rating_lists=[
                {"system": "fide", "list_date": d, "player_id": pid, "rating": r, "games": 0, "total_games": tg,
                 "k": k, "change": 0, "flags": flags, "source": "computed"}
                for d, pid, r, tg, k, flags in [(MAR, 3, 1732, 14, 40, "i,adj2024:+178"), (APR, 3, 1732, 14, 40, "i"),
                                                (MAR, 1, 2096, 42, 20, "adj2024:+0")]
            ],
            players=[{"player_id": 8, "name": "Golf,G", "name_key": "golf g", "merged_into": 7},
                     {"player_id": 9, "name": "Ghostly, Gil", "name_key": "ghostly gil", "merged_into": None}],
            tournaments=[{"tournament_id": 2, "file_id": 1, "source_format": "pgn", "name": "Spring Open 2024",
                          "start_date": dt.date(2024, 1, 10), "end_date": dt.date(2024, 1, 12)}],
            tournament_players=[{"tournament_id": 2, "player_id": 3, "name_as_written": "Charlie, Chloe",
                                 "file_id": 1}],
            games=[{"game_id": 30, "tournament_id": 2, "file_id": 1, "round": 2, "white_id": 3, "black_id": 1,
                    "result": "1/2-1/2", "white_score": 0.5, "black_score": 0.5, "played": True}],
            game_sources=[{"game_id": 3, "source_game_id": 30, "file_id": 1, "match_rule": "round_players",
                           "role": "duplicate"}],
        )  # fmt: skip
    finally:
        con.close()
    return db


@pytest.fixture
def con(tmp_path: Path):
    c = duckdb.connect(str(_store(tmp_path)), read_only=True)
    yield c
    c.close()


def test_history_skips_months_without_games_unless_all_months(con) -> None:
    h = history_frame(con, 3, "fide")
    assert list(zip(h["list_date"], h["kind"], h["rating"], h["change"], strict=True)) == [
        (JAN, "period", 1500, 0),  # the first list is always shown
        (FEB, "period", 1554, 54),
        (MAR, "adjustment", 1732, 178),  # the month had no game; the adjustment has a row of its own
    ]
    full = history_frame(con, 3, "fide", all_months=True)
    assert list(zip(full["list_date"], full["kind"], full["rating"], full["flags"], strict=True)) == [
        (JAN, "period", 1500, None),
        (FEB, "period", 1554, None),
        (MAR, "period", 1554, "i"),  # before the adjustment; no 'adj2024' flag left
        (MAR, "adjustment", 1732, None),
        (APR, "period", 1732, "i"),
    ]


def test_a_zero_adjustment_is_no_row_and_no_flag(con) -> None:
    h = history_frame(con, 1, "fide", all_months=True)
    assert h["kind"].to_list() == ["period"] * 3
    assert h.filter(h["list_date"] == MAR)["flags"].to_list() == [None]


def test_chart_marks_each_rated_tournament_at_its_ro(con) -> None:
    assert chart_marks(con, 3, "fide") == [
        ChartEvent(
            dt.date(2024, 1, 12),
            1500,
            "Spring Open 2024 (2024-01-10 – 2024-01-12): Ro 1500, change +54, 2 games, W 1.5",
        )
    ]
    # the unrated Delta is marked at the Ru reached so far
    assert [(m.rating, m.title.split(": ")[1]) for m in chart_marks(con, 4, "fide")] == [
        (1615, "unrated, Ru 1615 so far, 2 games, W 0.5")
    ]


def test_chart_marks_leave_out_the_parts_a_system_does_not_give(tmp_path: Path) -> None:
    """An FFE-like system rates a period, not each event: no change per event, so the title has
    no empty part (was 'Spring Open 2024 (...): , 2 games, W 1.5')."""
    db = _store(tmp_path)
    rw = duckdb.connect(str(db))
    try:
        rw.execute(
            "INSERT INTO tournament_ratings SELECT * REPLACE ('ffe' AS system, NULL AS change_x100)"
            " FROM tournament_ratings WHERE system = 'fide' AND player_id = 3"
        )
        (title,) = [m.title for m in chart_marks(rw, 3, "ffe")]
    finally:
        rw.close()
    assert title == "Spring Open 2024 (2024-01-10 – 2024-01-12): Ro 1500, 2 games, W 1.5"


def test_chart_svg_titles_markers_and_the_adjustment_step() -> None:
    events = [ChartEvent(dt.date(2024, 1, 12), 1500, "Spring <Open> 2024: Ro 1500")]
    steps = [ChartStep(MAR, 1554, 1732, "1 Mar 2024 adjustment +178")]
    line = Series([JAN, FEB, MAR, MAR, APR], [1500, 1554, 1554, 1732, 1732], events, steps)
    chart = render_series([line], "x", "svg")
    svg = chart.data.decode("utf-8")
    assert re.search(r'<g id="event-0">\s*<title>Spring &lt;Open&gt; 2024: Ro 1500</title>', svg)
    assert re.search(r'<g id="step-0">\s*<title>1 Mar 2024 adjustment \+178</title>', svg)
    assert "adjustment +178" in svg.split("<title>1 Mar", 1)[1]  # and written on the chart
    (spot,) = chart.hotspots
    assert spot.title == "Spring <Open> 2024: Ro 1500"
    assert 10 < spot.left < 50 and 50 < spot.top < 90  # early in the window, low on the axis
    png = render_series([Series([JAN, FEB], [1500, 1554], events)], "x", "png").data
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_player_on_a_single_list_has_a_dot_where_the_line_would_be() -> None:
    """A step line through one list has no length: the SVG draws that list's rating as a dot
    (Rapport on the Candidates' one list showed only the event's marker)."""
    events = [ChartEvent(dt.date(2022, 7, 4), 2764, "Candidates 2022: Ro 2764")]
    svg = render_series([Series([FEB], [2751], events)], "x", "svg").data.decode("utf-8")
    series = svg.split('<g id="series-0">', 1)[1].split("</g>", 1)[0]
    (dot,) = re.findall(r'<circle cx="[\d.]+" cy="([\d.]+)" r="3"', series)
    (marker_y,) = re.findall(r'<g id="event-0">\s*<title>[^<]*</title>\s*<path d="M[\d.]+ ([\d.]+)', svg)
    assert float(dot) > float(marker_y) - 3  # the list's 2751 sits below the event's Ro 2764
    two = render_series([Series([JAN, FEB, MAR], [1500, None, 1554], [])], "x", "svg").data.decode("utf-8")
    assert two.count('r="3"') == 2  # an unrated list between two rated ones: two dots
    joined = render_series([Series([JAN, FEB], [1500, 1554], [])], "x", "svg").data.decode("utf-8")
    assert 'r="3"' not in joined  # a line of two lists needs none


def test_chart_names_stay_inside_the_plot() -> None:
    # Firouzja's chart: a long name at the last list, at the top of the axis, and one at the
    # first, at the bottom; matplotlib would write both from the marker rightwards, off the figure
    late, early = dt.date(2022, 7, 4), dt.date(2021, 11, 7)
    events = [
        ChartEvent(early, 2770, "FIDE Grand Swiss 2021 (2021-10-27 – 2021-11-07): Ro 2770"),
        ChartEvent(late, 2782, "FIDE Candidates Tournament 2022 Madrid (2022-06-17 – 2022-07-04): Ro 2782"),
    ]
    steps = [ChartStep(dt.date(2022, 8, 1), 2782, 2770, "1 Mar 2024 adjustment +0 written long")]
    line = Series([dt.date(2021, 12, 1), dt.date(2022, 8, 1)], [2782, 2770], events, steps)
    fig = series_figure([line], "Firouzja, Alireza – FIDE standard")
    fig.canvas.draw()
    box = fig.axes[0].get_window_extent()
    texts = [t for t in fig.axes[0].texts if t.get_text()]
    assert len(texts) == 3
    for t in texts:
        ext = t.get_window_extent()
        assert box.x0 <= ext.x0 and ext.x1 <= box.x1, t.get_text()
        assert box.y0 <= ext.y0 and ext.y1 <= box.y1, t.get_text()


def test_player_page_titles_its_markers_and_shows_the_adjustment(con, tmp_path: Path) -> None:
    paths = write_player_page(con, 3, "fide", tmp_path)
    html = paths[-1].read_text(encoding="utf-8")
    assert 'class="event-marker" title="Spring Open 2024 (2024-01-10 – 2024-01-12): Ro 1500' in html
    assert "1 March 2024 adjustment +178" in html
    assert "2024-04-01" not in html  # a month without games is left out
    played = html.split('id="tournaments"', 1)[1]
    assert played.count("<td>Spring Open 2024</td>") == 1  # the duplicate export is the same event


def test_pgn_event_points_come_from_the_games_and_missing_values_say_so(tmp_path: Path) -> None:
    # a PGN event (no start rank, no declared points): Charlie won one game and drew one there
    rw = duckdb.connect(str(_store(tmp_path)))
    try:
        add_rows(
            rw,
            tournaments=[{"tournament_id": 5, "file_id": 1, "source_format": "pgn", "name": "Summer Cup 2024",
                          "start_date": dt.date(2024, 6, 1), "end_date": dt.date(2024, 6, 2)}],
            tournament_players=[{"tournament_id": 5, "player_id": 3, "file_id": 1},
                                {"tournament_id": 5, "player_id": 2, "file_id": 1}],
            games=[{"game_id": 50, "tournament_id": 5, "file_id": 1, "round": 1, "white_id": 3, "black_id": 2,
                    "result": "1-0", "white_score": 1, "black_score": 0, "played": True},
                   {"game_id": 51, "tournament_id": 5, "file_id": 1, "round": 2, "white_id": 2, "black_id": 3,
                    "result": "1/2-1/2", "white_score": 0.5, "black_score": 0.5, "played": True}],
        )  # fmt: skip
        rw.execute("UPDATE players SET title = 'WFM' WHERE player_id = 3")
    finally:
        rw.close()
    con = duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True)
    try:
        t = tournaments_frame(con, 3)
        html = write_player_page(con, 3, "fide", tmp_path / "p")[-1].read_text(encoding="utf-8")
    finally:
        con.close()
    summer = t.filter(pl.col("tournament_id") == 5).row(0, named=True)
    assert (summer["start_rank"], summer["points_in_file"], str(summer["points"])) == (None, None, "1.5")
    assert str(t.filter(pl.col("tournament_id") == 1)["points"][0]) == "2.0"  # the TRF's declared total
    row = html.split("<td>Summer Cup 2024</td>", 1)[1].split("</tr>", 1)[0]
    assert re.findall(r'<td class="num"[^>]*>([^<]*)</td>', row) == ["—", "—", "1.5"]
    assert '<strong id="player-title">WFM</strong>' in html


def test_nothing_rated_gives_no_chart(con, tmp_path: Path) -> None:
    paths = write_player_page(con, 3, "fide-rapid", tmp_path)
    assert [p.suffix for p in paths] == [".html"]
    assert "no chart" in paths[0].read_text(encoding="utf-8")


def test_tournaments_are_named_once_per_event(con) -> None:
    t = tournaments_frame(con, 3)
    assert t["tournament_id"].to_list() == [1]
    assert t.row(0, named=True)["start_rank"] == 3  # the entry in the event itself


def test_players_without_entries_are_never_offered(con) -> None:
    assert find_player(con, "Golf") == 7  # 'Golf,G' was merged into Golf, Gus: one player, not two
    assert find_player(con, "8") == 7
    with pytest.raises(LookupError, match="no player matches"):
        find_player(con, "Ghostly")


def test_player_command_all_months_and_adjustment(tmp_path: Path) -> None:
    db = _store(tmp_path)
    runner = CliRunner()
    res = runner.invoke(app, ["player", "Charlie", "--db", str(db), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert "1 March 2024 adjustment +178" in res.output and "2024-04-01" not in res.output
    assert "1 tournament played: Spring Open 2024" in res.output
    res = runner.invoke(app, ["player", "Charlie", "--all-months", "--db", str(db), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0 and "2024-04-01" in res.output
    res = runner.invoke(app, ["player", "Ghostly", "--db", str(db), "--out", str(tmp_path / "o")])
    assert res.exit_code == 1 and "no player matches 'Ghostly'" in res.output
