"""A store of two real files of `../shared/data/pgn`: the FIDE Candidates 2022 (`wchcand22.pgn`) and
`Carlsen.pgn`, which holds some earlier games of its players but not all of them, so the store's
lists drift from FIDE's (issue 25: Firouzja's Ro). The ratings the Candidates file gives are read
from the file here, not from the store."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from tests.helpers.paths import SHARED_DATA

CANDIDATES = SHARED_DATA / "pgn" / "wchcand22.pgn"
FILES = [SHARED_DATA / "pgn" / "Carlsen.pgn", CANDIDATES]
EVENT = "FIDE Candidates 2022"
FIROUZJA = "Firouzja, Alireza"


def file_ratings() -> dict[str, int]:
    """{player name: the Elo tag the Candidates file gives him}, from the file's text."""
    out: dict[str, int] = {}
    for game in CANDIDATES.read_text(encoding="utf-8").split("\n\n[Event "):
        tags = dict(re.findall(r'^\[(\w+) "([^"]*)"\]', game, re.M))
        for side in ("White", "Black"):
            if tags.get(f"{side}Elo", "").isdigit():
                out[tags[side]] = int(tags[f"{side}Elo"])
    return out


def ingested(folder: Path) -> Path:
    """A store of `FILES`, ingested once per folder; callers copy it before rating."""
    from elopipe.ingest.driver import ingest_paths

    db = folder / "candidates.duckdb"
    if not db.exists():
        assert ingest_paths(FILES, db).exit_code == 0
    return db


def copy_of(db: Path, name: str) -> Path:
    """A copy of the store `db` named `name` beside it (so that each test rates its own)."""
    target = db.parent / name
    shutil.copyfile(db, target)
    return target
