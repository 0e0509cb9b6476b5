"""The list page's filters and the index's search, in headless Chromium.

Filters are set through the URL (`#fed=FRA&age=u20`), which runs the same code as the select
boxes. Under a filter the Rank column ranks within it: the national list's ranks must equal
`fed_rank` of the store's view. Expected ranks: `tests.helpers.list_store`.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from elopipe.publish import publish_outputs, write_list
from elopipe.publish.lists import rating_list
from tests.helpers.chromium import CHROMIUM, SKIP_REASON, dump_dom, table_rows
from tests.helpers.list_store import build_list_store
from tests.helpers.publish_store import FEB

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)

NO_ID_HEADING = "Rated from files that gave no FIDE ID: not ranked"


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("browser")
    db = build_list_store(folder / "s.duckdb")
    con = duckdb.connect(str(db), read_only=True)
    try:
        publish_outputs(con, "fide", folder / "out")
        write_list(con, "fide", FEB, folder / "out" / "lists", ["html"])
        (folder / "fed_rank.txt").write_text(
            "\n".join(f"{n}\t{r}" for n, r in rating_list(con, "fide", FEB).select("name", "fed_rank").rows()),
            encoding="utf-8",
        )
    finally:
        con.close()
    return folder


def _ranks(out: Path, fragment: str) -> list[tuple[str, str]]:
    """(name, rank shown) of the visible rows of the February list under `fragment`."""
    page = out / "out" / "lists" / "fide_2024-02-01.html"
    dom = dump_dom(out, page.as_uri() + fragment)
    return [(r[3], r[0]) if len(r) > 1 else (r[0], "") for r in table_rows(dom, "rating-list")]


def test_whole_list_ranks_active_fide_id_players_and_shows_the_others_apart(out: Path) -> None:
    assert _ranks(out, "") == [
        ("Alpha, Anna", "1"),
        ("India, Ivo", ""),
        ("Bravo, Bruno", "2"),
        ("Juliet, Jana", "3"),
        ("Golf, Gus", "4"),
        ("Charlie, Chloé", "5"),
        ("Kilo, Karl", "5"),
        ("Lima, Lea", "7"),
        (NO_ID_HEADING, ""),
        ("Hotel, Hugh", ""),
        ("Mike, Mo", ""),
    ]


def test_federation_filter_is_the_national_list(out: Path) -> None:
    fed_rank = dict(line.split("\t") for line in (out / "fed_rank.txt").read_text(encoding="utf-8").splitlines())
    for fed, want in [
        ("FRA", [("Alpha, Anna", "1"), ("Juliet, Jana", "2"), ("Lima, Lea", "3")]),
        ("ESP", [("India, Ivo", ""), ("Bravo, Bruno", "1"), ("Kilo, Karl", "2")]),
        ("IRL", [("Charlie, Chloé", "1"), (NO_ID_HEADING, ""), ("Hotel, Hugh", ""), ("Mike, Mo", "")]),
    ]:
        got = _ranks(out, f"#fed={fed}")
        assert got == want, fed
        for name, rank in got:
            if name != NO_ID_HEADING:
                assert rank == ("" if fed_rank[name] == "None" else fed_rank[name]), name


@pytest.mark.parametrize(
    ("fragment", "want"),
    [
        ("#sex=F", [("Alpha, Anna", "1"), ("Juliet, Jana", "2"), ("Charlie, Chloé", "3"), ("Lima, Lea", "4")]),
        # a link made when the lists wrote the TRF's 'w'
        ("#sex=w", [("Alpha, Anna", "1"), ("Juliet, Jana", "2"), ("Charlie, Chloé", "3"), ("Lima, Lea", "4")]),
        ("#age=u20", [("Bravo, Bruno", "1"), ("Juliet, Jana", "2"), ("Charlie, Chloé", "3")]),
        (
            "#age=50",
            [("India, Ivo", ""), ("Kilo, Karl", "1"), ("Lima, Lea", "2"), (NO_ID_HEADING, ""), ("Mike, Mo", "")],
        ),
        ("#age=65", [("Lima, Lea", "1"), (NO_ID_HEADING, ""), ("Mike, Mo", "")]),
        ("#title=WGM", [("Alpha, Anna", "1")]),
        ("#title=*", [("Alpha, Anna", "1"), ("Juliet, Jana", "2"), ("Kilo, Karl", "3"), ("Lima, Lea", "4")]),
        ("#fed=FRA&sex=F&age=u20", [("Juliet, Jana", "1")]),
        # the name search finds rows without renumbering them
        ("#q=lima", [("Lima, Lea", "7")]),
        ("#fed=FRA&q=lima", [("Lima, Lea", "3")]),
    ],
)
def test_category_filters_rank_within_the_category(out: Path, fragment: str, want: list[tuple[str, str]]) -> None:
    assert _ranks(out, fragment) == want


def test_filter_scope_is_named(out: Path) -> None:
    page = out / "out" / "lists" / "fide_2024-02-01.html"
    dom = dump_dom(out, page.as_uri() + "#fed=FRA&age=u20")
    scope = re.search(r'id="rank-scope">([^<]*)<', dom)
    assert scope is not None and scope.group(1) == "national list FRA, juniors U20 (born 2004 or later)"


def _select(dom: str, select_id: str) -> list[tuple[str, str]]:
    """(value, text) of the options of the select `select_id`."""
    box = dom.split(f'id="{select_id}"', 1)[1].split("</select>", 1)[0]
    return [(v or t, t) for v, t in re.findall(r'<option(?: value="([^"]*)")?[^>]*>([^<]*)</option>', box)]


def test_title_filter_in_fides_order_and_a_compact_age_filter(out: Path) -> None:
    dom = dump_dom(out, (out / "out" / "lists" / "fide_2024-02-01.html").as_uri())
    # FIDE's order (GM, IM, FM, CM, then the women's titles), not the alphabet's (FM, GM, WFM, WGM)
    assert [v for v, _ in _select(dom, "f-title")] == ["all", "*", "GM", "FM", "WGM", "WFM"]
    # short entries, as the other filters; the birth years are in the note and the scope
    assert [t for _, t in _select(dom, "f-age")] == ["all", "U20", "50+", "65+"]
    assert "U20 born 2004 or later, 50+ born 1974 or earlier, 65+ born 1959 or earlier" in dom


@pytest.mark.parametrize(
    ("fragment", "count"),
    [("", "2"), ("#fed=FRA", "0"), ("#fed=IRL", "2"), ("#age=65", "1"), ("#q=hotel", "1"), ("#sex=w", "0")],
)
def test_no_fide_id_note_counts_the_rows_the_filters_leave(out: Path, fragment: str, count: str) -> None:
    dom = dump_dom(out, (out / "out" / "lists" / "fide_2024-02-01.html").as_uri() + fragment)
    shown = re.search(r'id="no-id-count">([^<]*)<', dom)
    assert shown is not None and shown.group(1) == count
    assert sum(1 for r in table_rows(dom, "rating-list") if r[0] == "" and len(r) > 1 and r[1] == "") == int(count)


def _search(out: Path, query: str) -> list[tuple[str, str]]:
    dom = dump_dom(out, (out / "out" / "index-fide.html").as_uri() + "#q=" + query)
    results = dom.split('id="search-results"', 1)[1].split("</ul>", 1)[0]
    return re.findall(r'<a href="([^"]*)">([^<]*)</a>', results)


def test_index_search_finds_players_and_tournaments(out: Path) -> None:
    # a top player: her own page; accents ignored
    assert _search(out, "chloe") == [("players/fide/3_charlie-chloe.html", "Charlie, Chloé")]
    # a player without a page, rated from files with no FIDE ID: the list page searched for him
    ((href, name),) = _search(out, "mike")
    assert name == "Mike, Mo" and href == "lists/fide_2024-02-01.html#q=Mike%2C%20Mo"
    # a tournament: its report
    assert _search(out, "spring%20open") == [("reports/fide/1_spring-open-2024.html", "Spring Open 2024")]


def test_player_link_from_the_index_lands_on_the_player(out: Path) -> None:
    ((href, _),) = _search(out, "mike")
    dom = dump_dom(out, (out / "out").as_uri() + "/" + href)
    assert [r[3] for r in table_rows(dom, "rating-list") if len(r) > 1] == ["Mike, Mo"]


def test_top_page_links_the_system_index_and_back(out: Path) -> None:
    top = dump_dom(out, (out / "out" / "index.html").as_uri())
    links = top.split('id="system-indexes"', 1)[1].split("</ul>", 1)[0]
    assert re.findall(r'<a href="([^"]*)">([^<]*)</a>', links) == [("index-fide.html", "FIDE standard")]
    index = dump_dom(out, (out / "out" / "index-fide.html").as_uri())
    nav = index.split('id="systems"', 1)[1].split("</nav>", 1)[0]
    assert '<a href="index.html">All systems</a>' in nav and "<strong>FIDE standard</strong>" in nav


@pytest.mark.parametrize("fragment", ["#fed=%&q=alpha", "#title=%zz&q=alpha", "#age=%E0%A4%A&q=alpha"])
def test_a_malformed_escape_in_a_shared_link_leaves_the_list_working(out: Path, fragment: str) -> None:
    # a link cut inside a %-escape stopped the page's script: an empty table; now the bad value is
    # taken as written (it selects nothing) and the rest of the link still applies
    assert [name for name, _ in _ranks(out, fragment) if name != NO_ID_HEADING] == ["Alpha, Anna"]


def test_a_malformed_escape_leaves_the_index_search_working(out: Path) -> None:
    dom = dump_dom(out, (out / "out" / "index-fide.html").as_uri() + "#q=%E0%A4%A")
    assert '<span class="meta" id="search-count">0 found</span>' in dom  # the search ran, found nothing
