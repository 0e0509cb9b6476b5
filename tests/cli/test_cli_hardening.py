"""CLI hardening: hostile data (markup, wildcards, formulas), bad options and bad `--db` paths
end in a clear message and a usage/exit code, never in a traceback or altered text."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.store.connect import open_writer
from tests.helpers.paths import REPO
from tests.helpers.publish_store import FEB, build_store
from tests.helpers.store_build import add_rows

EVIL = "[/i]Evil, Markup"
EVIL_TOURNAMENT = "[x] Cup :smile: [/]"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_store(tmp_path / "s.duckdb")


@pytest.fixture
def evil_db(db: Path) -> Path:
    """The publish scenario with player 4 and tournament 1 renamed to markup-like text."""
    con = duckdb.connect(str(db))
    con.execute("UPDATE players SET name = ?, name_key = lower(?) WHERE player_id = 4", [EVIL, EVIL])
    con.execute("UPDATE tournament_players SET name_as_written = ? WHERE player_id = 4", [EVIL])
    con.execute("UPDATE tournaments SET name = ? WHERE tournament_id = 1", [EVIL_TOURNAMENT])
    con.close()
    return db


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_sql_prints_markup_like_values_as_written(db: Path) -> None:
    res = _run("sql", "SELECT '[/]' AS a, '[b]x[/b]' AS b, ':smile:' AS c", "--db", str(db))
    assert res.exit_code == 0, res.output
    assert res.exception is None
    assert "[/]" in res.output and "[b]x[/b]" in res.output and ":smile:" in res.output


def test_report_and_player_show_markup_like_names_as_written(evil_db: Path, tmp_path: Path) -> None:
    res = _run("report", "-t", "1", "--db", str(evil_db), "--out", str(tmp_path / "o"))
    assert res.exit_code == 0, res.output
    assert EVIL in res.output and "[x] Cup :smile: [/]" in res.output
    res = _run("player", "4", "--db", str(evil_db), "--out", str(tmp_path / "o"), "--chart", "svg")
    assert res.exit_code == 0, res.output
    assert EVIL in res.output and EVIL_TOURNAMENT in res.output


def test_missing_markup_like_path_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "mk" / "[/b].pgn"
    res = _run("ingest", str(missing), "--db", str(tmp_path / "x.duckdb"))
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert "[/b].pgn" in res.output


def test_a_folder_without_chess_files_is_said_so(tmp_path: Path) -> None:
    empty = tmp_path / "inbox"
    empty.mkdir()
    (empty / "notes.docx").write_bytes(b"PK\x03\x04")
    res = _run("ingest", str(empty), "--db", str(tmp_path / "x.duckdb"))
    assert res.exit_code == 0, res.output
    assert "no PGN or TRF file found under" in res.output and "0 files" in res.output


def test_rejected_markup_like_file_is_listed_as_written(tmp_path: Path) -> None:
    bad = tmp_path / "mk" / "[/b].pgn"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"\x00\x01 not a pgn at all \xff" * 10)
    res = _run("ingest", str(bad), "--db", str(tmp_path / "x.duckdb"))
    assert not isinstance(res.exception, Exception) or isinstance(res.exception, SystemExit), res.output
    assert "[/b].pgn" in res.output


@pytest.mark.parametrize(
    "query",
    [
        "COPY players TO '{out}/players.csv'",
        "EXPORT DATABASE '{out}/export'",
        "SELECT * FROM read_text('/etc/passwd')",
        "SELECT * FROM read_csv('/etc/passwd')",
        "ATTACH '{out}/other.duckdb' AS o",
    ],
)
def test_sql_cannot_read_or_write_other_files(db: Path, tmp_path: Path, query: str) -> None:
    out = tmp_path / "loot"
    out.mkdir()
    res = _run("sql", query.format(out=out), "--db", str(db))
    assert res.exit_code == 1, res.output
    assert "query failed" in res.output and "no file reads, writes or exports" in res.output
    assert list(out.iterdir()) == []
    assert "root:" not in res.output


def test_sql_still_reads_tables_and_views_when_sandboxed(db: Path) -> None:
    res = _run("sql", "SELECT count(*) AS n FROM v_rating_list", "--db", str(db), "--format", "csv")
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == "n" and int(res.output.splitlines()[1]) > 0
    from elopipe.store.views import VIEWS

    for name in VIEWS:
        res = _run("sql", f"SELECT count(*) FROM {name}", "--db", str(db), "--format", "csv")
        assert res.exit_code == 0, (name, res.output)


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_sql_empty_query_is_a_usage_error(db: Path, query: str) -> None:
    res = _run("sql", query, "--db", str(db))
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert "empty" in res.output


def test_sql_refuses_several_statements(db: Path) -> None:
    res = _run("sql", "SELECT 1 AS a; SELECT 2 AS b", "--db", str(db))
    assert res.exit_code == 2, res.output
    assert "2 statements" in res.output and "one statement" in res.output


def test_sql_table_shows_limit_rows_and_counts_the_rest(db: Path) -> None:
    q = "SELECT i FROM range(2500) t(i) ORDER BY i"
    res = _run("sql", q, "--db", str(db))
    assert res.exit_code == 0, res.output
    assert "2500 rows; the first 1000 shown, 1500 more" in res.output
    assert "│ 999 " in res.output and "│ 1000 " not in res.output
    res = _run("sql", q, "--db", str(db), "--limit", "10")
    assert "the first 10 shown, 2490 more" in res.output
    res = _run("sql", q, "--db", str(db), "--format", "csv")
    assert res.output.splitlines()[1:] == [str(i) for i in range(2500)]
    import json

    res = _run("sql", q, "--db", str(db), "--format", "json")
    assert json.loads(res.output) == [{"i": i} for i in range(2500)]


def _flat(text: str) -> str:
    """Output with rich's panel borders and line wrapping removed."""
    return " ".join(text.translate({ord(c): " " for c in "│╭╮╰╯─"}).split())


def _usage_error(res, *words: str) -> None:
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert "--db" in res.output
    for w in words:
        assert w in _flat(res.output), res.output


@pytest.mark.parametrize(
    "args",
    [
        ["sql", "SELECT 1"],
        ["report", "-t", "1"],
        ["player", "1"],
        ["rate"],
        ["players", "merge", "1", "2", "--reason", "x"],
        ["ingest", "{victim}"],
    ],
)
def test_db_that_is_a_folder_or_not_duckdb_is_a_usage_error(tmp_path: Path, args: list[str]) -> None:
    victim = tmp_path / "victim.pgn"
    victim.write_text('[Event "x"]\n\n1. e4 e5 1-0\n')
    argv = [a.format(victim=victim) for a in args]
    _usage_error(_run(*argv, "--db", str(tmp_path)), "is a folder")
    _usage_error(_run(*argv, "--db", str(victim)), "is not a DuckDB database")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["victim.pgn"]  # no victim.pgn.lock
    assert victim.read_text() == '[Event "x"]\n\n1. e4 e5 1-0\n'


@pytest.mark.parametrize(
    "args",
    [
        ["rate"],
        ["players", "merge", "1", "2", "--reason", "x"],
        ["players", "split", "1", "--name", "X", "--reason", "x"],
        ["scenarios", "drop", "s1"],
        ["publish"],
        ["ingest", str(REPO / "sample_pgn" / "wchcand22.pgn")],
    ],
)
def test_an_empty_file_as_db_is_refused_and_nothing_is_left_beside_it(tmp_path: Path, args: list[str]) -> None:
    """An empty file is no store (DuckDB refuses it): the refusal creates nothing, not even the
    lock file (`empty.duckdb.lock` holding "pid N" was left behind); a lock file that was there
    before is kept."""
    empty = tmp_path / "empty.duckdb"
    empty.write_bytes(b"")
    _usage_error(_run(*args, "--db", str(empty)), "not a DuckDB database")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.duckdb"]
    lock = tmp_path / "empty.duckdb.lock"
    lock.write_bytes(b"")
    _usage_error(_run(*args, "--db", str(empty)), "not a DuckDB database")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.duckdb", "empty.duckdb.lock"]


def test_proc_files_and_unwritable_lock_are_clear_errors(tmp_path: Path) -> None:
    _usage_error(_run("sql", "SELECT 1", "--db", "/proc/self/status"), "not a DuckDB database")
    _usage_error(_run("rate", "--db", "/proc/self/status"), "not a DuckDB database")
    sample = str(REPO / "sample_pgn" / "wchcand22.pgn")
    _usage_error(_run("ingest", sample, "--db", "/proc/self/x.duckdb"), "cannot create the lock file")


def test_reader_creates_nothing_and_writer_says_it_creates_the_folder(tmp_path: Path) -> None:
    where = tmp_path / "no" / "such" / "x.duckdb"
    res = _run("sql", "SELECT 1", "--db", str(where))
    assert res.exit_code == 1 and "no database" in res.output
    res = _run("report", "-t", "1", "--db", str(where))
    assert res.exit_code == 1 and "no database" in res.output
    res = _run("rate", "--db", str(where))  # rates what was ingested: creates nothing either
    assert res.exit_code == 1 and "no database" in res.output
    assert not (tmp_path / "no").exists()
    res = _run("ingest", str(REPO / "sample_pgn" / "wchcand22.pgn"), "--db", str(where))
    assert res.exit_code == 0, res.output
    assert f"created the folder {where.parent}" in _flat(res.output)
    assert where.exists()


@pytest.mark.parametrize(
    ("system", "param", "words"),
    [
        ("glicko2", "tau=abc", "tau must be a number"),
        ("elo", "k=1e308", "k must be a number > 0 and <= 1000"),
        ("elo", "k=abc", "k must be a number or a K schedule"),
        ("elo", "k=-5", "not -5"),
        ("elo", "k=20,games<30:-4", "not -4"),
        ("elo", "k=nan", "k must be"),
        ("glicko2", "tau=-1", "tau must be a number > 0"),
        ("glicko2", "initial_rd=0", "initial_rd must be"),
        ("ffe", "threshold=2.5", "threshold must be an integer"),
    ],
)
def test_rate_refuses_bad_numeric_params(db: Path, system: str, param: str, words: str) -> None:
    res = _run("rate", "--system", system, "--param", param, "--db", str(db))
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert f"--param {param}" in _flat(res.output) and words in _flat(res.output)


def test_rate_accepts_valid_params(db: Path) -> None:
    res = _run("rate", "--system", "elo", "--scenario", "k", "--param", "k=20,games<30:40", "--db", str(db))
    assert res.exit_code == 0, res.output
    res = _run("rate", "--system", "glicko2", "--scenario", "tau", "--param", "tau=0.3", "--db", str(db))
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("system", ["fide", "fide-rapid", "fide-blitz", "ffe", "ffe-rapid", "elo", "glicko2"])
def test_rate_on_an_empty_store_says_no_games(tmp_path: Path, system: str) -> None:
    empty = tmp_path / "empty.duckdb"
    with open_writer(empty):  # a store with no game (an ingest that found no file leaves one)
        pass
    res = _run("rate", "--system", system, "--db", str(empty))
    assert res.exit_code == 0, res.output
    assert "no games to rate" in res.output


def test_glicko2_without_a_ratable_game_rates_nothing(db: Path) -> None:
    res = _run("rate", "--system", "glicko2", "--scenario", "blitz", "--param", "rate_class=blitz", "--db", str(db))
    assert res.exit_code == 0, res.output
    assert "error" not in res.output


@pytest.mark.parametrize("ref", ["%", "_", "%a%", "A_p"])
def test_search_wildcards_are_literal(db: Path, tmp_path: Path, ref: str) -> None:
    res = _run("report", "-t", ref, "--db", str(db), "--out", str(tmp_path / "o"))
    assert res.exit_code == 1 and "no tournament matches" in _flat(res.output), res.output
    res = _run("player", ref, "--db", str(db), "--out", str(tmp_path / "o"))
    assert res.exit_code == 1 and "no player matches" in _flat(res.output), res.output


def test_search_finds_names_holding_wildcard_characters(db: Path, tmp_path: Path) -> None:
    con = duckdb.connect(str(db))
    con.execute("UPDATE players SET name = 'Delta_100%, Dan' WHERE player_id = 4")
    con.execute("UPDATE tournaments SET name = 'Open 100% rapid_x' WHERE tournament_id = 1")
    con.close()
    from elopipe.publish.history import find_player
    from elopipe.publish.reports import find_tournament

    con = duckdb.connect(str(db), read_only=True)
    try:
        assert find_player(con, "_100%") == 4
        assert find_tournament(con, "100% rapid_") == 1
    finally:
        con.close()


FORMULAS = ['=HYPERLINK("http://evil.example","x")', "+cmd|' /C calc'!A0", "-2+3+cmd", "@SUM(A1:A9)"]


def test_published_csv_cells_never_start_a_formula(db: Path, tmp_path: Path) -> None:
    import csv

    con = duckdb.connect(str(db))
    for pid, name in zip((1, 2, 3, 4), FORMULAS, strict=True):
        con.execute("UPDATE players SET name = ? WHERE player_id = ?", [name, pid])
        con.execute("UPDATE tournament_players SET name_as_written = ? WHERE player_id = ?", [name, pid])
    con.close()
    out = tmp_path / "o"
    res = _run("publish", "--system", "fide", "--all", "--db", str(db), "--out", str(out), "--format", "csv,html")
    assert res.exit_code == 0, res.output
    res = _run("report", "-t", "1", "--db", str(db), "--out", str(out))
    assert res.exit_code == 0, res.output
    files = sorted(out.rglob("*.csv"))
    assert any("players.csv" in f.name for f in files) and any("crosstable" in f.name for f in files)
    seen = set()
    for f in files:
        with f.open(newline="", encoding="utf-8") as fh:
            for row in csv.reader(fh):
                for cell in row:
                    assert not cell.startswith(("=", "+", "@")), (f.name, cell)
                    if cell.startswith("-"):
                        float(cell)  # only plain negative numbers
                    if cell.startswith("'"):
                        seen.add(cell[1:])
    assert set(FORMULAS) <= seen
    # the HTML and the store keep the name as written
    html = next(out.rglob("*.html")).read_text(encoding="utf-8")
    assert "=HYPERLINK(" in html and "'=HYPERLINK(" not in html


def test_fide_txt_id_column_holds_only_fide_ids(db: Path) -> None:
    from elopipe.publish.fidetxt import to_fide_txt
    from elopipe.publish.lists import rating_list

    con = duckdb.connect(str(db))
    con.execute("UPDATE players SET fide_id = NULL, national_id = '22' WHERE player_id = 2")
    con.execute("UPDATE players SET national_id = '10827' WHERE player_id = 4")
    con.close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        df = rating_list(con, "fide")
        lines = to_fide_txt(df, dt.date(2024, 2, 1)).splitlines()[1:]
    finally:
        con.close()
    by_name = {line[15:76].strip(): line[0:15].strip() for line in lines}
    assert by_name["Bravo, Bruno"] == ""
    assert by_name["Alpha, Anna"] == "100001"
    assert "22" not in by_name.values() and "10827" not in by_name.values()


def test_html_list_has_a_flag_legend(db: Path, tmp_path: Path) -> None:
    res = _run("publish", "--system", "fide", "--db", str(db), "--out", str(tmp_path / "o"), "--format", "html")
    assert res.exit_code == 0, res.output
    pages = [f.read_text(encoding="utf-8") for f in (tmp_path / "o").rglob("*.html")]
    html = next(p for p in pages if 'id="rating-list"' in p)
    legend = html[html.index('id="flag-legend"') :]
    for flag, meaning in [("i", "inactive"), ("w", "woman"), ("new", "first rating")]:
        assert f'<span class="flag">{flag}</span> {meaning}' in legend


def test_report_files_agree_on_start_numbers_without_stored_start_ranks(db: Path, tmp_path: Path) -> None:
    import csv

    con = duckdb.connect(str(db))
    con.execute("UPDATE tournament_players SET start_rank = NULL")  # as after a PGN file
    con.close()
    res = _run("report", "-t", "1", "--db", str(db), "--out", str(tmp_path / "o"))
    assert res.exit_code == 0, res.output

    def rows(suffix: str) -> list[dict[str, str]]:
        path = next((tmp_path / "o").rglob(f"*.{suffix}.csv"))
        with path.open(newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh))

    cross = {r["name"]: r["start_rank"] for r in rows("crosstable")}
    players = {r["name"]: r["start_rank"] for r in rows("players")}
    assert all(cross.values()) and all(players.values())
    assert players == {n: cross[n] for n in players}
    games = rows("games")
    assert games and all(g["start_rank"] == players[g["player"]] for g in games if g["player"] in players)


def test_publish_diff_help_shows_two_values() -> None:
    res = CliRunner().invoke(app, ["publish", "--help"], env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})
    assert res.exit_code == 0
    line = next(line for line in res.output.splitlines() if "--diff" in line and "Compare" in line)
    assert "A B" in line and "str,str" not in line


def test_index_links_every_report_and_list_of_the_folder(db: Path, tmp_path: Path) -> None:
    from elopipe.publish.outputs import publish_outputs

    out = tmp_path / "o"
    con = duckdb.connect(str(db), read_only=True)
    try:
        first = publish_outputs(con, "fide", out, [dt.date(2024, 2, 1)])
        report = next(p for p in first if p.parent.name == "fide" and p.parent.parent.name == "reports")
        report_html = report.with_name(report.name.split(".", 1)[0] + ".html")
        assert report_html.exists()
        # a later run publishes only another list: nothing of the first run is rewritten
        second = publish_outputs(con, "fide", out, [dt.date(2024, 1, 1)])
    finally:
        con.close()
    assert report_html not in second
    index = (out / "index-fide.html").read_text(encoding="utf-8")
    assert f'href="reports/fide/{report_html.name}"' in index
    assert "Spring Open 2024" in index
    assert "lists/fide_2024-02-01.csv" in index and "lists/fide_2024-01-01.csv" in index


def test_ffe_report_in_the_terminal_shows_the_ffe_working(db: Path, tmp_path: Path) -> None:
    rw = duckdb.connect(str(db))
    ffe = {"system": "ffe", "list_date": FEB}
    add_rows(
        rw,
        tournament_ratings=[{**ffe, "tournament_id": 1, "player_id": 1, "n": 2, "score": Decimal("1.5")}],
        ffe_details=[{**ffe, "player_id": 1, "r_old": 2100, "n_compatible": 2, "n_incompatible": 0,
                      "x": Decimal("1777.50"), "p": Decimal("0.7500"), "z": Decimal("193.00"),
                      "perf": Decimal("1970.50"), "young": False, "method": "down", "r_new": 2061, "r_source": "F"}],
    )  # fmt: skip
    rw.close()
    res = CliRunner().invoke(
        app,
        ["report", "-t", "1", "--system", "ffe", "--db", str(db), "--out", str(tmp_path / "o")],
        env={"COLUMNS": "200"},
    )
    assert res.exit_code == 0, res.output
    header = next(line for line in res.output.splitlines() if "SNo" in line).split()
    for col in ("X", "p", "Z", "P", "method", "New"):
        assert col in header
    assert "We" not in header and "Rp" not in header
    row = next(line for line in res.output.splitlines() if "Alpha, Anna" in line).split()
    for value in ("2100", "1777.50", "0.7500", "193.00", "1970.50", "down", "2061"):
        assert value in row


def test_player_found_by_a_spelling_from_a_source_file(db: Path, tmp_path: Path) -> None:
    con = duckdb.connect(str(db))
    con.execute("UPDATE players SET name = 'Ding Liren', name_key = 'ding liren' WHERE player_id = 5")
    add_rows(
        con,
        player_aliases=[{"player_id": 5, "name_as_written": "DING Liren (CHN)", "name_key": "chn ding liren",
                         "match_rule": "fide_id"}],
    )  # fmt: skip
    con.close()
    for ref in ("Ding, Liren", "Liren Ding", "DING Liren (CHN)", "liren (chn"):
        res = _run("player", ref, "--db", str(db), "--out", str(tmp_path / "o"), "--chart", "svg")
        assert res.exit_code == 0, (ref, res.output)
        assert "Ding Liren" in res.output
    from elopipe.publish.history import find_player

    ro = duckdb.connect(str(db), read_only=True)
    try:
        assert find_player(ro, "Charlie, Chloé") == 3  # name as written in the TRF file
        assert find_player(ro, "chloe charlie") == 3  # name_key: order, accents, case
        with pytest.raises(LookupError, match="no player matches"):
            find_player(ro, "Ding, Lirenx")
    finally:
        ro.close()


@pytest.mark.parametrize("n", [1, 2])
def test_short_history_chart_axis_stays_near_the_lists(n: int) -> None:
    from matplotlib.dates import num2date

    from elopipe.publish.charts import Series, render_series, series_figure

    dates = [dt.date(2024, 2, 1), dt.date(2024, 3, 1)][:n]
    fig = series_figure([Series(dates, [1554, 1560][:n])], "x")
    lo, hi = (num2date(x).date() for x in fig.axes[0].get_xlim())
    assert lo <= dates[0] and hi >= dates[-1]
    assert (hi - lo).days <= 120
    assert hi < dt.date(2024, 6, 1) and lo > dt.date(2023, 10, 1)
    assert render_series([Series(dates, [1554, 1560][:n])], "x", fmt="svg").data.startswith(b"<?xml")


def test_library_code_never_leaves_a_duckdb_result_half_fetched():
    # DuckDB 2 refuses con.sql() on a connection whose last execute() result was not fully
    # fetched (ResourceInUseException): fetchone() on a query left a later report crashing
    root = REPO
    offenders = [
        f"{p.relative_to(root)}:{i}"
        for d in ("elopipe", "flows")
        for p in sorted((root / d).rglob("*.py"))
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if ".fetchone()" in line
    ]
    assert offenders == []


def test_tables_are_printed_whole_in_a_narrow_terminal_or_a_pipe(capsys):
    from rich.table import Table

    from elopipe.cli.app import plain_console, print_table

    long = "Tournament " + "x" * 150 + " end"
    table = Table(title="t")
    table.add_column("list")
    table.add_column("tournaments rated")
    table.add_row("2024-06-01", long)
    print_table(table, plain_console(width=80))
    out = capsys.readouterr().out
    assert long in out and "…" not in out


def test_run_on_a_busy_store_fails_at_once_without_prefect(tmp_path: Path) -> None:
    """The lock is taken before Prefect starts: a busy store costs no Prefect start-up and prints
    one line, not Prefect's traceback."""
    import subprocess
    import sys

    db = tmp_path / "busy.duckdb"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom elopipe.store.connect import write_lock\n"
         f"with write_lock({str(db)!r}):\n    print('held', flush=True)\n    sys.stdin.readline()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        pgn = REPO / "sample_pgn" / "wchcand22.pgn"
        res = _run("run", str(pgn), "--db", str(db), "--out", str(tmp_path / "o"), "--lock-timeout", "0")
        assert res.exit_code == 1, res.output
        assert "being written by another elopipe process" in res.output
        said = res.output.replace(str(REPO), "")  # the first line echoes the paths, which may say "prefect"
        assert "Traceback" not in said and "prefect" not in said.lower()
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize(
    ("args", "doing"),
    [
        (["export", "--parquet", "{out}"], "export to"),
        (["report", "--tournament", "1", "--out", "{out}"], "write reports to"),
        (["player", "1", "--out", "{out}"], "write player pages to"),
        (["compare", "fide", "ffe", "--out", "{out}"], "write the comparison to"),
    ],
    ids=["export", "report", "player", "compare"],
)
def test_an_output_path_that_is_a_file_is_one_line_without_traceback(db: Path, tmp_path: Path, args, doing) -> None:
    """An `--out`/`--parquet` that names a file, not a folder: one line before any work, as
    `publish` says it, exit 2 (it was the system's reason after the report was printed, exit 1);
    the file is left as it was."""
    out = tmp_path / "a_file"
    out.write_text("keep me\n")
    res = _run(*[a.format(out=out) for a in args], "--db", str(db))
    assert (res.exit_code, res.output) == (
        2,
        f"elopipe {args[0]}: error: cannot {doing} {out}: it is a file, not a folder\n",
    )
    assert out.read_text() == "keep me\n"


def test_a_library_error_is_printed_once_with_its_exit_code(tmp_path: Path) -> None:
    """An ElopipeError (here: no store at the path given) reaches the terminal once, as its message."""
    res = _run("sql", "SELECT 1", "--db", str(tmp_path / "missing.duckdb"))
    assert res.exit_code == 1
    assert res.output.count("no database at") == 1, res.output
    assert "Traceback" not in res.output and "StoreMissingError" not in res.output


def test_rate_on_a_mistyped_store_says_so_and_creates_none(tmp_path: Path) -> None:
    """`rate` reads what was ingested: a --db with no store is refused as `sql` refuses it, and no
    empty store is left behind (a fresh user's finding: it said 'no games to rate', exit 0)."""
    missing = tmp_path / "missing.duckdb"
    res = _run("rate", "--system", "fide", "--db", str(missing))
    assert res.exit_code == 1, res.output
    assert res.output.count("no database at") == 1 and "Traceback" not in res.output, res.output
    assert list(tmp_path.iterdir()) == []


def test_a_drop_folder_is_created_in_a_line_and_a_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """watch and serve: a mistyped inbox is not watched in silence (a fresh user's finding)."""
    from elopipe.cli.app import drop_folder_path

    inbox = tmp_path / "a" / "inbox"
    assert drop_folder_path(inbox) == (inbox.resolve(), f"created the drop folder {inbox.resolve()}")
    assert inbox.is_dir()
    assert drop_folder_path(inbox) == (inbox.resolve(), None)  # an existing one is taken as it is
    assert capsys.readouterr().err == ""  # said by the command, after its first line
    res = _run("watch", str(REPO / "README.md"), "--db", str(tmp_path / "s.duckdb"))
    assert res.exit_code == 2 and "not a folder" in res.output, res.output


ELOPIPE = str(Path(sys.executable).with_name("elopipe"))


@pytest.mark.parametrize(
    "args",
    [
        ["sql", "select range from range(100000)", "--format", "csv"],
        ["sql", "select range from range(3000)", "--limit", "3000"],
        ["players", "split", "--help"],
    ],
)
def test_a_reader_that_closes_the_pipe_ends_the_command_quietly(db: Path, args: list[str]) -> None:
    # `elopipe ... | head -2`: the reader is gone before the command writes (its end is closed
    # here at once), so every write meets EPIPE; the command stops as SIGPIPE would, in silence
    full = [*args, "--db", str(db)] if args[0] == "sql" else args
    proc = subprocess.Popen([ELOPIPE, *full], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == ""


def test_version_prints_the_installed_version() -> None:
    import elopipe

    res = _run("--version")
    assert res.exit_code == 0
    assert res.output.strip() == f"elopipe {elopipe.__version__}"


def test_scenarios_show_and_drop_name_the_store_alike(db: Path) -> None:
    shown, dropped = (
        _run("scenarios", "show", "nosuch", "--db", str(db)),
        _run("scenarios", "drop", "nosuch", "--db", str(db)),
    )
    assert shown.exit_code == dropped.exit_code == 1
    said = f"no scenario 'nosuch' in {db} (see `elopipe scenarios list --db {db}`)\n"
    assert (shown.output, dropped.output) == (
        f"elopipe scenarios show: error: {said}",
        f"elopipe scenarios drop: error: {said}",
    )


def test_rate_counts_one_list_in_the_singular(db: Path) -> None:
    res = _run("rate", "--system", "ffe", "--db", str(db))
    assert res.exit_code == 0, res.output
    assert "ffe: 1 list (2024-05-01 .. 2024-05-01), 3 players rated on the last list" in res.output
    assert "rewritten from 2024-05-01: 1 list\n" in res.output


def test_a_store_error_no_command_expected_is_one_line_and_exit_1(monkeypatch, capsys) -> None:
    """A DuckDB error no command expected (a COMMIT refused when the store's folder was made
    read-only while its lock file stays) is one line naming the reason, not a traceback."""
    import elopipe.cli.main as cli_main
    from elopipe.store import write

    con = duckdb.connect()
    con.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")

    def failing_command() -> None:
        with write.transaction(con):
            con.execute("INSERT INTO t VALUES (1), (1)")  # the error raised inside the transaction

    monkeypatch.setattr(cli_main, "load_app", lambda name: failing_command)
    monkeypatch.setattr(sys, "argv", ["elopipe", "rate"])
    with pytest.raises(SystemExit) as stop:
        cli_main.main()
    assert stop.value.code == 1
    err = capsys.readouterr().err
    assert err == (
        "elopipe rate: error: the store could not be read or written:"
        ' PRIMARY KEY or UNIQUE constraint violation: duplicate key "1"\n'
    ), err
    assert "Traceback" not in err


def test_a_ctrl_c_duckdb_reports_as_a_runtime_error_is_one_line_exit_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB turns a Ctrl-C during a query (identity's joins in an ingest, a publish's reads)
    into RuntimeError('Query interrupted'): the command ends as after any Ctrl-C, one line and
    status 130, not a traceback and status 1 (a hostile tester, about half his Ctrl-Cs)."""
    from elopipe.jobs import ingest as ingest_jobs

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("Query interrupted")

    monkeypatch.setattr(ingest_jobs, "ingest", interrupted)
    pgn = tmp_path / "g.pgn"
    pgn.write_text('[White "A, B"]\n[Black "C, D"]\n[Result "1-0"]\n\n1. e4 1-0\n', encoding="utf-8")
    res = CliRunner().invoke(app, ["ingest", str(pgn), "--db", str(tmp_path / "s.duckdb")])
    assert res.exit_code == 130, res.output
    assert res.output.strip() == "interrupted (Ctrl-C)"


@pytest.mark.slow
def test_watch_whose_reader_closes_the_pipe_ends_with_141(tmp_path: Path, prefect_harness: str) -> None:
    """`elopipe watch ... 2>&1 | head -2`: the closed pipe ended `watch` with exit 1, as a failed
    batch (Click's Exit, a RuntimeError, was caught as one); 141 as `run` and the others."""
    args = ["watch", str(tmp_path / "inbox"), "--db", str(tmp_path / "s.duckdb"), "--out", str(tmp_path / "out")]
    env = {**os.environ, "PREFECT_API_URL": prefect_harness}
    proc = subprocess.Popen([ELOPIPE, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    assert proc.stdout is not None
    proc.stdout.close()
    assert proc.wait(timeout=300) == 141


def test_a_sigterm_stops_publish_in_one_line(db: Path, tmp_path: Path) -> None:
    """A SIGTERM ended `publish` in silence (exit 143, its manifest not saved); it stops as a
    Ctrl-C does, said in one line, exit 130. The publish is caught waiting for a writer of the
    store, which it says first."""
    writer = duckdb.connect(str(db))  # another process writes the store: publish waits for it
    try:
        args = ["publish", "--system", "fide", "--db", str(db), "--out", str(tmp_path / "out"), "--wait", "600"]
        proc = subprocess.Popen([ELOPIPE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None
        assert "waiting up to 600 s" in proc.stderr.readline()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        writer.close()
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "stopped (SIGTERM)", err
    assert "Traceback" not in err + out


CLOSED_PIPE_LINES = """
import sys, typer
from elopipe.cli.commands.live_status import lines_to_a_closed_pipe
from elopipe.runtime.interrupt import output_was_closed, stop_requested
out = open(sys.argv[1], "w")
kind = sys.argv[2]
error = {"pipe": BrokenPipeError(), "exit": typer.Exit(141), "rich": SystemExit(1), "other": typer.Exit(2)}[kind]
try:
    with lines_to_a_closed_pipe():
        raise error
except BaseException as exc:
    out.write(f"raised {type(exc).__name__} ")
out.write(f"{output_was_closed()} {stop_requested()}")
"""


@pytest.mark.parametrize(("kind", "said"), [("pipe", "True True"), ("exit", "True True"), ("rich", "True True"),
                                           ("other", "raised Exit False False")])  # fmt: skip
def test_a_closed_pipe_met_in_a_thread_or_a_log_handler_stops_the_command(tmp_path: Path, kind: str, said: str) -> None:
    """`watch ... 2>&1 | head -2`: the pipe closed under a line said from the heartbeat's thread or a
    logging handler, where the error ended that thread alone (or logging swallowed it), and
    `watch` went on headless, taking files. Now it stops the command as a SIGPIPE would: the
    stop is requested and the command ends with 141 (`cli.main`); another exit goes on up."""
    report = tmp_path / "report.txt"
    subprocess.run([sys.executable, "-c", CLOSED_PIPE_LINES, str(report), kind], check=True, cwd=REPO)
    assert report.read_text() == said
