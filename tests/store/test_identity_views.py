"""The views identity reads the tables of higher layers through (`v_rated_sides` over rating's
`rating_changes`, `v_official_entries` over official's `official_lists`): their columns, and the
rows they give."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from tests.helpers.store_build import build_store
from tests.helpers.store_rows import db_rows

FEB, MAR = dt.date(2024, 2, 1), dt.date(2024, 3, 1)


def _columns(db: Path, view: str) -> list[str]:
    return [r[0] for r in db_rows(db, f"DESCRIBE {view}")]


def test_rated_sides_gives_each_rating_change_row_s_sides(tmp_path: Path) -> None:
    db = build_store(
        tmp_path,
        rating_changes=[
            {"system": "fide", "list_date": FEB, "tournament_id": 1, "game_id": 7, "player_id": 1,
             "opponent_id": 2, "ro": 2100, "rc": 1900, "score": 1, "counted": True},
            {"system": "fide", "list_date": FEB, "tournament_id": 1, "game_id": 7, "player_id": 2,
             "opponent_id": 1, "ro": 1900, "rc": 2100, "score": 0, "counted": True},
            {"system": "ffe", "list_date": MAR, "tournament_id": 1, "game_id": 8, "player_id": 3,
             "opponent_id": None, "score": 0.5, "counted": False, "reason": "unrated_opponent"},
        ],
    )  # fmt: skip
    assert _columns(db, "v_rated_sides") == ["system", "list_date", "game_id", "player_id", "opponent_id"]
    assert db_rows(db, "SELECT * FROM v_rated_sides ORDER BY system, player_id") == [
        ("ffe", MAR, 8, 3, None),
        ("fide", FEB, 7, 1, 2),
        ("fide", FEB, 7, 2, 1),
    ]


def test_official_entries_gives_the_linked_rows_only(tmp_path: Path) -> None:
    db = build_store(
        tmp_path,
        official_lists=[
            {"system": "fide", "list_date": FEB, "fide_id": 1503014, "name": "Carlsen, Magnus", "federation": "NOR",
             "sex": "M", "title": "GM", "rating": 2830, "birth_year": 1990, "player_id": 5, "source_file": "a.txt"},
            {"system": "fide", "list_date": FEB, "fide_id": 25000001, "name": "Doe, Jane", "w_title": "WFM",
             "rating": 1900, "player_id": None, "source_file": "a.txt"},
        ],
    )  # fmt: skip
    assert _columns(db, "v_official_entries") == [
        "player_id", "system", "list_date", "name", "title", "w_title", "federation", "sex", "birth_year",
    ]  # fmt: skip
    assert db_rows(db, "SELECT * FROM v_official_entries") == [
        (5, "fide", FEB, "Carlsen, Magnus", "GM", None, "NOR", "M", 1990)
    ]


def test_identity_reads_rating_and_official_tables_only_through_the_views() -> None:
    """The import contracts cannot see SQL: identity's modules name `rating_changes` and
    `official_lists` in no read; the one write is `decisions` re-pointing a merged player's
    official rows (docs/architecture.md)."""
    import re

    from tests.helpers.paths import REPO

    reads = re.compile(r"\b(FROM|JOIN)\s+(rating_changes|official_lists)\b", re.IGNORECASE)
    writes = re.compile(r"\b(UPDATE|INSERT INTO|DELETE FROM)\s+(rating_changes|official_lists)\b", re.IGNORECASE)
    found, written = [], []
    for path in sorted((REPO / "elopipe" / "identity").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        found += [(path.name, m.group(0)) for m in reads.finditer(text)]
        written += [(path.name, m.group(0)) for m in writes.finditer(text)]
    assert found == []
    assert sorted(set(written)) == [("decisions.py", "UPDATE official_lists")]
