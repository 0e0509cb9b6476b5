"""Rating lists: frames, FIDE fixed-width TXT, CSV/Parquet/HTML files, diff, publish_outputs."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish import publish_outputs, write_list
from elopipe.publish.diff import diff_lists
from elopipe.publish.fidetxt import format_line, rating_header, to_fide_txt
from elopipe.publish.list_html import flag_legend, html_columns, list_html, title_order
from elopipe.publish.lists import display_flags, list_dates, rating_list
from tests.helpers.publish_store import FEB, JAN, build_store


@pytest.fixture
def con(tmp_path: Path):
    db = build_store(tmp_path / "s.duckdb")
    c = duckdb.connect(str(db), read_only=True)
    yield c
    c.close()


def test_latest_list_ranked_with_flags(con) -> None:
    df = rating_list(con, "fide")
    assert df["name"].to_list() == ["Alpha, Anna", "Bravo, Bruno", "Golf, Gus", "Charlie, Chloé"]
    assert df["rank"].to_list() == [1, 2, 3, 4]
    assert df["flags"].to_list() == ["w", "", "new", "w"]
    assert df["change"].to_list() == [-4, -46, None, 54]
    # unrated (D) and delisted (E) rows of the February list are not on the list
    assert 4 not in df["player_id"].to_list() and 5 not in df["player_id"].to_list()


def test_older_list_and_missing_list(con) -> None:
    assert list_dates(con, "fide") == [JAN, FEB]
    jan = rating_list(con, "fide", JAN)
    assert jan.height == 5
    assert jan.filter(pl.col("player_id") == 6)["flags"].item() == "i w"
    with pytest.raises(LookupError):
        rating_list(con, "fide", dt.date(2023, 1, 1))
    with pytest.raises(LookupError):
        rating_list(con, "ffe")


def test_display_flags() -> None:
    assert display_flags("wi", None) == "w i"
    assert display_flags("i,new", "w") == "i new w"
    assert display_flags(None, "m") == ""
    assert display_flags("E", "w") == "E w"


def test_fide_txt_columns_match_fides_layout(con) -> None:
    text = to_fide_txt(rating_list(con, "fide"), FEB)
    lines = text.splitlines()
    header = lines[0]
    # positions of FIDE's standard_rating_list.txt
    for label, pos in [
        ("Name", 15),
        ("Fed", 76),
        ("Sex", 80),
        ("Tit", 84),
        ("WTit", 89),
        ("OTit", 94),
        ("FOA", 109),
        ("FEB24", 113),
        ("Gms", 119),
        ("K", 123),
        ("B-day", 126),
        ("Flag", 132),
    ]:
        assert header[pos : pos + len(label)] == label, label
    anna = lines[1]
    assert anna[0:15].strip() == "100001"
    assert anna[15:76].strip() == "Alpha, Anna"
    assert anna[76:80].strip() == "FRA"
    assert anna[80:84].strip() == "F"
    assert anna[84:89].strip() == ""  # WGM is a women's title: WTit column
    assert anna[89:94].strip() == "WGM"
    assert anna[113:119].strip() == "2096"
    assert anna[119:123].strip() == "2"
    assert anna[123:126].strip() == "20"
    assert anna[126:132].strip() == "1990"
    assert anna[132:].strip() == "w"
    assert rating_header(dt.date(2025, 1, 1)) == "JAN25"


def test_fide_txt_lines_are_each_rows_fixed_width_line(con) -> None:
    """The list's lines, built column-wise, are `format_line` of each row: cut and padded by
    characters (an accented or over-long name, a missing ID or title), the end's blanks off."""
    listed = rating_list(con, "fide")
    edge = listed.head(1).with_columns(
        pl.lit("Ñáñez-Þórsdóttir, Zoë " + "x" * 60).alias("name"),
        pl.lit(None, pl.Int64).alias("fide_id").cast(listed["fide_id"].dtype),
        pl.lit(None, pl.String).alias("title"),
        pl.lit(None, pl.String).alias("sex"),
        pl.lit(None, pl.String).alias("fide_flag").cast(listed["fide_flag"].dtype),
    )
    for df in (listed, pl.concat([listed, edge])):
        lines = to_fide_txt(df, FEB).splitlines()
        assert len(lines) == df.height + 1
        for row, line in zip(df.iter_rows(named=True), lines[1:], strict=True):
            title = row["title"] or ""
            tit, wtit = ("", title) if title.upper().startswith("W") else (title, "")
            sex = row["sex"] or ""  # M/F as FIDE's lists write it
            values = [row["fide_id"], row["name"], row["federation"], sex, tit, wtit, "", ""]
            k = row["k_next"] if row["k_next"] is not None else row["k"]  # FIDE's K, else the period's
            values += [row["rating"], row["games"], k, row["birth_year"], row["fide_flag"]]
            assert line == format_line(values)
    assert to_fide_txt(listed.head(0), FEB) == lines[0] + "\n"


def test_fide_txt_gives_every_rated_player_his_k_for_the_next_period() -> None:
    """FIDE's lists give every rated player's K; the TXT left it blank for a player without a game
    in the period. Rated by the engine: player 3 does not play in January (a junior, K 40), player
    4 neither (K 20); player 1 reaches 2400 (K 20 in the period, 10 from the list on)."""
    from elopipe.rating.run import rate
    from tests.helpers.fide import Scenario

    s = Scenario()
    jan, feb = dt.date(2025, 1, 1), dt.date(2025, 2, 1)
    for pid, rating, born in ((1, 2390, 1990), (2, 2390, 1990), (3, 1900, 2010), (4, 2000, 1980)):
        s.player(pid, birth_year=born, fide_id=5000 + pid)
        s.official(jan, pid, rating, k=40 if born == 2010 else 20, birth_year=born)
    s.event(dt.date(2025, 1, 10), dt.date(2025, 1, 11), [(1, 2, "W"), (2, 1, "L")])
    rate(s.con, "fide")
    lines = to_fide_txt(rating_list(s.con, "fide", feb), feb).splitlines()[1:]
    k_of = {int(line[0:15]): (line[119:123].strip(), line[123:126].strip()) for line in lines}
    assert k_of == {5001: ("2", "10"), 5002: ("2", "20"), 5003: ("0", "40"), 5004: ("0", "20")}


def test_write_list_every_format(con, tmp_path: Path) -> None:
    paths = write_list(con, "fide", FEB, tmp_path)
    assert [p.name for p in paths] == [
        "fide_2024-02-01.csv",
        "fide_2024-02-01.parquet",
        "fide_2024-02-01.txt",
        "fide_2024-02-01.html",
    ]
    csv = pl.read_csv(paths[0])
    pq = pl.read_parquet(paths[1])
    assert csv.height == pq.height == 4
    assert csv.columns[:15] == [
        "rank",
        "fed_rank",
        "fide_id",
        "national_id",
        "name",
        "federation",
        "sex",
        "title",
        "birth_year",
        "rating",
        "games",
        "k",
        "k_next",
        "change",
        "flags",
    ]
    assert pq["rating"].to_list() == [2096, 1854, 1600, 1554]
    html = paths[3].read_text(encoding="utf-8")
    assert 'id="list-date">2024-02-01<' in html
    assert 'id="player-count">4<' in html
    data = json.loads(html.split('<script id="list-data" type="application/json">')[1].split("</script>")[0])
    assert [r[3] for r in data] == ["Alpha, Anna", "Bravo, Bruno", "Golf, Gus", "Charlie, Chloé"]
    assert "<script src" not in html and "http" not in html.split("<body>")[1]
    with pytest.raises(ValueError):
        write_list(con, "fide", FEB, tmp_path, ["xlsx"])


def test_every_format_spells_sex_as_fides_lists_do(con, tmp_path: Path) -> None:
    """M/F in the CSV, Parquet, HTML and TXT of one list, the Sex column of FIDE's list files (the
    CSV wrote the TRF's 'w' where the TXT wrote 'F'); 'w' stays the woman's flag."""
    csv, pq, txt, html = write_list(con, "fide", FEB, tmp_path)
    want = ["F", "M", "M", "F"]  # Alpha, Bravo, Golf, Charlie
    assert pl.read_csv(csv)["sex"].to_list() == want
    assert pl.read_parquet(pq)["sex"].to_list() == want
    assert [line[80:84].strip() for line in txt.read_text(encoding="utf-8").splitlines()[1:]] == want
    data = json.loads(html.read_text(encoding="utf-8").split('type="application/json">')[1].split("</script>")[0])
    sex_at = [key for key, *_ in html_columns("fide")].index("sex")
    assert [row[sex_at] for row in data] == want
    assert pl.read_csv(csv)["flags"].to_list() == ["w", "", "new", "w"]


def test_diff_between_store_lists(con) -> None:
    df = diff_lists(con, "fide", "2024-01-01", "2024-02-01")
    status = {r["name"]: r["status"] for r in df.iter_rows(named=True)}
    assert status == {
        "Alpha, Anna": "changed",
        "Bravo, Bruno": "changed",
        "Charlie, Chloé": "changed",
        "Golf, Gus": "new",
        "Echo, Emil": "delisted",
        "Foxtrot, Fay": "dropped",
    }
    chloe = df.filter(pl.col("name") == "Charlie, Chloé").row(0, named=True)
    assert (chloe["rating_a"], chloe["rating_b"], chloe["delta"], chloe["change_b"]) == (
        1500,
        1554,
        54,
        54,
    )


def test_diff_between_published_files(con, tmp_path: Path) -> None:
    a = write_list(con, "fide", JAN, tmp_path, ["csv"])[0]
    b = write_list(con, "fide", FEB, tmp_path, ["parquet"])[0]
    df = diff_lists(None, "fide", str(a), str(b))
    status = {r["name"]: r["status"] for r in df.iter_rows(named=True)}
    # from files the floor cannot be seen: Echo is only 'dropped'
    assert status["Echo, Emil"] == "dropped"
    assert status["Golf, Gus"] == "new"
    assert status["Alpha, Anna"] == "changed"
    with pytest.raises(FileNotFoundError):
        diff_lists(None, "fide", str(tmp_path / "nope.csv"), str(b))


def test_diff_of_files_keeps_namesakes_apart(tmp_path: Path) -> None:
    """Two players of one name and no FIDE ID (two Denis O'Connells of an Irish league) are each
    compared with himself, never crosswise (which showed +41 and -41 for players who did not play)."""
    cols = "player_id,fide_id,name,rating\n"
    a, b = tmp_path / "fide_2022-07-01.csv", tmp_path / "fide_2022-08-01.csv"
    a.write_text(cols + '7,,"O\'Connell, Denis",1800\n9,,"O\'Connell, Denis",1759\n', encoding="utf-8")
    b.write_text(cols + '9,,"O\'Connell, Denis",1759\n7,,"O\'Connell, Denis",1810\n', encoding="utf-8")
    df = diff_lists(None, "fide", str(a), str(b)).sort("rating_a")
    assert df.select("status", "rating_a", "rating_b", "delta").rows() == [
        ("unchanged", 1759, 1759, 0),
        ("changed", 1800, 1810, 10),
    ]


def test_publish_outputs_writes_lists_reports_and_charts(con, tmp_path: Path) -> None:
    paths = publish_outputs(con, "fide", tmp_path / "out")
    rel = sorted(str(p.relative_to(tmp_path / "out")) for p in paths)
    for fmt in ("csv", "parquet", "txt", "html"):
        assert f"lists/fide_2024-02-01.{fmt}" in rel
    assert "reports/fide/1_spring-open-2024.html" in rel
    assert "reports/fide/1_spring-open-2024.players.csv" in rel
    charts = [r for r in rel if r.endswith(".svg")]
    assert len(charts) == 4 and not any(
        r.endswith(".png") for r in rel
    )  # every rated player of the list is in the top 10
    assert all(p.exists() for p in paths)
    assert "index-fide.html" in rel
    with pytest.raises(LookupError):
        publish_outputs(con, "ffe", tmp_path / "none")


def test_publish_command(tmp_path: Path) -> None:
    db = build_store(tmp_path / "s.duckdb")
    runner = CliRunner()
    res = runner.invoke(app, ["publish", "--db", str(db), "--out", str(tmp_path / "o"), "--all", "--format", "csv,txt"])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "o" / "lists").iterdir()) == [
        "fide_2024-01-01.csv",
        "fide_2024-01-01.txt",
        "fide_2024-02-01.csv",
        "fide_2024-02-01.txt",
    ]
    res = runner.invoke(app, ["publish", "--db", str(db), "--format", "pdf"])
    assert res.exit_code == 2
    res = runner.invoke(
        app,
        ["publish", "--db", str(db), "--out", str(tmp_path / "d"), "--diff", "2024-01-01", "2024-02-01"],
    )
    assert res.exit_code == 0, res.output
    assert "1 new, 3 changed, 1 delisted, 1 dropped" in res.output
    res = runner.invoke(app, ["publish", "--db", str(tmp_path / "missing.duckdb")])
    assert res.exit_code == 1


def test_diff_file_names_the_system_once(con, tmp_path: Path) -> None:
    # a published file against a store list: the file's stem 'fide_2024-01-01' must not repeat 'fide'
    published = write_list(con, "fide", JAN, tmp_path / "before", ["csv"])[0]
    db = build_store(tmp_path / "s2.duckdb")
    out = tmp_path / "d"
    res = CliRunner().invoke(
        app, ["publish", "--db", str(db), "--out", str(out), "--diff", str(published), "2024-02-01"]
    )
    assert res.exit_code == 0, res.output
    # beside it only elopipe's own files: the manifest that records it as elopipe's, and its lock
    assert sorted(p.name for p in out.iterdir()) == [
        ".elopipe-manifest.json",
        ".elopipe-publish.lock",
        "diff_fide_2024-01-01_2024-02-01.csv",
    ]
    assert "diff_fide_fide" not in res.output


@pytest.mark.parametrize("name", ["</script><b>Evil & Co", "<!--<script>"])
def test_html_list_survives_markup_in_names(tmp_path: Path, name: str) -> None:
    # "<!--<script>" inside a <script> element puts the HTML parser in its escape state, where
    # the closing tag is swallowed: the JSON block must not hold '<', '>' or '&' at all.
    db = build_store(tmp_path / "s.duckdb")
    rw = duckdb.connect(str(db))
    rw.execute("UPDATE players SET name = ? WHERE player_id = 2", [name])
    rw.close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        html = write_list(con, "fide", FEB, tmp_path, ["html"])[0].read_text(encoding="utf-8")
    finally:
        con.close()
    payload = html.split('<script id="list-data" type="application/json">')[1].split("</script>")[0]
    assert not set("<>&") & set(payload)
    assert name in [r[3] for r in json.loads(payload)]


def test_json_for_script_escapes_exactly_the_five_characters() -> None:
    from elopipe.publish.html import json_for_script

    value = [["</script>", "<!--", "a & b", "x\u2028y\u2029z", "Ñáñez", None, 3]]
    text = json_for_script(value)
    assert not set("<>&\u2028\u2029") & set(text)
    assert json.loads(text) == value
    assert text == json.dumps(value, ensure_ascii=False, separators=(",", ":")).translate(
        {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028", 0x2029: "\\u2029"}
    )


def test_publish_full_command_and_bad_date(tmp_path: Path) -> None:
    db = build_store(tmp_path / "s.duckdb")
    runner = CliRunner()
    out = tmp_path / "full"
    res = runner.invoke(app, ["publish", "--db", str(db), "--out", str(out), "--list-date", "2024-02-01", "--full"])
    assert res.exit_code == 0, res.output
    assert (out / "index-fide.html").exists()
    assert (out / "reports" / "fide" / "1_spring-open-2024.games.csv").exists()
    assert len(list((out / "players" / "fide").glob("*.svg"))) == 4
    res = runner.invoke(app, ["publish", "--db", str(db), "--list-date", "2023-05-01"])
    assert res.exit_code == 2 and "no rating list" in res.output  # a usage error, as compare says it
    res = runner.invoke(app, ["publish", "--db", str(db), "--list-date", "May 2023"])
    assert res.exit_code == 2


def test_fide_txt_reads_back_with_the_official_list_importer(con, tmp_path: Path) -> None:
    """Our TXT is laid out so that the importer of FIDE's own files (issue 7) reads it."""
    from elopipe.official.list_import import read_list

    path = write_list(con, "fide", FEB, tmp_path, ["txt"])[0]
    mem = duckdb.connect()
    try:
        read = read_list(mem, path, "fide")
        fmt, when, got = read.file_format, read.list_date, read.rel.pl().sort("fide_id")
        assert read.skips.height == 0  # every line of our TXT is a row the importer takes
    finally:
        mem.close()
    assert (fmt, when) == ("fide-txt", FEB)
    want = rating_list(con, "fide", FEB).sort("fide_id")
    assert got["fide_id"].to_list() == want["fide_id"].to_list()
    assert got["rating"].to_list() == want["rating"].to_list()
    assert got["games"].to_list() == want["games"].to_list()
    assert got["k"].to_list() == want["k"].to_list()
    assert got["birth_year"].to_list() == want["birth_year"].to_list()
    assert got["flag"].fill_null("").to_list() == want["fide_flag"].to_list()


def _legend(html: str) -> list[str]:
    """The flags the page's legend explains, in order."""
    legend = html.split('id="flag-legend"', 1)[1].split("</dl>", 1)[0]
    return re.findall(r'<span class="flag">([^<]*)</span>', legend)


def test_flag_legend_is_the_lists_own_system(con) -> None:
    df = rating_list(con, "fide", FEB)
    fide = _legend(list_html(df, "fide", FEB, None))
    assert fide == ["i", "w", "new", "pool", "delisted", "adj2024:+N", "no-fide-id"]
    # an FFE list explains F N E and its own ID flag, none of FIDE's
    ffe = _legend(list_html(df, "ffe", FEB, None))
    assert ffe == ["i", "w", "new", "F", "N", "E", "archived", "no-licence"]
    assert _legend(list_html(df, "elo", FEB, None)) == ["i", "w", "new"]
    assert [t for flags, _ in flag_legend("fide-rapid") for t in flags] == fide


def test_list_page_says_who_no_age_filter_holds(con) -> None:
    df = rating_list(con, "fide", FEB)
    assert df["birth_year"].null_count() == 0
    assert "no-birth-year" not in list_html(df, "fide", FEB, None)
    one = df.with_columns(pl.when(pl.col.player_id == 2).then(None).otherwise(pl.col.birth_year).alias("birth_year"))
    html = list_html(one, "fide", FEB, None)
    assert '<span id="no-birth-year">1</span> player with no birth year in the files is in no age filter' in html


def test_titles_in_fides_order() -> None:
    assert title_order(["WFM", "CM", "GM", "WCM", "IM", "FM", "WGM", "WIM", "AGM"]) == [
        "GM", "IM", "FM", "CM", "WGM", "WIM", "WFM", "WCM", "AGM"
    ]  # fmt: skip


def _links(page: Path) -> list[str]:
    return re.findall(r'href="(index[^"#]*\.html)"', page.read_text(encoding="utf-8"))


def test_system_indexes_link_each_other_and_a_top_page(tmp_path: Path) -> None:
    db = build_store(tmp_path / "s.duckdb")
    rw = duckdb.connect(str(db))
    rw.execute(
        "INSERT INTO rating_lists (system, list_date, player_id, rating, games, total_games, k, change, source)"
        " VALUES ('fide-rapid', ?, 1, 2000, 0, 0, 20, 0, 'computed')",
        [FEB],
    )
    rw.close()
    out = tmp_path / "out"
    con = duckdb.connect(str(db), read_only=True)
    try:
        publish_outputs(con, "fide", out)
        assert _links(out / "index.html") == ["index-fide.html"]
        assert _links(out / "index-fide.html") == ["index.html"]  # the top page; no other system yet
        publish_outputs(con, "fide-rapid", out)
        pages = {p: p.read_bytes() for p in out.glob("index*.html")}
        # the top page lists both systems in their order; each index links the top page and the other
        assert _links(out / "index.html") == ["index-fide.html", "index-fide-rapid.html"]
        assert _links(out / "index-fide.html") == ["index.html", "index-fide-rapid.html"]
        assert _links(out / "index-fide-rapid.html") == ["index.html", "index-fide.html"]
        assert 'FIDE rapid</a><span class="meta"> – latest list 2024-02-01, 1 list' in (out / "index.html").read_text(
            encoding="utf-8"
        )
        # publishing again changes none of them; the top page is among the files written
        assert out / "index.html" in publish_outputs(con, "fide", out)
        publish_outputs(con, "fide-rapid", out)
        assert {p: p.read_bytes() for p in out.glob("index*.html")} == pages
    finally:
        con.close()


def test_publish_full_writes_what_the_readme_says(tmp_path: Path) -> None:
    # docs/commands.md, elopipe publish --full: the chosen list in every format (--format does not
    # apply), a report per tournament rated on it, the pages of its highest-ranked players (up to
    # 10), and the indexes (the system's and the top page)
    db = build_store(tmp_path / "s.duckdb")
    out = tmp_path / "o"
    res = CliRunner().invoke(app, ["publish", "--db", str(db), "--out", str(out), "--full", "--format", "csv"])
    assert res.exit_code == 0, res.output
    rel = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and not p.name.startswith("."))
    assert [r for r in rel if r.startswith("lists/")] == [
        f"lists/fide_2024-02-01.{f}" for f in ("csv", "html", "parquet", "txt")
    ]
    assert [r for r in rel if r.startswith("reports/")] == [
        f"reports/fide/1_spring-open-2024.{f}" for f in ("crosstable.csv", "games.csv", "html", "players.csv")
    ]
    pages = [r for r in rel if r.startswith("players/")]
    assert len(pages) == 8 and all(p.endswith((".html", ".svg")) for p in pages)  # 4 ranked players: HTML + chart
    assert "index-fide.html" in rel and "index.html" in rel and len(rel) == 4 + 4 + 8 + 2


def test_elo_lists_give_the_decimal_the_seed_keeps(tmp_path: Path) -> None:
    """Seed 001 keeps one decimal: 2589.7 -> 2597.2 is +7.5. The published elo list gave the
    rounded 2597 and +8 (2590 -> 2597 reads +7). It now gives rating and change as kept, ranks by
    them (2597.4 before 2597.2, both stored 2597), and the FIDE list stays in integers."""
    db = build_store(tmp_path / "s.duckdb")
    rows = [  # player, list, rating, rating_exact, games, change, change_exact
        (1, JAN, 2590, "2589.7", 2, 10, "10.2"), (1, FEB, 2597, "2597.2", 1, 8, "7.5"),
        (2, JAN, 2597, "2597.4", 1, 0, "0.4"), (2, FEB, 2597, "2597.4", 0, None, None),
        (3, FEB, 1500, "1500.0", 1, 0, "0.0"),
    ]  # fmt: skip
    with duckdb.connect(str(db)) as c:
        for pid, ld, r, rx, g, ch, chx in rows:
            c.execute(
                "INSERT INTO rating_lists (system, list_date, player_id, rating, rating_exact, games, k, change,"
                " change_exact, source) VALUES ('elo', ?, ?, ?, ?, ?, 20, ?, ?, 'computed')",
                [ld, pid, r, rx, g, ch, chx],
            )
    con = duckdb.connect(str(db), read_only=True)
    try:
        paths = write_list(con, "elo", FEB, tmp_path / "out", ["csv", "txt", "html"])
        fide = write_list(con, "fide", FEB, tmp_path / "fide", ["csv"])
    finally:
        con.close()
    csv, txt, html = (p.read_text(encoding="utf-8") for p in paths)
    got = pl.read_csv(io.StringIO(csv), infer_schema_length=0).select("rank", "name", "rating", "change")
    assert got.rows() == [
        ("1", "Bravo, Bruno", "2597.4", None),
        ("2", "Alpha, Anna", "2597.2", "7.5"),
        ("3", "Charlie, Chloé", "1500.0", "0.0"),
    ]
    lines = txt.splitlines()
    col = lines[0].index("FEB24")
    assert lines[0][col + 8 : col + 11] == "Gms"  # the rating column is 8 wide: 2597.4 never touches Gms
    assert [ln[col : col + 8] for ln in lines[1:]] == ["2597.4  ", "2597.2  ", "1500.0  "]
    data = json.loads(html.split('id="list-data"', 1)[1].split(">", 1)[1].split("</script>", 1)[0])
    keys = [k for k, _, _ in html_columns("elo")]
    at = keys.index("rating"), keys.index("change")
    assert [(r[at[0]], r[at[1]]) for r in data] == [("2597.4", None), ("2597.2", "7.5"), ("1500.0", "0.0")]
    assert "2096," in fide[0].read_text(encoding="utf-8")  # FIDE: integers as before


def test_diff_takes_a_list_month_as_publish_list_date_does(tmp_path: Path) -> None:
    """`--diff 2024-01 2024-02` named two files that did not exist, where `--list-date 2024-01` and
    `rate --through 2024-01` read a month (hostile tester); it now compares the lists of those
    months, as the full dates do, and names the file by them."""
    db = build_store(tmp_path / "s.duckdb")
    runner = CliRunner()
    by_day = runner.invoke(
        app, ["publish", "--db", str(db), "--out", str(tmp_path / "d"), "--diff", "2024-01-01", "2024-02-01"]
    )
    by_month = runner.invoke(
        app, ["publish", "--db", str(db), "--out", str(tmp_path / "m"), "--diff", "2024-01", "2024-02"]
    )
    assert by_month.exit_code == 0, by_month.output
    assert "1 new, 3 changed, 1 delisted, 1 dropped" in by_month.output
    name = "diff_fide_2024-01-01_2024-02-01.csv"
    assert (tmp_path / "m" / name).read_bytes() == (tmp_path / "d" / name).read_bytes()
    assert by_day.exit_code == 0, by_day.output
    # a side of that shape that no list can have is a usage error naming the option, not a missing file
    bad = runner.invoke(app, ["publish", "--db", str(db), "--out", str(tmp_path / "x"), "--diff", "2024-13", "2024-02"])
    assert bad.exit_code == 2 and "--diff: '2024-13' is no day of the calendar" in bad.output, bad.output
    assert not (tmp_path / "x").exists()


def test_a_date_without_a_list_names_the_nearest_lists(tmp_path: Path) -> None:
    """`publish --list-date 2011-02` of a system rated by tournament (lists dated by the events'
    last days, 2011-02-28) said only 'no rating list ... dated 2011-02-01' (hostile tester); the
    line now names the lists nearest to the date asked. A usage error (exit 2), as `compare`
    answers it, refused before the output folder is touched (it was left a lock and a ledger)."""
    db = build_store(tmp_path / "s.duckdb")  # lists of 2024-01-01 and 2024-02-01
    runner = CliRunner()
    for asked, near in (("2024-01-15", "2024-01-01, 2024-02-01"), ("2024-03", "2024-02-01")):
        res = runner.invoke(app, ["publish", "--db", str(db), "--out", str(tmp_path / "o"), "--list-date", asked])
        assert res.exit_code == 2, res.output
        assert not (tmp_path / "o").exists()
        assert "no rating list for system 'fide' dated " in res.output and f"; its nearest: {near}" in res.output
    res = runner.invoke(app, ["publish", "--db", str(db), "--out", str(tmp_path / "d"), "--diff", "2023-12", "2024-01"])
    assert res.exit_code == 2 and "; its nearest: 2024-01-01" in res.output, res.output
    # the title names the lists compared, as the file name does, whatever the sides' spelling
    res = runner.invoke(
        app, ["publish", "--db", str(db), "--out", str(tmp_path / "t"), "--diff", " 2024-01\n", "2024-02"]
    )
    assert res.exit_code == 0 and "fide: 2024-01-01 -> 2024-02-01" in res.output, res.output
    for extra in (["--all"], ["--full"], ["--list-date", "2024-01"]):  # ignored in silence before
        res = runner.invoke(
            app, ["publish", "--db", str(db), "--out", str(tmp_path / "x"), "--diff", "2024-01", "2024-02", *extra]
        )
        assert res.exit_code == 2 and "--diff compares the two lists it names" in res.output, res.output
        assert not (tmp_path / "x").exists()
