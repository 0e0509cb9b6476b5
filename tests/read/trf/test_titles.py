"""FIDE title codes in every form the lists, FIDE's XML, TRF and PGN files write (issue 15, item 3):
stored as GM IM FM CM WGM WIM WFM WCM."""

from __future__ import annotations

from pathlib import Path

import pytest

from elopipe.official.list_import import import_list
from elopipe.read.pgn.reader import read_pgn
from elopipe.read.trf.codes import TITLES
from tests.helpers.official_lists import STD, fixed, memory_store

CANONICAL = {"GM", "IM", "FM", "CM", "WGM", "WIM", "WFM", "WCM"}


@pytest.mark.parametrize(
    ("written", "stored"),
    [("g", "GM"), ("m", "IM"), ("f", "FM"), ("c", "CM"), ("wg", "WGM"), ("wm", "WIM"), ("wf", "WFM"),
     ("wc", "WCM"), ("WG", "WGM"), ("WM", "WIM"), ("WF", "WFM"), ("WC", "WCM"), ("GM", "GM"), ("WCM", "WCM"),
     ("gm", "GM")],
)  # fmt: skip
def test_a_list_title_in_any_form_is_stored_as_the_fide_title(written, stored, tmp_path: Path) -> None:
    # the women's title column too (FIDE's lists and XML write WG/WM/WF/WC there)
    rows = [["25000001", "Doe, Jane", "USA", "F", written, written, "", "", "2150", "1", "20", "2001", "w"]]
    f = tmp_path / "standard_mar24frl.txt"
    f.write_text(fixed(STD, rows), encoding="utf-8")
    con = memory_store()
    import_list(con, f, "fide")
    assert con.execute("SELECT title, w_title FROM official_lists").fetchone() == (stored, stored)
    assert con.execute("SELECT title FROM players").fetchone() == (stored,)


def test_a_title_that_is_no_fide_title_is_kept_as_written(tmp_path: Path) -> None:
    rows = [["25000001", "Doe, Jane", "USA", "F", "", "", "IA", "", "2150", "1", "20", "2001", "w"]]
    f = tmp_path / "standard_mar24frl.txt"
    f.write_text(fixed(STD, rows), encoding="utf-8")
    con = memory_store()
    import_list(con, f, "fide")
    assert con.execute("SELECT title, w_title, o_title FROM official_lists").fetchone() == (None, None, "IA")


@pytest.mark.parametrize(
    ("written", "stored"),
    [("WC", "WCM"), ("WG", "WGM"), ("wf", "WFM"), ("wm", "WIM"), ("gm", "GM"), ("Im", "IM"), ("WCM", "WCM"),
     ("BOT", "BOT"), ("LM", "LM"), ("M", "M")],
)  # fmt: skip
def test_a_pgn_title_tag_in_any_fide_form_is_the_fide_title(written, stored) -> None:
    text = (
        f'[Event "E"]\n[Date "2024.01.01"]\n[Round "1"]\n[White "A, B"]\n[Black "C, D"]\n'
        f'[WhiteTitle "{written}"]\n[BlackTitle "GM"]\n[Result "1-0"]\n\n1. e4 e5 1-0\n'
    )
    titles = {p.name: p.title for p in read_pgn(text).players}
    assert titles == {"A, B": stored, "C, D": "GM"}


def test_every_form_maps_to_a_fide_title() -> None:
    assert set(TITLES.values()) == CANONICAL
    assert {"G", "M", "F", "C", "WG", "WM", "WF", "WC"} <= TITLES.keys()
