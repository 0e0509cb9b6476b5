"""The publish stage of `run` and `watch` says the line `elopipe publish` says of a list holding
two players suspected to be one person (`publish.list_suspects`), once per system that published;
a run that published no list reads no player for it. Under the session's Prefect harness."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.jobs.requests import PublishListsRequest
from tests.publish.test_list_suspects import _game

pytestmark = pytest.mark.usefixtures("prefect_harness")

LINE = (
    "publish: fide: the list of 2023-06-01 may hold a player twice: 1 pair of players on it is suspected to be"
    " one person ('Svidler,P' / 'Svidler, Peter'); `elopipe players suspects --db {db}` gives the evidence,"
    " `elopipe players merge --db {db}` joins a pair"
)


def _rated_store(tmp_path: Path) -> str:
    short = tmp_path / "short.pgn"
    short.write_text(_game("Svidler,P", "Aronian,L", 3, "1-0") + _game("Svidler,P", "Giri,A", 4, "1/2-1/2"))
    full = tmp_path / "full.pgn"
    full.write_text(
        _game("Svidler, Peter", "Karjakin, Sergey", 17, "0-1", "4102142")
        + _game("Svidler, Peter", "Nepomniachtchi, Ian", 18, "1-0", "4102142")
    )
    db = str(tmp_path / "s.duckdb")
    for args in (["ingest", str(short), str(full)], ["rate", "--system", "fide"]):
        assert CliRunner().invoke(app, [*args, "--db", db]).exit_code == 0
    return db


def test_the_publish_stage_says_the_suspects_of_the_list_it_published(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    import elopipe.publish.list_suspects as list_suspects
    from elopipe.identity.suspects import suspects
    from flows.publish import publish

    db, out = _rated_store(tmp_path), tmp_path / "out"
    reads: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        reads.append(1)
        return suspects(*args, **kwargs)

    monkeypatch.setattr(list_suspects, "suspects", counted)
    with caplog.at_level("INFO", logger="elopipe.stages"):
        publish(PublishListsRequest(db, ("fide", "fide-rapid"), str(out), None))
    lines = [r.getMessage() for r in caplog.records if r.name == "elopipe.stages"]
    assert [line for line in lines if "may hold a player twice" in line] == [LINE.format(db=db)]
    assert reads == [1]  # one read of the players, whatever the number of systems
    caplog.clear()
    with caplog.at_level("INFO", logger="elopipe.stages"):  # nothing new: nothing published, nothing read
        publish(PublishListsRequest(db, ("fide",), str(out), {"fide": []}))
    lines = [r.getMessage() for r in caplog.records if r.name == "elopipe.stages"]
    assert f"publish: fide: unchanged -> {out}" in lines
    assert not [line for line in lines if "may hold a player twice" in line]
    assert reads == [1]
