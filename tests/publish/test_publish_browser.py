"""The published HTML pages in a real browser (Debian's chromium, headless).

Checks that the page loads offline, that its JavaScript ran (the visible-row counter is
filled by the script, `body[data-ready]` set) and that the table holds the expected rows,
also after a search carried in the URL (`#q=`). Skips when chromium is not installed.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from elopipe.publish import write_list
from elopipe.publish.reports import write_report
from tests.helpers import chromium
from tests.helpers.chromium import CHROMIUM, SKIP_REASON
from tests.helpers.publish_store import FEB, build_store

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)


def _visible_rows(dom: str, table_id: str) -> list[str]:
    body = dom.split(f'id="{table_id}"', 1)[1].split("</tbody>", 1)[0]
    rows = re.findall(r"<tr ([^>]*)>", body)
    return [r for r in rows if "display: none" not in r]


@pytest.fixture
def pages(tmp_path: Path) -> dict[str, Path]:
    db = build_store(tmp_path / "s.duckdb")
    con = duckdb.connect(str(db), read_only=True)
    try:
        lst = write_list(con, "fide", FEB, tmp_path / "out", ["html"])[0]
        rep = next(p for p in write_report(con, 1, "fide", tmp_path / "out") if p.suffix == ".html")
    finally:
        con.close()
    return {"list": lst, "report": rep}


def test_list_page_renders_all_rows(tmp_path: Path, pages: dict[str, Path]) -> None:
    res = chromium.run(tmp_path, pages["list"].as_uri(), "--dump-dom")
    assert res.returncode == 0, res.stderr[-2000:]
    dom = res.stdout
    assert 'data-ready="1"' in dom, "the page's script did not run"
    assert re.search(r'id="shown-count">4<', dom), "counter not filled by the script"
    assert len(_visible_rows(dom, "rating-list")) == 4
    assert "2024-02-01" in dom


def test_list_page_search_filters_rows(tmp_path: Path, pages: dict[str, Path]) -> None:
    res = chromium.run(tmp_path, pages["list"].as_uri() + "#q=chloe", "--dump-dom")
    assert res.returncode == 0, res.stderr[-2000:]
    visible = _visible_rows(res.stdout, "rating-list")
    # accent-insensitive search: 'chloe' finds 'Charlie, Chloé' only
    assert len(visible) == 1 and "Chloé" in visible[0]
    assert re.search(r'id="shown-count">1<', res.stdout)


def test_report_page_renders(tmp_path: Path, pages: dict[str, Path]) -> None:
    res = chromium.run(tmp_path, pages["report"].as_uri(), "--dump-dom")
    assert res.returncode == 0, res.stderr[-2000:]
    assert len(_visible_rows(res.stdout, "performance")) == 4
    assert len(_visible_rows(res.stdout, "crosstable")) == 4


def test_list_page_screenshot(tmp_path: Path, pages: dict[str, Path]) -> None:
    shot = tmp_path / "list.png"
    res = chromium.run(tmp_path, pages["list"].as_uri(), f"--screenshot={shot}", "--window-size=1200,500")
    assert res.returncode == 0, res.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_long_list_is_paged(tmp_path: Path) -> None:
    db = build_store(tmp_path / "s.duckdb")
    rw = duckdb.connect(str(db))
    rw.execute(
        "INSERT INTO players (player_id, fide_id, name, name_key) "
        "SELECT 1000 + i, 5000000 + i, 'Player ' || i, 'player ' || i FROM range(2000) t(i)"
    )
    rw.execute(
        "INSERT INTO rating_lists (system, list_date, player_id, rating, games) "
        "SELECT 'fide', DATE '2024-02-01', 1000 + i, 1400 + i % 500, 0 FROM range(2000) t(i)"
    )
    rw.close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        page = write_list(con, "fide", FEB, tmp_path / "out", ["html"])[0]
    finally:
        con.close()
    res = chromium.run(tmp_path, page.as_uri(), "--dump-dom")
    assert res.returncode == 0, res.stderr[-2000:]
    # 2004 players: the first page shows 100 rows, the counter all of them
    assert len(_visible_rows(res.stdout, "rating-list")) == 100
    assert re.search(r'id="shown-count">2004<', res.stdout)
    assert re.search(r'id="page-info">1–100 of 2004<', res.stdout)
    res = chromium.run(tmp_path, page.as_uri() + "#q=player%20199", "--dump-dom")
    # 'Player 199' and 'Player 1990' ... 'Player 1999'
    assert len(_visible_rows(res.stdout, "rating-list")) == 11


HOSTILE_NAMES = {
    2: "<!--<script>",
    7: "</script><script>document.body.setAttribute('data-pwned','1')</script>",
    3: "Amp & <b>bold</b> ]]> \u2028 end",
}


def test_hostile_names_show_as_text_on_every_page(tmp_path: Path) -> None:
    """A name that opens an HTML comment or a script inside the embedded JSON (`<!--<script>`
    puts the parser in the script-data escape state, which swallows the closing tag) must not
    blank the list: every row is shown, the name as literal text, and no injected script runs."""
    from elopipe.publish.history import write_player_page
    from elopipe.publish.outputs import write_index

    db = build_store(tmp_path / "s.duckdb")
    rw = duckdb.connect(str(db))
    for pid, name in HOSTILE_NAMES.items():
        rw.execute("UPDATE players SET name = ? WHERE player_id = ?", [name, pid])
    rw.close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        lst = write_list(con, "fide", FEB, tmp_path / "out", ["html"])[0]
        rep = next(p for p in write_report(con, 1, "fide", tmp_path / "out") if p.suffix == ".html")
        player = next(
            p for p in write_player_page(con, 2, "fide", tmp_path / "out" / "players" / "fide") if p.suffix == ".html"
        )
        index = write_index(con, "fide", tmp_path / "out")
    finally:
        con.close()

    res = chromium.run(tmp_path, lst.as_uri(), "--dump-dom")
    assert res.returncode == 0, res.stderr[-2000:]
    dom = res.stdout
    assert 'data-ready="1"' in dom, "the page's script did not run"
    assert re.search(r'id="shown-count">4<', dom), "the list script did not fill the table"
    rows = _visible_rows(dom, "rating-list")
    assert len(rows) == 4
    cells = re.findall(r"<td[^>]*>(?:<a [^>]*>)?([^<]*)", dom.split('id="rating-list"', 1)[1])
    assert "&lt;!--&lt;script&gt;" in cells
    assert "&lt;/script&gt;&lt;script&gt;document.body.setAttribute('data-pwned','1')&lt;/script&gt;" in cells
    assert "Amp &amp; &lt;b&gt;bold&lt;/b&gt; ]]&gt; \u2028 end" in cells
    assert "data-pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]

    for page, table in ((rep, "performance"), (player, "tournaments")):
        res = chromium.run(tmp_path, page.as_uri(), "--dump-dom")
        assert res.returncode == 0, res.stderr[-2000:]
        assert 'data-ready="1"' in res.stdout, f"{page.name}: the page's script did not run"
        assert "&lt;!--&lt;script&gt;" in res.stdout
        assert "data-pwned" not in res.stdout.split("<body", 1)[1].split(">", 1)[0]
        assert _visible_rows(res.stdout, table)
    res = chromium.run(tmp_path, index.as_uri(), "--dump-dom")
    assert res.returncode == 0, res.stderr[-2000:]
    assert 'data-ready="1"' in res.stdout and ">&lt;!--&lt;script&gt;</a>" in res.stdout
