"""Armageddon games are on no FIDE list (FIDE B.02 (2024), Rapid and Blitz: games where the
players have different times are not rated): the real Norway Chess 2022 armageddon file,
whose name says blitz, is skipped by `fide-blitz` as `not_rated:armageddon`, and its
`rate_of_play` row says why, as a simul's does."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from elopipe.ingest.driver import ingest_paths
from elopipe.publish.participants import skip_reason
from elopipe.rating.run import rate
from tests.helpers.paths import SHARED_DATA

ARMAGEDDON = SHARED_DATA / "pgn" / "norway_chess_2022_armageddon.pgn"

pytestmark = pytest.mark.skipif(not ARMAGEDDON.exists(), reason="../shared/data is not available")


def test_armageddon_games_are_skipped_by_fide_blitz(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest_paths([ARMAGEDDON], db)
    con = duckdb.connect(str(db))
    try:
        rate(con, "fide-blitz")
        skips = con.execute(
            "SELECT reason, sum(n_games) FROM rating_skips WHERE system = 'fide-blitz' GROUP BY 1"
        ).fetchall()
        games = con.execute("SELECT count(*) FROM games").fetchone()
        evidence = con.execute(
            "SELECT rate_class, source, evidence FROM rate_of_play WHERE system = 'fide-blitz'"
        ).fetchall()
        changes = con.execute("SELECT count(*) FROM rating_changes WHERE system = 'fide-blitz'").fetchone()
        said = skip_reason(con, 1, "fide-blitz")
    finally:
        con.close()
    assert games is not None and games[0] == 31
    assert dict(skips) == {"not_rated:armageddon": 31}
    assert evidence == [(None, "name", 'name "10th Norway Armageddon": armageddon')]
    assert changes == (0,)
    # what `report` says of it
    assert said == "an armageddon event (its name says so) is never rated: its players have different times"
