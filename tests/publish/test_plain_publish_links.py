"""A plain `publish` keeps the player links a `publish --full` gave the list page (issue 26, item 7):
it rewrote `lists/<system>_<date>.html` without any link to the player pages in the folder."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish.plan import pending_dates, publish_recorded
from tests.helpers.publish_store import FEB, JAN, build_store


def _links(page: Path) -> set[str]:
    return set(re.findall(r"\.\./players/fide/[^\"'\\\s]+\.html", page.read_text(encoding="utf-8")))


def _publish(db: Path, out: Path, *args: str) -> None:
    res = CliRunner().invoke(app, ["publish", "--system", "fide", "--db", str(db), "--out", str(out), *args])
    assert res.exit_code == 0, res.output


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_store(tmp_path / "s.duckdb")


def test_a_plain_publish_keeps_the_links_of_the_latest_list_page(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _publish(db, out, "--full", "--all")
    page = out / "lists" / f"fide_{FEB.isoformat()}.html"
    full = _links(page)
    assert full  # the top players' pages are linked
    _publish(db, out)
    assert _links(page) == full


def test_a_plain_publish_that_finishes_a_killed_run_keeps_the_links(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    _publish(db, out, "--full", "--all")
    page = out / "lists" / f"fide_{FEB.isoformat()}.html"
    full = _links(page)
    # a run killed while it published both lists: recorded pending, the last page not rewritten
    con = duckdb.connect(str(db), read_only=True)
    try:
        killed = RuntimeError("killed")

        def die(*args: object, **kwargs: object) -> list[Path]:
            raise killed

        with monkeypatch.context() as m:
            m.setattr("elopipe.publish.outputs.publish_outputs", die)
            with pytest.raises(RuntimeError):
                publish_recorded(con, db, "fide", out, [JAN, FEB])
    finally:
        con.close()
    assert pending_dates(out, db, "fide") == {JAN, FEB}
    _publish(db, out)
    assert not pending_dates(out, db, "fide")
    assert _links(page) == full


def test_a_publish_list_by_list_writes_what_one_publish_of_both_writes(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run` publishes only the lists a rate changed: JAN, then FEB once new data came. FEB's
    page must link the pages JAN's publish made (Charlie: in JAN's top 3, 4th on FEB), as one
    publish of both lists does, and those pages must show what changed in between (the list
    page lacked the link, and Charlie's page kept her old title)."""
    monkeypatch.setattr("elopipe.publish.outputs.TOP_PLAYERS", 3)
    step, whole = tmp_path / "step", tmp_path / "whole"
    _publish(db, step, "--full", "--list-date", JAN.isoformat())
    con = duckdb.connect(str(db))
    try:  # what a new file can change: a player's title
        con.execute("UPDATE players SET title = 'WFM' WHERE player_id = 3")
    finally:
        con.close()
    _publish(db, step, "--full", "--list-date", FEB.isoformat())
    _publish(db, whole, "--full", "--all")
    page = Path("lists") / f"fide_{FEB.isoformat()}.html"
    assert any("/3_" in link for link in _links(whole / page))
    assert (step / page).read_bytes() == (whole / page).read_bytes()
    players = sorted(p.relative_to(whole) for p in (whole / "players").rglob("*.html"))
    assert sorted(p.relative_to(step) for p in (step / "players").rglob("*.html")) == players
    for rel in players:
        assert (step / rel).read_bytes() == (whole / rel).read_bytes(), rel


def test_lists_published_in_any_order_link_what_one_publish_of_them_links(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FEB, then JAN: JAN's publish makes Charlie's page (in JAN's top 3, 4th on FEB), so FEB's
    page, published before, must now link it too (a fresh user and a hostile tester found the
    pages depended on the order)."""
    monkeypatch.setattr("elopipe.publish.outputs.TOP_PLAYERS", 3)
    step, whole = tmp_path / "step", tmp_path / "whole"
    _publish(db, step, "--full", "--list-date", FEB.isoformat())
    _publish(db, step, "--full", "--list-date", JAN.isoformat())
    _publish(db, whole, "--full", "--all")
    for page in (Path("lists") / f"fide_{d.isoformat()}.html" for d in (JAN, FEB)):
        assert (step / page).read_bytes() == (whole / page).read_bytes(), page
