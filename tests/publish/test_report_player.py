"""Player history: lookup by ID or name, history rows, chart and page."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish.charts import Series, render_series
from elopipe.publish.history import find_player, history_frame, write_player_page
from tests.helpers.publish_store import FEB, JAN, build_store


@pytest.fixture
def con(tmp_path: Path):
    c = duckdb.connect(str(build_store(tmp_path / "s.duckdb")), read_only=True)
    yield c
    c.close()


def test_find_player(con) -> None:
    assert find_player(con, "100003") == 3  # FIDE ID
    assert find_player(con, "B12345") == 2  # national ID
    assert find_player(con, "4") == 4  # player_id (no such FIDE ID)
    assert find_player(con, "chloé") == 3
    with pytest.raises(LookupError, match="no player matches"):
        find_player(con, "a")  # many names contain an 'a', but it is a word of none


def test_history(con) -> None:
    h = history_frame(con, 3, "fide")
    assert h["list_date"].to_list() == [JAN, FEB]
    assert h["rating"].to_list() == [1500, 1554]
    assert h["change"].to_list() == [0, 54]
    assert h["tournaments"].to_list()[1] == ["Spring Open 2024"]


def test_chart_formats() -> None:
    png = render_series([Series([JAN, FEB], [1500, None])], "x").data
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    svg = render_series([Series([JAN, FEB], [1500, 1554])], "x", fmt="svg").data
    assert b"<svg" in svg[:500]
    with pytest.raises(ValueError):
        render_series([Series([JAN], [1, 2])], "x")
    with pytest.raises(ValueError):
        render_series([Series([JAN], [1])], "x", fmt="gif")


def test_player_page_embeds_chart(con, tmp_path: Path) -> None:
    paths = write_player_page(con, 3, "fide", tmp_path)
    assert [p.suffix for p in paths] == [".png", ".html"]
    html = paths[1].read_text(encoding="utf-8")
    assert "data:image/png;base64," in html and "Spring Open 2024" in html


def test_player_command(tmp_path: Path) -> None:
    db = build_store(tmp_path / "s.duckdb")
    res = CliRunner().invoke(
        app, ["player", "Charlie", "--db", str(db), "--out", str(tmp_path / "o"), "--chart", "svg"]
    )
    assert res.exit_code == 0, res.output
    assert "1554" in res.output and "Spring Open 2024" in res.output
    assert (tmp_path / "o" / "players" / "fide" / "3_charlie-chloe.svg").exists()


def test_a_name_many_players_match_says_how_many_are_not_listed(tmp_path: Path) -> None:
    from elopipe.ingest.driver import ingest_paths
    from tests.helpers.paths import SHARED_DATA

    db = tmp_path / "many.duckdb"
    ingest_paths([SHARED_DATA / "trf" / "irl_bunratty_minor_2011_crlf_103players.trf"], db)
    c = duckdb.connect(str(db))
    try:  # a family name every player shares: a name matches whole words
        c.execute("UPDATE players SET name = name || ' Kelly'")
        matching = c.execute("SELECT count(*) FROM players").fetchall()[0][0]
        assert matching > 20
        with pytest.raises(LookupError) as info:
            find_player(c, "kelly")
    finally:
        c.close()
    said = str(info.value)
    assert said.startswith(f"{matching} players match 'kelly', give the id: ")
    assert said.count(": ") == 21 and said.endswith(f"; and {matching - 20} more (give more of the name)")
