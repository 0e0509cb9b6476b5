"""A FIDE run counts and dates the lists the store holds: the engine also computes the lists of the
periods before anyone is rated (the U-19 All Ireland 2010 of the shared TRF: rows, nobody rated),
which hold no row; `rate` said `173 lists (2010-05-01 ..` and `run` `168 lists changed (2010-05-01 ..`
of a store holding 167 lists from 2011-05-01."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from elopipe.ingest.driver import ingest_paths
from elopipe.rating.fide import windows
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
from tests.helpers.paths import SHARED_DATA

TRF = SHARED_DATA / "trf"
U19 = TRF / "irl_u19_all_ireland_2010_irregular_rows.trf"  # April 2010: nobody rated
BUNRATTY = TRF / "irl_bunratty_masters_2011_crlf.trf"  # February 2011: the first list with a player, May 2011
GALWAY = TRF / "irl_galway_major_2011_partial_birthdates.trf"  # September-October 2011

pytestmark = pytest.mark.skipif(not TRF.exists(), reason="../shared/data is not available")


def _stored(db: Path) -> list[dt.date]:
    with open_writer(db) as con:
        return [
            d
            for (d,) in con.execute(
                "SELECT DISTINCT list_date FROM rating_lists WHERE system = 'fide' ORDER BY 1"
            ).fetchall()
        ]


@pytest.mark.parametrize("window", [None, "1"])
def test_the_summary_counts_the_lists_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: str | None
) -> None:
    if window:
        monkeypatch.setenv(windows.WINDOW_SETTING, window)
    db = tmp_path / "s.duckdb"
    ingest_paths([U19, BUNRATTY], db)
    with open_writer(db) as con:
        first = rate(con, "fide")
    stored = _stored(db)
    assert stored[0] == dt.date(2011, 5, 1)
    assert (first.lists, first.first_list, first.last_list) == (len(stored), stored[0], stored[-1])
    assert first.changed_lists == stored and first.lists_written == len(stored)
    assert first.first_changed == stored[0]
    # a run resumed after a later event: the same count of the lists stored
    ingest_paths([GALWAY], db)
    with open_writer(db) as con:
        again = rate(con, "fide")
    stored = _stored(db)
    assert (again.lists, again.first_list, again.last_list) == (len(stored), stored[0], stored[-1])
    assert again.changed_lists and set(again.changed_lists) <= set(stored)
