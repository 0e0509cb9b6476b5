"""A publish removes the pages of an event a corrected file replaced (noted at stop 35: the index
of ../shared/data counted 133 reports against 131 after a correction), and says so; a file the
user edited since stays, and a folder another store wrote is left alone."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from tests.helpers.publish_store import build_store

TABLES = ("tournaments", "tournament_players", "games", "unplayed_rounds", "rating_changes", "tournament_ratings")


def _publish(db: Path, out: Path) -> str:
    args = ["publish", "--system", "fide", "--db", str(db), "--out", str(out), "--full", "--all"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return res.output


def _replace_event(db: Path) -> None:
    """What a correction leaves: the event under a new id, the old one gone."""
    con = duckdb.connect(str(db))
    try:
        for table in TABLES:
            con.execute(f"UPDATE {table} SET tournament_id = 7 WHERE tournament_id = 1")
    finally:
        con.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_store(tmp_path / "s.duckdb")


def test_the_pages_of_a_replaced_event_are_removed_with_a_message(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _publish(db, out)
    old = sorted((out / "reports" / "fide").glob("1_*"))
    assert old
    _replace_event(db)
    said = _publish(db, out)
    assert not [p for p in old if p.exists()]
    assert sorted((out / "reports" / "fide").glob("7_*"))
    assert "no longer holds" in said and old[0].name in said
    index = (out / "index-fide.html").read_text(encoding="utf-8")
    assert old[0].name not in index


def test_the_report_of_an_event_rated_no_more_is_removed(db: Path, tmp_path: Path) -> None:
    """The same event read from a second file: its games now count under the second one's id,
    the first stays in the store, rated no more. Its report stayed, with the old figures, linked
    from the index (hostile tester: Norway Chess 2022 from two files, via `run`)."""
    out = tmp_path / "out"
    _publish(db, out)
    old = sorted((out / "reports" / "fide").glob("1_*"))
    assert old
    con = duckdb.connect(str(db))
    try:
        con.execute(
            "INSERT INTO tournaments SELECT * REPLACE (7 AS tournament_id) FROM tournaments WHERE tournament_id = 1"
        )
        for table in TABLES[1:]:
            con.execute(f"UPDATE {table} SET tournament_id = 7 WHERE tournament_id = 1")
        assert con.execute("SELECT count(*) FROM tournaments WHERE tournament_id = 1").fetchone() == (1,)
    finally:
        con.close()
    said = " ".join(_publish(db, out).split())
    assert not [p for p in old if p.exists()]
    assert sorted((out / "reports" / "fide").glob("7_*"))
    assert "no longer holds or rates" in said and old[0].name in said
    assert old[0].name not in (out / "index-fide.html").read_text(encoding="utf-8")


def test_a_report_edited_by_hand_stays(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _publish(db, out)
    page = next((out / "reports" / "fide").glob("1_*.html"))
    page.write_text(page.read_text(encoding="utf-8") + "<!-- my note -->", encoding="utf-8")
    _replace_event(db)
    _publish(db, out)
    assert page.read_text(encoding="utf-8").endswith("<!-- my note -->")


def test_a_folder_two_stores_published_into_loses_no_file(db: Path, tmp_path: Path) -> None:
    """Page ids are per store: a second store's publish (twice, so that the ledger names it last)
    removed the first store's reports as gone and its player pages as renamed (a hostile tester)."""
    out = tmp_path / "out"
    _publish(db, out)
    before = sorted(p for p in out.rglob("*") if p.is_file() and not p.name.startswith(".elopipe"))
    other = build_store(tmp_path / "other.duckdb")
    _replace_event(other)
    con = duckdb.connect(str(other))
    try:  # player 1 of the other store is another person: his page has another name
        con.execute("UPDATE players SET name = 'Zulu, Zed' WHERE player_id = 1")
    finally:
        con.close()
    for _ in range(2):
        said = _publish(other, out)
        assert "no longer holds" not in said
    assert [p for p in before if not p.exists()] == []
    _publish(db, out)  # and back: the first store removes nothing of the other's either
    assert sorted((out / "players" / "fide").glob("1_zulu*"))


def test_a_manifest_key_edited_by_hand_is_ignored(db: Path, tmp_path: Path) -> None:
    """The manifest only saves work: a key that is no page id (a superscript digit, a number
    beyond any id) stopped every publish into the folder with a Python error."""
    out = tmp_path / "out"
    _publish(db, out)
    path = out / ".elopipe-manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["inputs"]["report:fide:\u00b2"] = ["x", []]
    data["inputs"]["player:fide:99999999999999999999999"] = ["x", []]
    path.write_text(json.dumps(data), encoding="utf-8")
    said = _publish(db, out)
    assert "Error" not in said and "invalid literal" not in said
