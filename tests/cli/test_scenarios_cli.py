"""`elopipe rate --scenario`, `elopipe scenarios list|show|drop`, the `--through` preview, and the
commands that take `--system` given a scenario 'fide@NAME'."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.ingest.driver import ingest_paths
from tests.helpers.paths import REPO

DATA = REPO.parent / "shared" / "data" / "trf"
FILES = [DATA / "irl_bunratty_masters_2011_crlf.trf", DATA / "irl_kilkenny_masters_2011_gms_national_ids.trf"]

pytestmark = pytest.mark.skipif(not DATA.exists(), reason="../shared/data is not available")

# what a user must never read
INTERNALS = ("Traceback", "TypeError", "__init__", "None", "[", "{", "ValueError")


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two Irish events of 2011 (lists 2011-05 .. 2012-01), rated under plain 'fide'."""
    db = tmp_path_factory.mktemp("scen") / "s.duckdb"
    for f in FILES:
        ingest_paths([f], db)
    assert _run("rate", "--db", str(db)).exit_code == 0
    return db


@pytest.fixture
def db(rated: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "s.duckdb"
    copy.write_bytes(rated.read_bytes())
    return copy


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


def _one_line(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert len(lines) == 1, text
    assert not any(word in lines[0] for word in INTERNALS), lines[0]
    return lines[0]


def _plain_digest(db: Path) -> tuple:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return tuple(
            con.execute(
                f"SELECT count(*), md5(coalesce(string_agg(t::VARCHAR, ';' ORDER BY t::VARCHAR), '')) FROM {table} t"
                " WHERE system = 'fide'"
            ).fetchall()[0]
            for table in (
                "rating_lists",
                "rating_changes",
                "tournament_ratings",
                "rating_period_digests",
                "rating_runs",
            )
        )
    finally:
        con.close()


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--rules", "V2017"], "--rules changes"),
        (["--param", "rating_from=2005-01-01"], "--param changes"),
        (["--rules", "V2017", "--param", "check_time_minimum=false"], "--rules and --param change"),
        (["--v2022-cap-lower"], "--v2022-cap-lower changes"),
        (
            ["--rules", "V2022", "--param", "check_time_minimum=false", "--v2022-cap-lower"],
            "--rules, --param and --v2022-cap-lower change",
        ),
    ],
)
def test_rules_or_param_without_a_scenario_is_refused(db: Path, args: list[str], named: str) -> None:
    before = _plain_digest(db)
    res = _run("rate", "--db", str(db), *args)
    assert res.exit_code == 2
    line = _one_line(res.output)
    assert named in line and "add --scenario NAME to store them as fide@NAME" in line
    assert _plain_digest(db) == before


def _param_examples() -> dict[str, list[str]]:
    """The KEY=VALUE examples `rate --help` gives for --param, by system ('fide: a=1, b=2; elo: ...')."""
    import re

    import typer.main

    rate = typer.main.get_command(app).commands["rate"]  # type: ignore[attr-defined]
    text = next(p.help for p in rate.params if p.name == "param")
    given = re.search(r"\(e\.g\. (.*)\)\.?$", " ".join(text.split())).group(1)  # type: ignore[union-attr]
    examples: dict[str, list[str]] = {}
    for part in given.split("; "):
        system, _, items = part.partition(": ")
        examples[system] = [item for item in items.split(", ") if "=" in item]
    return examples


@pytest.mark.parametrize("system", ["fide", "ffe", "elo", "glicko2"])
def test_the_param_examples_of_the_help_work_as_written(db: Path, system: str) -> None:
    # the help gave rating_from=2005-01-01, which is refused without --rules
    examples = _param_examples()[system]
    assert examples, _param_examples()
    args = [arg for item in examples for arg in ("--param", item)]
    res = _run("rate", "--db", str(db), "--system", system, "--scenario", "ex", *args)
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(
    ("system", "known"),
    [
        ("fide", "unknown FIDE parameter foo; known: check_time_minimum, rating_from"),
        ("fide-blitz", "unknown FIDE parameter foo; known: check_time_minimum, rating_from"),
        (
            "ffe",
            "unknown FFE parameter foo; known: archive_seasons, by_event_end, compat_limit, fide_priority, floor, "
            "period_scheme, strict_boundary, threshold, unrated_opponents, young_max_category, z_mode",
        ),
        ("elo", "unknown elo parameter foo; known: default_rating, k, period, rate_class"),
        (
            "glicko2",
            "unknown glicko2 parameter foo; known: file_rating_rd, initial_rating, initial_rd, initial_volatility, "
            "rate_class, rd_max, tau, use_file_rating",
        ),
    ],
)
@pytest.mark.parametrize("scenario", [[], ["--scenario", "x"]])
def test_an_unknown_param_key_gets_one_line_listing_the_valid_keys(
    db: Path, system: str, known: str, scenario: list[str]
) -> None:
    res = _run("rate", "--db", str(db), "--system", system, *scenario, "--param", "foo=1")
    assert res.exit_code == 2
    assert _one_line(res.output) == f"elopipe rate: error: {known}"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--scenario", "bad name"], "scenario name 'bad name' is not valid"),
        (["--scenario", ""], "is not valid"),
        (["--system", "fide@x", "--scenario", "y"], "already names a scenario"),
        (["--system", "nope@x"], "unknown system 'nope'"),
    ],
)
def test_a_bad_scenario_is_one_line(db: Path, args: list[str], words: str) -> None:
    res = _run("rate", "--db", str(db), *args)
    assert res.exit_code == 2 and words in _one_line(res.output)


def test_a_scenario_made_listed_shown_and_dropped(db: Path) -> None:
    before = _plain_digest(db)
    res = _run("rate", "--db", str(db), "--scenario", "V2017", "--rules", "V2017")
    assert res.exit_code == 0, res.output
    assert "fide@v2017: 5 lists (2011-05-01 .. 2012-01-01)" in res.output
    assert "scenario v2017: stored as system fide@v2017; the fide lists are unchanged" in res.output
    assert _plain_digest(db) == before

    listed = _run("scenarios", "list", "--db", str(db))
    assert listed.exit_code == 0, listed.output
    row = next(ln for ln in listed.output.splitlines() if "fide@v2017" in ln)
    for cell in ("v2017", "V2017", "no_moves=played", "every list", " 5 ", "2011-05-01", "2012-01-01"):
        assert cell in row, row

    shown = _run("scenarios", "show", "V2017", "--db", str(db))
    assert shown.exit_code == 0, shown.output
    for line in (
        "scenario v2017 (system fide@v2017)",
        "  base system: fide (its rules, changed by the options below)",
        "  rules: V2017",
        "  through: every list",
        "  lists: 5 (2011-05-01 .. 2012-01-01)",
        f"  compare: elopipe compare fide fide@v2017 --db {db}",
    ):
        assert line in shown.output.splitlines(), shown.output

    dropped = _run("scenarios", "drop", "v2017", "--db", str(db))
    assert dropped.exit_code == 0, dropped.output
    assert _one_line(dropped.output).startswith("dropped scenario v2017: ")
    assert "rating_lists" in dropped.output and "scenarios 1" in dropped.output
    assert _plain_digest(db) == before
    assert "no scenario in" in _run("scenarios", "list", "--db", str(db)).output
    gone = _run("scenarios", "show", "v2017", "--db", str(db))
    assert gone.exit_code == 1 and "no scenario 'v2017'" in _one_line(gone.output)
    again = _run("scenarios", "drop", "v2017", "--db", str(db))
    assert again.exit_code == 1 and "no scenario 'v2017'" in _one_line(again.output)


def test_through_alone_is_a_preview_that_says_the_later_lists_are_kept(db: Path) -> None:
    res = _run("rate", "--db", str(db), "--through", "2011-07")
    assert res.exit_code == 0, res.output
    assert (
        "preview: 3 later lists kept as they were (2011-09-01 .. 2012-01-01), not recomputed;"
        f" `elopipe rate --db {db}` without --through recomputes them"
    ) in res.output
    lists = _run(
        "sql", "SELECT count(DISTINCT list_date) AS n FROM rating_lists WHERE system = 'fide'", "--db", str(db)
    )
    assert "5" in lists.output


def test_publish_report_and_player_take_a_scenario(db: Path, tmp_path: Path) -> None:
    made = _run("rate", "--db", str(db), "--system", "fide@V2017", "--rules", "V2017")  # as --scenario V2017
    assert made.exit_code == 0 and "stored as system fide@v2017" in made.output, made.output
    out = tmp_path / "out"
    pub = _run("publish", "--system", "fide@v2017", "--out", str(out), "--db", str(db))
    assert pub.exit_code == 0, pub.output
    html = (out / "lists" / "fide@v2017_2012-01-01.html").read_text()
    assert "FIDE standard, scenario v2017" in html
    rep = _run("report", "--all", "--system", "fide@v2017", "--out", str(out), "--db", str(db))
    assert rep.exit_code == 0 and "2 reports" in rep.output, rep.output
    assert any((out / "reports" / "fide@v2017").iterdir())
    hist = _run("player", "1", "--system", "fide@v2017", "--out", str(out), "--db", str(db))
    assert hist.exit_code == 0 and "(fide@v2017)" in hist.output, hist.output
    diff = _run(
        "publish", "--system", "fide@v2017", "--diff", "2011-05-01", "2012-01-01", "--out", str(out), "--db", str(db)
    )
    assert diff.exit_code == 0 and (out / "diff_fide@v2017_2011-05-01_2012-01-01.csv").exists(), diff.output


def test_a_store_made_before_scenarios_lists_none(db: Path) -> None:
    con = duckdb.connect(str(db))
    con.execute("DROP TABLE scenarios")
    con.close()
    listed = _run("scenarios", "list", "--db", str(db))
    assert listed.exit_code == 0 and "no scenario in" in _one_line(listed.output)
    shown = _run("scenarios", "show", "x", "--db", str(db))
    assert shown.exit_code == 1 and "no scenario 'x'" in _one_line(shown.output)


def _sql(db: Path, query: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_a_scenario_run_again_keeps_its_definition_and_refuses_another(db: Path) -> None:
    made = _run("rate", "--db", str(db), "--scenario", "r1", "--rules", "V2024", "--through", "2011-07")
    assert made.exit_code == 0, made.output
    again = _run("rate", "--db", str(db), "--scenario", "r1")  # no rules: its own, every list
    assert again.exit_code == 0 and "fide@r1: 5 lists (2011-05-01 .. 2012-01-01)" in again.output, again.output
    shown = _run("scenarios", "show", "r1", "--db", str(db)).output.splitlines()
    assert "  rules: V2024" in shown and "  through: every list" in shown, shown
    fresh = _run("rate", "--db", str(db), "--scenario", "fresh", "--rules", "V2024")
    assert fresh.exit_code == 0, fresh.output
    lists = "SELECT list_date, player_id, rating, k, change FROM rating_lists WHERE system = '{}' ORDER BY ALL"
    assert _sql(db, lists.format("fide@r1")) == _sql(db, lists.format("fide@fresh"))
    before = _sql(db, "SELECT rules, params, through FROM scenarios WHERE system = 'fide@r1'")
    for args, defined in (
        (["--rules", "V2017"], "--rules V2024"),
        (["--param", "check_time_minimum=false"], "no --param check_time_minimum"),
        (["--no-moves", "forfeit"], "--no-moves played"),
        (["--unknown-tc", "rapid"], "--unknown-tc standard"),  # the policy in force when it was made
    ):
        res = _run("rate", "--db", str(db), "--scenario", "R1", *args)
        assert res.exit_code == 2
        assert _one_line(res.output) == (
            f"elopipe rate: error: scenario r1 is defined with {defined}; drop it first"
            " (elopipe scenarios drop fide@r1)"
            " or choose another name"
        )
    assert _sql(db, "SELECT rules, params, through FROM scenarios WHERE system = 'fide@r1'") == before
    same = _run("rate", "--db", str(db), "--system", "fide@r1", "--rules", "v2024", "--no-moves", "played")
    assert same.exit_code == 0 and "nothing changed since the last run" in same.output, same.output


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--param", "check_time_minimum=abc"],
            "elopipe rate: error: --param check_time_minimum=abc: check_time_minimum must be true or false"
            " (or yes/no, 1/0),"
            " not 'abc'",
        ),
        (["--param", "check_time_minimum=nan"], "check_time_minimum must be true or false"),
        (["--param", "check_time_minimum=-5"], "check_time_minimum must be true or false"),
        (
            ["--system", "glicko2", "--param", "rate_class=xyz"],
            "elopipe rate: error: --param rate_class=xyz: rate_class must be one of standard, rapid, blitz, any,"
            " not 'xyz'",
        ),
        (["--system", "glicko2", "--param", "use_file_rating=maybe"], "use_file_rating must be true or false"),
        (["--system", "elo", "--param", "period=year"], "period must be one of month, tournament, game, not 'year'"),
        (["--system", "ffe", "--param", "young_max_category=U21"], "young_max_category must be one of U8, U10"),
        (
            ["--param", "rating_from=banana"],
            "elopipe rate: error: --param rating_from=banana: rating_from must be a date YYYY-MM-DD, not 'banana'",
        ),
        (
            ["--param", "rating_from=2005-01-01"],
            "elopipe rate: error: FIDE's rules for fide events starting from 2005-01-01 to 2009-06-30"
            " cannot be confirmed",
        ),
        (
            ["--unknown-tc", "bullet"],
            "elopipe rate: error: --unknown-tc: must be one of standard, rapid, blitz, not 'bullet'",
        ),
        (["--rules", "V1999"], "elopipe rate: error: unknown FIDE rules version V1999; known: V2017, V2022, V2024"),
        (["--system", "glicko2", "--rules", "V2017"], "elopipe rate: error: glicko2: --rules does not apply"),
    ],
)
def test_a_bad_option_value_is_one_line_exit_2_and_stores_nothing(db: Path, args: list[str], line: str) -> None:
    res = _run("rate", "--db", str(db), "--scenario", "bad", *args)
    assert res.exit_code == 2
    got = _one_line(res.output)
    assert got.startswith(line) if line.startswith("elopipe rate: error:") else line in got
    assert _sql(db, "SELECT count(*) FROM scenarios") == [(0,)]


def test_boolean_words_and_rules_in_any_case_are_stored_as_meant(db: Path) -> None:
    res = _run("rate", "--db", str(db), "--scenario", "b", "--rules", "v2017", "--param", "check_time_minimum=NO")
    assert res.exit_code == 0, res.output
    shown = _run("scenarios", "show", "b", "--db", str(db)).output.splitlines()
    assert (
        "  rules: V2017" in shown
        and "  options: check_time_minimum=false, no_moves=played, ro_from=list, unknown_tc=standard" in shown
    ), shown


@pytest.mark.parametrize("args", [["--scenario", "fide"], ["--scenario", "FFE"], ["--system", "fide@glicko2"]])
def test_a_scenario_may_not_take_a_system_name(db: Path, args: list[str]) -> None:
    res = _run("rate", "--db", str(db), *args)
    assert res.exit_code == 2 and "is the name of a rating system: choose another name" in _one_line(res.output)


def test_drop_folds_the_system_part_and_refuses_a_missing_one(db: Path) -> None:
    assert _run("rate", "--db", str(db), "--scenario", "v2017", "--rules", "V2017").exit_code == 0
    missing = _run("scenarios", "drop", "@fide", "--db", str(db))
    assert missing.exit_code == 2 and "names no system: expected SYSTEM@NAME" in _one_line(missing.output)
    dropped = _run("scenarios", "drop", "FIDE@V2017", "--db", str(db))
    assert dropped.exit_code == 0 and _one_line(dropped.output).startswith("dropped scenario fide@v2017: ")
    assert _sql(db, "SELECT count(*) FROM rating_lists WHERE system = 'fide@v2017'") == [(0,)]


@pytest.mark.parametrize("month", ["2023-12-31", "2023-1", "2023-13"])
def test_through_must_be_a_list_month(db: Path, month: str) -> None:
    res = _run("rate", "--db", str(db), "--through", month)
    assert res.exit_code == 2
    assert _one_line(res.output) == (
        f"elopipe rate: error: --through: expected a list month YYYY-MM such as 2024-03, got '{month}'"
    )


def test_through_before_any_list_says_so(db: Path) -> None:
    res = _run("rate", "--db", str(db), "--through", "1900-01")
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == "fide: no list falls on or before 1900-01 (--through)"
    assert "no game of the store is rated" not in res.output


def test_a_rapid_scenario_without_its_standard_scenario_says_what_it_credits(db: Path) -> None:
    note = (
        "note: fide-rapid@nostd credits standard ratings from fide@nostd, which the store does not hold: no computed"
        f" standard rating is credited (`elopipe rate --system fide --scenario nostd --db {db}` first to credit them)"
    )
    res = _run("rate", "--db", str(db), "--system", "fide-rapid", "--scenario", "nostd")
    assert res.exit_code == 0 and note in res.output.splitlines(), res.output
    assert _run("rate", "--db", str(db), "--system", "fide", "--scenario", "nostd").exit_code == 0
    res = _run("rate", "--db", str(db), "--system", "fide-rapid", "--scenario", "nostd")
    assert res.exit_code == 0 and "note:" not in res.output, res.output


def test_the_v2022_cap_under_other_forced_rules_is_refused(db: Path) -> None:
    # accepted silently, it was stored in the scenario's definition and changed no rating
    before = _plain_digest(db)
    res = _run("rate", "--db", str(db), "--scenario", "z", "--rules", "V2017", "--v2022-cap-lower")
    assert res.exit_code == 2
    line = _one_line(res.output)
    assert line.startswith("elopipe rate: error: --v2022-cap-lower applies to the V2022 rules only")
    assert "--rules V2017" in line
    assert _plain_digest(db) == before and "no scenario in" in _run("scenarios", "list", "--db", str(db)).output
