"""Printing the published pages in a real browser (Debian's chromium, headless, "Print to PDF").

A paged rating list prints every row, not only the page on screen: 1,200 players (12 pages of
100 on screen) fill some 29 printed pages, where the first 100 rows alone fill 3. Skips when
chromium is not installed.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import duckdb
import pytest

from elopipe.publish import write_list
from elopipe.store.schema import ensure_schema
from tests.helpers import chromium
from tests.helpers.chromium import CHROMIUM, SKIP_REASON

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)


def _print_pages(tmp_path: Path, page: Path) -> int:
    """Pages of the PDF chromium prints of `page`."""
    pdf = tmp_path / "print.pdf"
    chromium.run(tmp_path, page.as_uri(), f"--print-to-pdf={pdf}")
    return len(re.findall(rb"/Type\s*/Page[^s]", pdf.read_bytes()))


@pytest.mark.slow
def test_a_paged_list_prints_all_its_rows(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    con = duckdb.connect(str(db))
    ensure_schema(con)
    con.execute(
        "INSERT INTO players (player_id, name, name_key) SELECT i, 'Player ' || i, 'p' || i FROM range(1, 1201) t(i)"
    )
    con.execute(
        "INSERT INTO rating_lists (system, list_date, player_id, rating, games, source)"
        " SELECT 'fide', DATE '2024-02-01', i, 1000 + i, 0, 'computed' FROM range(1, 1201) t(i)"
    )
    con.close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        page = write_list(con, "fide", dt.date(2024, 2, 1), tmp_path / "out", ["html"])[0]
    finally:
        con.close()
    assert "per page" in page.read_text(encoding="utf-8")  # on screen: 100 rows a page
    assert _print_pages(tmp_path, page) > 20
