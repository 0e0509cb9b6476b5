"""Online events are not rated by the FFE systems (over-the-board play only), but generic Elo rates them."""

import duckdb

from elopipe.ingest.driver import ingest_paths
from elopipe.rating.run import rate
from tests.helpers.paths import REPO

TRF = REPO.parent / "shared" / "data" / "trf"


def test_lichess_export_is_skipped_by_ffe_and_rated_by_generic_elo(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest_paths([TRF / "lichess_swiss_2020_05_mai_5plus0_13players.trf"], db)
    con = duckdb.connect(str(db))
    for system in ("ffe", "ffe-rapid"):
        rate(con, system)
    # '5 Plus 0' in its name makes it a blitz event (`rate_evidence`): generic Elo rates it as blitz
    rate(con, "elo", rate_class="blitz")
    skips = con.execute("SELECT system, reason FROM rating_skips ORDER BY system").fetchall()
    counted = dict(
        con.execute("SELECT system, count(*) FILTER (WHERE counted) FROM rating_changes GROUP BY system").fetchall()
    )
    con.close()
    assert ("ffe-rapid", "online") in skips or ("ffe", "online") in skips
    assert not counted.get("ffe") and not counted.get("ffe-rapid")
    assert counted.get("elo", 0) > 0
