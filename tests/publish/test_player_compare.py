"""A player's rating history under two sides on one chart and one table (`elopipe player --compare`)."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from elopipe.publish.charts import series_figure
from elopipe.publish.compare import CompareError
from elopipe.publish.history import player_series, write_player_page
from elopipe.publish.history_compare import player_comparison
from tests.helpers.scenario_store import DEC, JAN, NOV, two_rules_store


def _lines(fig) -> dict[str, tuple[list, list]]:
    """The step lines of a chart figure by gid: (x, y) data."""
    return {
        line.get_gid(): (list(line.get_xdata()), list(line.get_ydata()))
        for line in fig.axes[0].get_lines()
        if (line.get_gid() or "").startswith("series-")
    }


def test_a_system_against_itself_draws_two_identical_lines_and_no_difference(tmp_path: Path) -> None:
    s = two_rules_store(scenario=False)
    cmp = player_comparison(s.con, 1, "fide", "fide")
    assert cmp.rows["list_date"].to_list() == [DEC, JAN]
    assert cmp.rows["rating_a"].to_list() == cmp.rows["rating_b"].to_list() == [2701, 2696]
    assert cmp.rows["diff"].to_list() == [0, 0]
    assert cmp.rows["games_a"].to_list() == cmp.rows["games_b"].to_list() == [2, 1]
    assert cmp.summary() == "lists rating the player on both sides: 2; B − A not zero on 0"
    lines = cmp.lines(player_series(s.con, 1, "fide"), player_series(s.con, 1, "fide"))
    assert [line.label for line in lines] == ["fide", "fide"]
    drawn = _lines(series_figure(lines, "x"))
    assert set(drawn) == {"series-0", "series-1"}
    assert drawn["series-0"] == drawn["series-1"] and drawn["series-0"][1] == [2701, 2696]
    html = write_player_page(s.con, 1, "fide", tmp_path, compare=cmp)[-1]
    assert html.name == "1_player-1-vs-fide.html"
    table = html.read_text(encoding="utf-8").split('id="compare"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'<td class="num">([^<]*)</td>', table)[:5] == ["2701", "2701", "0", "2", "2"]


def test_fide_against_a_scenario_shows_the_known_difference(tmp_path: Path) -> None:
    s = two_rules_store()
    cmp = player_comparison(s.con, 1, "fide", "fide@v2017")
    # December, 2 wins of player 1 (Ro 2700, K 10) against 2000 and 2200: V2024 as amended takes
    # D 700 and 500 (PD .99 + .96, +0.5 → +1), V2017 caps both at 400 (PD .92 × 2, +1.6 → +2).
    # January, a draw with 2198: D 503 (PD .96, −4.6 → −5) against D 504 capped (.92, −4.2 → −4)
    assert list(cmp.rows.select("list_date", "rating_a", "rating_b", "diff", "games_a", "games_b").iter_rows()) == [
        (DEC, 2701, 2702, 1, 2, 2),
        (JAN, 2696, 2698, 2, 1, 1),
    ]
    assert cmp.summary() == "lists rating the player on both sides: 2; B − A not zero on 2; largest: +2 on 2026-01-01"
    # player 2 is capped on both sides: the same history
    p2 = player_comparison(s.con, 2, "fide", "fide@v2017")
    assert p2.rows["diff"].to_list() == [0, 0]
    # January: no game on either side and no rating moved, shown only with all months
    assert (p2.shown(False)["list_date"].to_list(), p2.shown(True)["list_date"].to_list()) == ([DEC], [DEC, JAN])
    # player 3 (1300) falls under V2024's floor of 1400, not under V2017's 1000
    p3 = player_comparison(s.con, 3, "fide", "fide@v2017").rows.row(0, named=True)
    shown = (p3["rating_a"], p3["delisted_a"], p3["rating_b"], p3["delisted_b"], p3["diff"])
    assert shown == (None, True, 1303, False, None)
    paths = write_player_page(s.con, 1, "fide", tmp_path, chart_format="svg", compare=cmp)
    assert [p.name for p in paths] == ["1_player-1-vs-fide-v2017.svg", "1_player-1-vs-fide-v2017.html"]
    html = paths[1].read_text(encoding="utf-8")
    assert "Compared with: <strong>FIDE standard, scenario v2017</strong>" in html
    assert html.count('class="event-marker"') == 4  # each side's two tournaments
    assert "[fide@v2017]" in html and "[fide]" in html


def test_the_svg_names_both_sides(tmp_path: Path) -> None:
    s = two_rules_store()
    cmp = player_comparison(s.con, 1, "fide", "fide@v2017")
    svg = write_player_page(s.con, 1, "fide", tmp_path, chart_format="svg", compare=cmp)[0].read_text(encoding="utf-8")
    assert re.search(r'<g id="series-0">\s*<title>fide</title>', svg)
    assert re.search(r'<g id="series-1">\s*<title>fide@v2017</title>', svg)
    # every marker titled with its side: events 0-1 are A's, 2-3 B's
    assert re.search(r'<g id="event-0">\s*<title>Event 1 \(2025-11-10 – 2025-11-12\): Ro 2700, change \+1, 2 games, '
                     r"W 2.0 \[fide\]</title>", svg)  # fmt: skip
    assert re.search(r'<g id="event-3">\s*<title>Event 2 [^<]*Ro 2702, change -4, [^<]*\[fide@v2017\]</title>', svg)


def test_against_the_official_list_on_its_own_dates(tmp_path: Path) -> None:
    s = two_rules_store(scenario=False)
    s.official(DEC, 1, 2705, k=10)
    cmp = player_comparison(s.con, 1, "fide", "official")
    assert cmp.side_b == "official:fide"
    # November: only the official list; December: both; January: no official list, so B is the
    # official rating in force, December's, in brackets (carried) and not compared
    rows = cmp.rows.select("list_date", "rating_a", "rating_b", "diff", "on_b", "carried_b")
    assert list(rows.iter_rows()) == [
        (NOV, None, 2700, None, True, False),
        (DEC, 2701, 2705, 4, True, False),
        (JAN, 2696, 2705, None, False, True),
    ]
    official = cmp.official_series()
    assert official is not None and official.points
    assert (official.dates, official.ratings) == ([NOV, DEC], [2700, 2705])
    paths = write_player_page(s.con, 1, "fide", tmp_path, compare=cmp)
    assert [p.name for p in paths] == ["1_player-1-vs-official-fide.png", "1_player-1-vs-official-fide.html"]


def test_the_official_rating_in_force_is_carried_until_a_later_official_list_leaves_the_player_out() -> None:
    # an officer reads the last official list imported as the one in force: after it the player's
    # official rating is shown carried; a later official list without him ends it (he is not on it)
    s = two_rules_store(scenario=False)
    s.official(DEC, 1, 2705, k=10)  # December's official list holds player 1 only
    p2 = player_comparison(s.con, 2, "fide", "official").rows
    assert list(p2.select("list_date", "rating_b", "on_b", "carried_b").iter_rows()) == [
        (NOV, 2000, True, False),
        (DEC, None, False, False),
        (JAN, None, False, False),
    ]
    # without the December list, November's official rating is the one in force after it
    s = two_rules_store(scenario=False)
    p2 = player_comparison(s.con, 2, "fide", "official").rows
    assert list(p2.select("list_date", "rating_b", "diff", "carried_b").iter_rows()) == [
        (NOV, 2000, None, False),
        (DEC, 2000, None, True),
        (JAN, 2000, None, True),
    ]


def test_a_rating_carried_from_an_earlier_list_is_marked_and_not_compared(tmp_path: Path) -> None:
    # side 'fide@few' has a December list only (as FFE lists a few times a year): in January its
    # rating is the December one carried, shown in brackets, with no B − A
    s = two_rules_store(scenario=False)
    s.con.execute(
        "INSERT INTO rating_lists (system, list_date, player_id, rating, games, total_games, k, change, source)"
        " VALUES ('fide@few', ?, 1, 2710, 2, 2, 10, 10, 'computed')",
        [DEC],
    )
    cmp = player_comparison(s.con, 1, "fide", "fide@few")
    assert list(cmp.rows.select("list_date", "rating_a", "rating_b", "diff", "carried_a", "carried_b").iter_rows()) == [
        (DEC, 2701, 2710, 9, False, False),
        (JAN, 2696, 2710, None, False, True),
    ]
    # the count is of the rows with a B − A: one, as the table shows
    assert cmp.summary(all_months=False) == (
        "lists rating the player on both sides: 1; B − A not zero on 1; largest: +9 on 2025-12-01; a rating in "
        "brackets is carried from that side's earlier list (none of the date): not compared"
    )
    html = write_player_page(s.con, 1, "fide", tmp_path, compare=cmp)[-1].read_text(encoding="utf-8")
    table = html.split('id="compare"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'<td class="num">([^<]*)</td>', table)[5:8] == ["2696", "(2710)", ""]
    # the page says what the terminal says, and its header counts the rows of its table
    assert unescape(html.split('<p id="compare-summary">', 1)[1].split("</p>", 1)[0]) == cmp.summary(all_months=False)
    assert 'id="player-count">2<' in html


def test_the_count_says_how_many_lists_are_hidden_without_all_months() -> None:
    p2 = player_comparison(two_rules_store().con, 2, "fide", "fide@v2017")
    assert p2.shown(False).height == 1 and p2.rows.height == 2
    assert p2.summary(all_months=False) == (
        "lists rating the player on both sides: 1; B − A not zero on 0; 1 more without a game on either side "
        "(--all-months)"
    )
    assert p2.summary(all_months=True) == "lists rating the player on both sides: 2; B − A not zero on 0"


@pytest.mark.parametrize("b", ["nope", "fide@ghost", "ffe", "official:ffe"])
def test_a_side_the_store_has_no_rows_of_is_refused(b: str) -> None:
    s = two_rules_store()
    with pytest.raises(CompareError, match=f"the store has no list for '{b}'; sides it has: fide, fide@v2017, "
                                           "official:fide$"):  # fmt: skip
        player_comparison(s.con, 1, "fide", b)
