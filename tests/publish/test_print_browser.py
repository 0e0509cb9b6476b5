"""Printing the published pages in a real browser (Debian's chromium, headless, "Print to PDF").

A paged rating list prints every row, not only the page on screen: 1,200 players (12 pages of
100 on screen) fill some 29 printed pages, where the first 100 rows alone fill 3. Skips when
chromium is not installed.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from elopipe.publish import write_list
from elopipe.store.schema import ensure_schema

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed; print test skipped")


def _print_pages(tmp_path: Path, page: Path) -> int:
    """Pages of the PDF chromium prints of `page`."""
    assert CHROMIUM is not None
    pdf = tmp_path / "print.pdf"
    subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'chromium-profile'}",
            f"--print-to-pdf={pdf}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return len(re.findall(rb"/Type\s*/Page[^s]", pdf.read_bytes()))


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
