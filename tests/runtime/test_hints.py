"""The commands a message suggests name the store (`--db`) unless it is the default one: copied
and pasted, `elopipe sql ... v_ingest_errors` queried the default store, not the one ingested."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.runtime.hints import command_hint


def test_a_hint_names_a_store_that_is_not_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert command_hint("rate", None) == "elopipe rate"
    assert command_hint("rate", "elopipe.duckdb") == "elopipe rate"
    assert command_hint("rate", tmp_path / "elopipe.duckdb") == "elopipe rate"
    assert command_hint("rate", "o.duckdb") == "elopipe rate --db o.duckdb"
    assert command_hint("scenarios show z", "my store.duckdb") == "elopipe scenarios show z --db 'my store.duckdb'"


def test_ingest_details_name_the_store(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pgn"
    bad.write_bytes(b"garbage\x00\x01 not a pgn\n")  # rejected: the problems table and its Details line
    db = tmp_path / "o.duckdb"
    res = CliRunner().invoke(app, ["ingest", str(bad), "--db", str(db)])
    details = [ln for ln in res.output.splitlines() if ln.startswith("Details:")]
    query = "SELECT path, line, game_index, message FROM v_ingest_errors WHERE severity IN ('error', 'warning')"
    assert details == [f'Details: elopipe sql "{query} AND file_id = 1" --db {db}']
