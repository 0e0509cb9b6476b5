"""`--unknown-tc` is a run policy, as `--no-moves` and `--ro-from` are: the list an event goes to when
nothing in its files says its rate of play. `rate` and `run` take it, ELOPIPE_UNKNOWN_TC keeps it for
every rate, run and watch, a bad value is one line (exit 2), and `run` warns of the events it
assumed, as `rate` lists them. On the real `wjun19.pgn` (58th World Juniors 2019: no TimeControl,
nothing in its name; 181 games)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from tests.helpers.paths import SHARED_DATA

WJUN = SHARED_DATA / "pgn" / "wjun19.pgn"
EVENT = "58th World Juniors 2019"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("wjun") / "s.duckdb"
    res = CliRunner().invoke(app, ["ingest", str(WJUN), "--db", str(db)])
    assert res.exit_code == 0, res.output
    return db


def _copy(store: Path, name: str) -> Path:
    db = store.with_name(name)
    shutil.copyfile(store, db)
    return db


def _rate(db: Path, system: str, *args: str, env: dict[str, str] | None = None) -> str:
    res = CliRunner().invoke(app, ["rate", "--system", system, "--db", str(db), *args], env=env)
    assert res.exit_code == 0, res.output
    return res.output


def _rows(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def _listed(db: Path, line: str) -> list[tuple]:
    """(name, games) of the rows of the `elopipe sql "..."` query that `line` prints."""
    found = re.search(r'`elopipe sql "([^"]+)"', line)
    assert found is not None, line
    return [(name, games) for _tid, name, games in _rows(db, found[1])]


def _lists(db: Path) -> dict[str, int]:
    return dict(_rows(db, "SELECT system, count(DISTINCT list_date) FROM rating_lists GROUP BY system"))


def test_the_variable_is_a_standing_choice_recorded_with_the_run(store: Path) -> None:
    db = _copy(store, "env.duckdb")
    env = {"ELOPIPE_UNKNOWN_TC": "Rapid"}
    out = _rate(db, "fide", env=env)
    assert "no list (no game of the store is rated under this system)" in out
    rapid = _rate(db, "fide-rapid", env=env)
    assert f"181  {EVENT}" in rapid  # named among the events whose rate was assumed
    assert _lists(db) == {"fide-rapid": 1}
    params = [json.loads(p) for (p,) in _rows(db, "SELECT params FROM rating_runs ORDER BY run_id")]
    assert [p["unknown_tc"] for p in params] == ["rapid", "rapid"]
    ((source, rate_class),) = _rows(db, "SELECT DISTINCT source, rate_class FROM rate_of_play")
    assert (source, rate_class) == ("assumed", "rapid")
    # without the variable, the default: the event is back on the standard list, and the
    # rapid list it left is removed with a line saying so
    back = _rate(db, "fide-rapid")
    assert "1 list removed, no game is rated on it any more" in back
    _rate(db, "fide")
    assert _lists(db) == {"fide": 1}


def test_bad_values_are_one_line_naming_where_they_came_from(store: Path) -> None:
    db = _copy(store, "bad.duckdb")
    bad = CliRunner().invoke(app, ["rate", "--db", str(db), "--unknown-tc", "unrated"])
    assert bad.exit_code == 2
    assert "elopipe rate: error: --unknown-tc: must be one of standard, rapid, blitz, not 'unrated'" in bad.output
    env = CliRunner(env={"ELOPIPE_UNKNOWN_TC": "blitzz"}).invoke(app, ["rate", "--db", str(db)])
    assert env.exit_code == 2
    assert "elopipe rate: error: ELOPIPE_UNKNOWN_TC: must be one of standard, rapid, blitz, not 'blitzz'" in env.output
    # `run` checks it before Prefect starts
    run = CliRunner().invoke(app, ["run", str(WJUN), "--db", str(db), "--unknown-tc", "x"])
    assert run.exit_code == 2
    assert "elopipe run: error: --unknown-tc: must be one of standard, rapid, blitz, not 'x'" in run.output
    assert not _rows(db, "SELECT * FROM rating_runs")


def test_the_flow_carries_the_policy_and_warns_of_the_assumed_events(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from elopipe.jobs.rate import system_request
    from elopipe.jobs.requests import RateListsRequest, RunRequest
    from flows.rate_lists import assumed_line, rate_system

    monkeypatch.delenv("ELOPIPE_UNKNOWN_TC", raising=False)
    db = _copy(store, "flow.duckdb")
    assert system_request(RateListsRequest(str(db), ("fide",)), "fide").params["unknown_tc"] == "standard"
    assert RunRequest((str(WJUN),), str(db), unknown_tc="blitz").rating().unknown_tc == "blitz"
    monkeypatch.setenv("ELOPIPE_UNKNOWN_TC", "blitz")
    run = RateListsRequest(str(db), ("fide", "fide-blitz"))
    for system in ("fide", "ffe", "elo"):  # every system takes it, as `rate --unknown-tc` does
        assert system_request(run, system).params["unknown_tc"] == "blitz"
    standard, _ = rate_system.fn(system_request(run, "fide"))
    assert standard is not None and assumed_line("fide", standard, "blitz") is None  # nothing went there
    blitz, changed = rate_system.fn(system_request(run, "fide-blitz"))
    assert changed and blitz is not None and blitz.unknown_tc_games == 181
    line = assumed_line("fide-blitz", blitz, "blitz", str(db))
    assert line is not None
    assert line.startswith(
        f"fide-blitz: 1 event (181 games) went to the blitz list as nothing in its files says the rate of play"
        f" (largest: {EVENT}, 181 games); give a rapid or blitz event its time control"
    )
    assert "or set --unknown-tc (ELOPIPE_UNKNOWN_TC);" in line
    assert _listed(db, line) == [(EVENT, 181)]  # the query it prints lists the events it counted
    assert f"--db {db}" in line


@pytest.mark.parametrize("command", ["watch", "serve"])
@pytest.mark.parametrize(
    ("variable", "words"),
    [
        ("ELOPIPE_UNKNOWN_TC", "must be one of standard, rapid, blitz, not 'bullet'"),
        ("ELOPIPE_NO_MOVES", "must be played, forfeit or unrated, not 'bullet'"),
        ("ELOPIPE_RO_FROM", "must be list or file, not 'bullet'"),
    ],
)
def test_watch_and_serve_refuse_a_bad_policy_variable_before_they_start(
    tmp_path: Path, command: str, variable: str, words: str
) -> None:
    """They take no policy option, only the variables: a bad one is one line, exit 2, before the
    inbox is read (it failed after the first file was stored, naming no variable)."""
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    shutil.copyfile(WJUN, inbox / WJUN.name)
    db = tmp_path / "s.duckdb"
    res = CliRunner().invoke(app, [command, str(inbox), "--db", str(db)], env={variable: "bullet"})
    assert res.exit_code == 2, res.output
    assert f"elopipe {command}: error: {variable}: {words}" in res.output
    assert not db.exists() and sorted(p.name for p in inbox.iterdir()) == [WJUN.name]


EMPTY_REFUSED = [
    ("--unknown-tc", "ELOPIPE_UNKNOWN_TC", "must be one of standard, rapid, blitz, not ''"),
    ("--no-moves", "ELOPIPE_NO_MOVES", "must be played, forfeit or unrated, not ''"),
    ("--ro-from", "ELOPIPE_RO_FROM", "must be list or file, not ''"),
]


@pytest.mark.parametrize("command", ["rate", "run"])
@pytest.mark.parametrize(("option", "variable", "words"), EMPTY_REFUSED)
def test_an_empty_policy_is_refused_not_taken_for_the_default(
    store: Path, tmp_path: Path, command: str, option: str, variable: str, words: str
) -> None:
    """`--unknown-tc ''` (an unexpanded shell variable, a blank template field) and a variable set
    empty are values, refused in one line naming where they came from: they were read as not given,
    and the events rated under the default in silence. Only an unset variable is not given."""
    db = _copy(store, f"empty-{command}.duckdb")
    before = _lists(db)
    args = ["--db", str(db)] if command == "rate" else ["--db", str(db), "--out", str(tmp_path / "out"), str(WJUN)]
    for extra, env, where in (([option, ""], {variable: None}, option), ([], {variable: ""}, variable)):
        res = CliRunner().invoke(app, [command, *args, *extra], env=env)
        assert res.exit_code == 2, res.output
        assert res.output.strip() == f"elopipe {command}: error: {where}: {words}"
    assert _lists(db) == before  # refused before anything is rated


@pytest.mark.parametrize(("system", "rate_class"), [("ffe-rapid", "rapid"), ("ffe", "standard"), ("elo", "standard")])
def test_every_system_names_the_events_whose_rate_it_assumed(
    store: Path, monkeypatch: pytest.MonkeyPatch, system: str, rate_class: str
) -> None:
    """`rate` and `run` name the events whose rate of play was assumed under the FFE and generic
    systems as under FIDE's (`summary.assumed_events`, one code path): `ffe-rapid` counted their
    games and named none, nor did `run` warn of them."""
    from elopipe.jobs.rate import system_request
    from elopipe.jobs.requests import RateListsRequest
    from flows.rate_lists import assumed_line, rate_system

    db = _copy(store, f"named-{system}.duckdb")
    out = _rate(db, system, "--unknown-tc", rate_class)
    assert "games with unknown rate of play (assumed: no time control, name, site or day says): 181" in out
    assert f"  in 1 event whose rate of play was assumed, the largest first:\n       181  {EVENT}\n" in out
    monkeypatch.setenv("ELOPIPE_UNKNOWN_TC", rate_class)
    summary, _ = rate_system.fn(system_request(RateListsRequest(str(db), (system,)), system))
    assert summary is not None and summary.assumed_events == [(EVENT, 181)]
    line = assumed_line(system, summary, rate_class, str(db))
    assert line is not None and line.startswith(
        f"{system}: 1 event (181 games) went to the {rate_class} list as nothing in its files says the rate of play"
        f" (largest: {EVENT}, 181 games)"
    )
    # the query lists this system's events, not another system's nor the events it did not rate
    assert _listed(db, line) == [(EVENT, 181)]
    assert _rows(db, "SELECT count(DISTINCT system) FROM rating_changes WHERE tc_assumed")[0][0] == 1
    other = _copy(db, f"named-{system}-and-fide.duckdb")
    _rate(other, "fide")  # FIDE's standard list assumes the same event: its rows are not this system's
    assert _listed(other, line) == [(EVENT, 181)]
