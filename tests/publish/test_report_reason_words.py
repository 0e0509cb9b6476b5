"""A report says why a game was not rated in words a rating officer understands: Bunratty Masters
2011 (1:30 + 10 from move 1, 100 minutes for 60 moves) showed its 14 players rated 2200 or more
"no rated game: 6 game(s) played, not rated", and games.csv the bare code `below_time_minimum`."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.ingest.driver import ingest_paths
from elopipe.publish.legend import legend
from elopipe.publish.reason_words import REASON_WORDS
from elopipe.store.connect import open_writer
from tests.helpers.paths import SHARED_DATA

BUNRATTY = SHARED_DATA / "trf" / "irl_bunratty_masters_2011_crlf.trf"


@pytest.mark.skipif(not BUNRATTY.exists(), reason="../shared/data is not available")
def test_games_below_the_time_minimum_are_said_so(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest_paths([BUNRATTY], db)
    runner = CliRunner()
    assert runner.invoke(app, ["rate", "--system", "fide", "--db", str(db)]).exit_code == 0
    res = runner.invoke(
        app,
        ["report", "--tournament", "Bunratty", "--db", str(db), "--out", str(tmp_path / "out")],
        env={"COLUMNS": "400"},
    )
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    note = (
        "no rated game: 6 games below the minimum time for 60 moves (B.02 1.3, V2009: 120 minutes when either"
        " player is rated 2200 or more; the rate of play gives less)"
    )
    assert out.count(note) == 14
    assert "game(s) played, not rated" not in out
    # the legend words the code games.csv shows, with the event's rule
    assert "below_time_minimum = the rate of play gives less time than FIDE's minimum (B.02 1.3, V2009: 60 moves" in out
    with open_writer(db) as con:
        codes = {
            r for (r,) in con.execute("SELECT DISTINCT reason FROM rating_changes WHERE reason IS NOT NULL").fetchall()
        }
    assert "below_time_minimum" in codes and codes <= set(REASON_WORDS)


def test_the_legend_words_every_reason_code() -> None:
    text = dict(legend("fide"))["reason"]
    for code in REASON_WORDS:
        assert f"{code} = " in text, code
