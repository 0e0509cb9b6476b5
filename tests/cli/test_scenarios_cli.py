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
    assert _one_line(res.output) == f"error: {known}"


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
        "  compare: elopipe compare fide fide@v2017",
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
        " `elopipe rate` without --through recomputes them"
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
