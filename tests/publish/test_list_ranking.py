"""Who a published list ranks: the active rank among players with the list's ID, in every format
(frame, CSV, Parquet, TXT, HTML), the national rank, and the index page (newest first, search,
reports). The store is `tests.helpers.list_store` (its docstring has the expected ranks)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import polars as pl
import pytest

from elopipe.publish import publish_outputs, write_list
from elopipe.publish.index import write_index
from elopipe.publish.lists import rating_list
from tests.helpers.list_store import build_list_store
from tests.helpers.publish_store import FEB, JAN

EXPECTED = [
    # name, rank, fed_rank, flags
    ("Alpha, Anna", 1, 1, "w"),
    ("India, Ivo", None, None, "i"),
    ("Bravo, Bruno", 2, 1, ""),
    ("Juliet, Jana", 3, 2, "w"),
    ("Golf, Gus", 4, 1, "new"),
    ("Charlie, Chloé", 5, 1, "w"),
    ("Kilo, Karl", 5, 2, ""),
    ("Lima, Lea", 7, 3, "w"),
    # rated from files that gave no FIDE ID: after the ranked list, by rating, no rank
    ("Hotel, Hugh", None, None, "no-fide-id"),
    ("Mike, Mo", None, None, "no-fide-id"),
]


@pytest.fixture
def con(tmp_path: Path):
    db = build_list_store(tmp_path / "s.duckdb")
    c = duckdb.connect(str(db), read_only=True)
    yield c
    c.close()


def test_rank_is_the_active_rank_among_fide_id_players(con) -> None:
    df = rating_list(con, "fide", FEB)
    got = list(zip(df["name"], df["rank"], df["fed_rank"], df["flags"], strict=True))
    assert got == EXPECTED
    assert df.filter(pl.col.no_id)["fide_id"].null_count() == 2


def test_csv_and_parquet_keep_every_player_with_rank_and_flag(con, tmp_path: Path) -> None:
    csv_path, pq_path = write_list(con, "fide", FEB, tmp_path, ["csv", "parquet"])
    for df in (pl.read_csv(csv_path), pl.read_parquet(pq_path)):
        got = list(zip(df["name"], df["rank"], df["fed_rank"], df["flags"].fill_null(""), strict=True))
        assert got == EXPECTED


def test_fide_txt_lists_fide_ids_only_with_inactive_flag(con, tmp_path: Path) -> None:
    (txt,) = write_list(con, "fide", FEB, tmp_path, ["txt"])
    lines = txt.read_text(encoding="utf-8").splitlines()[1:]
    names = [line[15:76].strip() for line in lines]
    assert names == [e[0] for e in EXPECTED if e[3] != "no-fide-id"]
    assert all(line[0:15].strip() for line in lines)
    india = next(line for line in lines if "India" in line)
    assert india[132:].strip() == "i"


def test_top_players_come_from_the_ranked_list(con, tmp_path: Path) -> None:
    """The player pages of a publish go to the top of the ranked list: not to a player rated
    from files that gave no FIDE ID, however high his rating."""
    paths = publish_outputs(con, "fide", tmp_path / "out")
    pages = {p.name for p in paths if p.parent.name == "fide" and p.parent.parent.name == "players"}
    assert not any(p.startswith("8_") for p in pages)
    assert any(p.startswith("1_") for p in pages)


def test_html_list_carries_rankability_and_filters(con, tmp_path: Path) -> None:
    (page,) = write_list(con, "fide", FEB, tmp_path, ["html"])
    html = page.read_text(encoding="utf-8")
    rows = json.loads(html.split('<script id="list-data" type="application/json">')[1].split("</script>")[0])
    by_name = {r[3]: r for r in rows}
    # JSON row: 13 columns, link, rankable, no_id
    assert by_name["Alpha, Anna"][-2:] == [1, 0]
    assert by_name["India, Ivo"][-2:] == [0, 0]
    assert by_name["Hotel, Hugh"][-2:] == [0, 1]
    for fed in ("ESP", "FRA", "IRL", "USA"):
        assert f"<option>{fed}</option>" in html
    for title in ("FM", "GM", "WFM", "WGM"):
        assert f"<option>{title}</option>" in html
    assert "born 2004 or later" in html and "born 1974 or earlier" in html and "born 1959 or earlier" in html
    assert "no FIDE ID" in html


def test_ffe_list_ranks_licensees_and_flags_the_others(tmp_path: Path) -> None:
    db = build_list_store(tmp_path / "s.duckdb")
    rw = duckdb.connect(str(db))
    rw.execute("UPDATE players SET national_id = 'A01450' WHERE player_id = 2")
    rw.execute(
        "INSERT INTO rating_lists (system, list_date, player_id, rating, games, flags, source)"
        " SELECT 'ffe', list_date, player_id, rating, games, flags, 'computed' FROM rating_lists"
        " WHERE system = 'fide' AND list_date = ? AND player_id IN (1, 2)",
        [FEB],
    )
    rw.close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        df = rating_list(con, "ffe", FEB)
    finally:
        con.close()
    got = list(zip(df["name"], df["rank"], df["flags"], strict=True))
    assert got == [("Bravo, Bruno", 1, ""), ("Alpha, Anna", None, "w no-licence")]


def test_index_is_newest_first_with_search_and_reports(con, tmp_path: Path) -> None:
    out = tmp_path / "out"
    for d in (JAN, FEB):
        write_list(con, "fide", d, out / "lists", ["html", "csv"])
    publish_outputs(con, "fide", out)  # reports, player pages and the index
    html = write_index(con, "fide", out).read_text(encoding="utf-8")
    body = html.split("<body>", 1)[1]
    # the search comes first, then the latest list, the reports, and every list newest first
    order = [body.index(s) for s in ('id="index-search"', "Latest list: 2024-02-01", 'id="reports"', 'id="lists"')]
    assert order == sorted(order)
    lists_part = body.split('id="lists"', 1)[1]
    assert lists_part.index("2024-02-01") < lists_part.index("2024-01-01")
    assert 'href="reports/fide/1_spring-open-2024.html">Spring Open 2024</a>' in body
    assert 'href="lists/fide_2024-02-01.html#fed=FRA"' in body and 'href="lists/fide_2024-02-01.html#fed=IRL"' in body
    search = json.loads(body.split('<script id="search-data" type="application/json">')[1].split("</script>")[0])
    names = {p[0] for p in search["p"]}
    assert {e[0] for e in EXPECTED} <= names  # every player of the latest list, ranked or not
    alpha = next(p for p in search["p"] if p[0] == "Alpha, Anna")
    assert alpha[1] == "FRA" and alpha[2].startswith("players/fide/1_")
    assert next(p for p in search["p"] if p[0] == "Mike, Mo")[2] is None  # found through the list page
    assert search["t"] == [["Spring Open 2024", "2024-01-10", "reports/fide/1_spring-open-2024.html"]]


def test_index_links_only_this_stores_pages(con, tmp_path: Path) -> None:
    # a folder shared with another store holds its pages of the same ids (tournament 1 and player
    # 1 of another event) and of ids this store lacks: the index must link none of them
    out = tmp_path / "out"
    write_list(con, "fide", FEB, out / "lists", ["html"])
    publish_outputs(con, "fide", out)
    foreign = [
        "reports/fide/1_44th-olympiad-2022.html",
        "reports/fide/999_other-open.html",
        "players/fide/1_carlsen-magnus.html",
        "players/fide/999_other-player.html",
    ]
    for rel in foreign:
        (out / rel).write_text("<html>other store</html>", encoding="utf-8")
    html = write_index(con, "fide", out).read_text(encoding="utf-8")
    for rel in foreign:
        assert rel not in html
    assert html.count('href="reports/fide/1_spring-open-2024.html"') == 1
    search = json.loads(html.split('<script id="search-data" type="application/json">')[1].split("</script>")[0])
    assert search["t"] == [["Spring Open 2024", "2024-01-10", "reports/fide/1_spring-open-2024.html"]]
    assert any(str(p[2]).startswith("players/fide/1_") for p in search["p"] if p[2])
