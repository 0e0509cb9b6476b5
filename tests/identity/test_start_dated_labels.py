"""One event from two real sources whose round labels are written differently.

The organiser's FIDE Candidates 2022 file writes Round "3"; a database's copy writes round.board
("3.1") and dates every game by the event's start day. A sub-part on one side only is no conflict
for rows with equal moves of at least `EVENT_DATE_PLIES` plies (`game_links.labels_conflict`),
and zero padding ("01") is spelling: each game counts once, whatever order the files came in.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from elopipe.ingest.driver import ingest_paths
from tests.helpers.ingested import ingested
from tests.helpers.paths import SHARED_DATA
from tests.helpers.store_rows import db_rows

ORGANISER = SHARED_DATA / "pgn" / "fide_candidates_2022_madrid_spain.pgn"
DATABASE = SHARED_DATA / "pgn" / "wchcand22.pgn"

needs_data = pytest.mark.skipif(
    not (ORGANISER.exists() and DATABASE.exists()), reason="../shared/data is not available"
)


def _canonical(db: Path) -> int:
    return int(db_rows(db, "SELECT count(*) FROM canonical_games")[0][0])


@needs_data
@pytest.mark.parametrize("order", ["organiser_first", "database_first", "one_batch"])
@pytest.mark.parametrize("padded", [False, True], ids=["labels", "zero_padded"])
def test_the_candidates_from_a_start_dated_database_count_56_games(tmp_path: Path, order: str, padded: bool) -> None:
    text = re.sub(r'^\[Date "[^"]*"\]', '[Date "2022.06.17"]', DATABASE.read_text(encoding="utf-8"), flags=re.M)
    if padded:  # '03.1': the main round written with two digits
        text = re.sub(r'^\[Round "(\d)\.', r'[Round "0\1.', text, flags=re.M)
    start_dated = tmp_path / "in" / "wchcand22_startdated.pgn"
    start_dated.parent.mkdir()
    start_dated.write_text(text, encoding="utf-8")
    # the real files' stores are ingested once per test process (`tests.helpers.ingested`)
    alone = ingested(tmp_path / "alone.duckdb", [DATABASE])
    assert _canonical(alone) == 56
    db = tmp_path / "store.duckdb"
    if order == "one_batch":
        ingest_paths([ORGANISER, start_dated], db)
    elif order == "organiser_first":
        ingest_paths([start_dated], ingested(db, [ORGANISER]))
    else:
        for f in [start_dated, ORGANISER]:
            ingest_paths([f], db)
    assert _canonical(db) == 56
