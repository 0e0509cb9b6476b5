"""Issue 25, section 4: `rate` names the players whose Ro drifted from their file's rating and what
fixes it; `--ro-from file` starts each event from the organiser's file; the policy is recorded with
the run and in the period digest, so that a change re-rates. On the real FIDE Candidates 2022 file
rated beside `Carlsen.pgn` (`tests.helpers.candidates`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.rating.summary import RO_MARK_POINTS
from tests.helpers.candidates import EVENT, FIROUZJA, copy_of, file_ratings, ingested


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ingested(tmp_path_factory.mktemp("cand"))


@pytest.fixture(scope="module")
def rated(store: Path) -> tuple[Path, str]:
    """The store rated once under the default policy (the list in force), and what `rate` said:
    the first step of the first two tests, made once (each test rates its own copy further)."""
    db = copy_of(store, "rated-list.duckdb")
    return db, _rate(db)


def _rate(db: Path, *args: str, env: dict[str, str] | None = None) -> str:
    res = CliRunner().invoke(app, ["rate", "--system", "fide", "--db", str(db), *args], env=env)
    assert res.exit_code == 0, res.output
    return res.output


def _rows(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def _firouzja(db: Path) -> tuple[int, str, int, int]:
    """Firouzja's Ro, its source, the file's rating and his rounded change at the Candidates."""
    ((ro, source, file_rating, change),) = _rows(
        db,
        "SELECT ro, ro_source, file_rating, change_rounded FROM v_tournament_performance"
        f" WHERE system = 'fide' AND tournament = '{EVENT}' AND name = '{FIROUZJA}'",
    )
    return ro, source, file_rating, change


def _policies(db: Path) -> list[str]:
    return [json.loads(p)["ro_from"] for (p,) in _rows(db, "SELECT params FROM rating_runs ORDER BY run_id")]


def test_rate_names_the_drifted_players_and_what_fixes_it(rated: tuple[Path, str]) -> None:
    db, out = copy_of(rated[0], "list.duckdb"), rated[1]
    ro, source, file_rating, _ = _firouzja(db)
    assert source == "computed" and file_rating == file_ratings()[FIROUZJA] and abs(ro - file_rating) >= 50
    far = _rows(
        db,
        f"SELECT count(DISTINCT player_id), count(*) FROM tournament_ratings WHERE system = 'fide'"
        f" AND abs(ro - file_rating) >= {RO_MARK_POINTS}",
    )[0]
    head = f"Ro {RO_MARK_POINTS} or more points from the file's rating: {far[0]} players ({far[1]} event entries)"
    assert head in out
    shown = re.findall(r"^  (.+) – (.+): Ro (\d+) \((\w+)\), file (\d+), ([+-]\d+)$", out, re.M)
    assert len(shown) == 5
    gaps = [abs(int(d)) for *_, d in shown]
    assert gaps == sorted(gaps, reverse=True) and all(int(ro) - int(f) == int(d) for *_, ro, _s, f, d in shown)
    # the largest is the largest the store holds
    assert gaps[0] == _rows(db, "SELECT max(abs(ro - file_rating)) FROM tournament_ratings WHERE system = 'fide'")[0][0]
    assert "import the official lists in force (`elopipe lists import FILE --system fide --db " in out
    assert "`--ro-from file`" in out


def test_ro_from_file_starts_the_event_from_the_file_and_a_change_re_rates(rated: tuple[Path, str]) -> None:
    db = copy_of(rated[0], "file.duckdb")
    listed = _firouzja(db)
    out = _rate(db, "--ro-from", "file")
    assert "rewritten from" in out  # the policy is an input of every period: the lists are recomputed
    ro, source, file_rating, change = _firouzja(db)
    assert (ro, source) == (file_ratings()[FIROUZJA], "file") == (file_rating, "file")
    # FIDE's published change for Firouzja at the Candidates 2022: -15 (issue 25); the store's list gave +8
    assert change == -15 != listed[3]
    assert "with --ro-from file, these Ro are a list's" in out
    assert _policies(db) == ["list", "file"]
    assert "nothing changed since the last run" in _rate(db, "--ro-from", "file")
    # back to the list in force: recomputed again, the same figures as before
    assert "rewritten from" in _rate(db, "--ro-from", "list")
    assert _firouzja(db) == listed and _policies(db) == ["list", "file", "list"]


def test_elopipe_ro_from_is_a_standing_choice_and_other_values_are_refused(store: Path) -> None:
    db = copy_of(store, "env.duckdb")
    _rate(db, env={"ELOPIPE_RO_FROM": "file"})
    assert _firouzja(db)[1] == "file" and _policies(db) == ["file"]
    bad = CliRunner().invoke(app, ["rate", "--db", str(db), "--ro-from", "files"])
    assert bad.exit_code == 2 and "elopipe rate: error: --ro-from: must be list or file, not 'files'" in bad.output
    ffe = CliRunner().invoke(app, ["rate", "--system", "ffe", "--db", str(db), "--ro-from", "file"])
    assert ffe.exit_code == 2 and "--ro-from applies to the FIDE systems" in ffe.output
    param = CliRunner().invoke(app, ["rate", "--db", str(db), "--scenario", "x", "--param", "ro_from=file"])
    assert param.exit_code == 2 and "elopipe rate: error: --param ro_from: use --ro-from" in param.output
    # a bad value of the variable is named as the variable's, not as an option nobody gave
    env = CliRunner(env={"ELOPIPE_RO_FROM": "bogus"}).invoke(app, ["rate", "--db", str(db)])
    assert env.exit_code == 2
    assert "elopipe rate: error: ELOPIPE_RO_FROM: must be list or file, not 'bogus'" in env.output
    # `run` checks it before Prefect starts
    run = CliRunner().invoke(app, ["run", str(db.parent), "--db", str(db), "--ro-from", "x"])
    assert run.exit_code == 2 and "elopipe run: error: --ro-from: must be list or file, not 'x'" in run.output


def test_the_flow_carries_the_policy_to_the_fide_systems_only(store: Path) -> None:
    from elopipe.jobs.rate import system_request
    from elopipe.jobs.requests import RateListsRequest
    from flows.rate_lists import rate_system

    db = copy_of(store, "flow.duckdb")
    run = RateListsRequest(str(db), ("fide", "ffe"), ro_from="file")
    summary, changed = rate_system.fn(system_request(run, "fide"))
    assert changed and summary.ro_from == "file" and _policies(db) == ["file"]
    ffe, _ = rate_system.fn(system_request(run, "ffe"))  # FFE takes Ro by its own rules
    assert ffe.ro_from is None
