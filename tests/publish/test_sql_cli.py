"""`elopipe sql` (read-only, formats, clear failures) and `elopipe export --parquet`."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish import sqlcli
from elopipe.publish.export import export_parquet
from elopipe.publish.sqlcli import QueryError, run_query
from elopipe.store.connect import StoreBusyError
from elopipe.store.schema import ensure_schema
from tests.helpers.paths import REPO
from tests.helpers.publish_store import build_store

Q = "SELECT name, rating FROM v_rating_list ORDER BY rank LIMIT 2"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_store(tmp_path / "s.duckdb")


def test_formats(db: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["sql", Q, "--db", str(db), "--format", "csv"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines() == ["name,rating", '"Alpha, Anna",2096', '"Bravo, Bruno",1854']
    res = runner.invoke(
        app,
        [
            "sql",
            "SELECT pd, list_date FROM rating_changes WHERE pd IS NOT NULL LIMIT 1",
            "--db",
            str(db),
            "--format",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.output) == [{"pd": "0.76", "list_date": "2024-02-01"}]
    res = runner.invoke(app, ["sql", Q, "--db", str(db)])
    assert res.exit_code == 0 and "Alpha, Anna" in res.output and "2 rows" in res.output


def test_writes_are_refused_with_a_clear_message(db: Path) -> None:
    with pytest.raises(QueryError, match="read-only"):
        run_query(db, "DELETE FROM players")
    res = CliRunner().invoke(app, ["sql", "DROP TABLE players", "--db", str(db)])
    assert res.exit_code == 1
    assert "read-only" in res.output
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM players").fetchall() == [(7,)]
    con.close()


def test_bad_query_and_missing_db(tmp_path: Path, db: Path) -> None:
    res = CliRunner().invoke(app, ["sql", "SELEC 1", "--db", str(db)])
    assert res.exit_code == 1 and "query failed" in res.output
    res = CliRunner().invoke(app, ["sql", "SELECT 1", "--db", str(tmp_path / "none.duckdb")])
    assert res.exit_code == 1 and "no database" in res.output
    res = CliRunner().invoke(app, ["sql", "SELECT 1", "--db", str(db), "--format", "xml"])
    assert res.exit_code == 2


def test_busy_store_fails_clearly(db: Path) -> None:
    # Another process holds DuckDB's write lock on the file.
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('ok', flush=True); sys.stdin.readline()",
            str(db),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ok"
        with pytest.raises(StoreBusyError, match=rf"being written by another program \(\S+, PID {holder.pid}\)"):
            run_query(db, Q)
        # `sql` waits for the writer (default 60 s); after --wait it gives up with the reason,
        # naming the process, in elopipe's words rather than DuckDB's (which speak of its CLI)
        res = CliRunner().invoke(app, ["sql", Q, "--db", str(db), "--wait", "1"])
        out = " ".join(res.output.split())
        assert res.exit_code == 1 and f"PID {holder.pid}" in out and "waiting up to 1 s" in out
        assert "Could not set lock" not in out and "-readonly" not in out
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.1)
    assert run_query(db, Q)[1][0][0] == "Alpha, Anna"


def test_export_parquet_partitions(db: Path, tmp_path: Path) -> None:
    con = duckdb.connect(str(db), read_only=True)
    try:
        paths = export_parquet(con, tmp_path / "pq")
    finally:
        con.close()
    out = tmp_path / "pq"
    assert out / "rating_lists" in paths and out / "players.parquet" in paths
    parts = sorted(p.relative_to(out / "rating_lists").parts[:2] for p in (out / "rating_lists").rglob("*.parquet"))
    assert parts == [("system=fide", "list_date=2024-01-01"), ("system=fide", "list_date=2024-02-01")]
    back = pl.read_parquet(out / "rating_lists" / "**" / "*.parquet", hive_partitioning=True)
    assert back.height == 11
    assert pl.read_parquet(out / "players.parquet").height == 7
    # an empty partitioned table keeps its schema as one file
    assert (out / "rating_discrepancies.parquet").exists()
    res = CliRunner().invoke(app, ["export", "--parquet", str(tmp_path / "pq2"), "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "pq2" / "tournament_ratings").is_dir()


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_a_runaway_query_stops_at_the_timeout(db: Path, fmt: str) -> None:
    runaway = "SELECT count(*) FROM range(100000000000) a"
    res = CliRunner().invoke(app, ["sql", runaway, "--db", str(db), "--format", fmt, "--timeout", "0.5"])
    assert res.exit_code == 1
    assert "time limit" in res.output
    # a quick query is not affected by the limit
    ok = CliRunner().invoke(app, ["sql", Q, "--db", str(db), "--format", "csv", "--timeout", "30"])
    assert ok.exit_code == 0 and ok.output.count("\n") == 3


@pytest.mark.parametrize("by", ["timeout", "ctrl-c"])
def test_a_stop_before_the_query_begins_still_stops_it(db: Path, by: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a loaded machine the time limit can pass, or Ctrl-C land, after the store is open but
    before DuckDB has begun the query, when an interrupt has nothing to stop yet."""
    real = sqlcli._ctrl_c_stops

    @contextlib.contextmanager
    def early(stopper: sqlcli._Stopper) -> Iterator[threading.Event]:
        with real(stopper) as pressed:
            if by == "ctrl-c":
                os.kill(os.getpid(), signal.SIGINT)  # the handler runs before the next line
            else:
                timer = threading.Thread(target=stopper.stop)
                timer.start()
                timer.join()
            yield pressed

    monkeypatch.setattr(sqlcli, "_ctrl_c_stops", early)
    # about a minute of work if nothing stops it, so a regression fails instead of hanging
    runaway = "SELECT count(*) FROM range(100000000000) a"
    expected = sqlcli.QueryInterrupted if by == "ctrl-c" else QueryError
    with pytest.raises(expected) as info:
        run_query(db, runaway)
    assert ("Ctrl-C" if by == "ctrl-c" else "time limit") in str(info.value)


@pytest.mark.parametrize(("value", "code"), [("inf", 0), ("1e300", 0), ("nan", 2)])
def test_a_timeout_too_long_for_a_timer_is_no_limit_and_nan_is_refused(db: Path, value: str, code: int) -> None:
    res = CliRunner().invoke(app, ["sql", Q, "--db", str(db), "--format", "csv", "--timeout", value])
    assert res.exit_code == code, res.output
    assert "Traceback" not in res.output and "Exception in thread" not in res.output
    if code == 2:
        assert res.output.strip() == "elopipe sql: error: --timeout must be a number of seconds, 0 or more, not nan"
    else:
        assert res.output.splitlines()[0] == "name,rating"


def test_a_ctrl_c_while_the_store_opens_is_not_lost(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DuckDB turns a Ctrl-C during its connect into its own error: the look for a writer must
    pass it on, not take it for a store it cannot open (the query then ran to its end)."""
    from elopipe.jobs import store as job_store

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("Query interrupted")

    monkeypatch.setattr(job_store, "open_reader", interrupted)
    with pytest.raises(KeyboardInterrupt):
        job_store.wait_for_writer(db, 10, lambda _message: None)


def test_sql_waits_while_another_process_writes(tmp_path: Path) -> None:
    """DuckDB lets one process write a file or several read it, not both: `sql` waits for the
    writer (`--wait`), or says the store is busy."""
    db = tmp_path / "busy.duckdb"
    con = duckdb.connect(str(db))
    ensure_schema(con)  # an elopipe store (a foreign database is refused), with a table of the test's
    con.execute("CREATE TABLE t AS SELECT 42 AS x").close()
    # a writer that closes the store when a line comes on its stdin
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys; c = duckdb.connect({str(db)!r}); print('open', flush=True); sys.stdin.readline()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        busy = CliRunner().invoke(app, ["sql", "SELECT x FROM t", "--db", str(db), "--wait", "0"])
        busy_out = " ".join(busy.output.split())
        assert busy.exit_code == 1
        assert re.search(rf"being written by another program \(\S+, PID {holder.pid}\)", busy_out), busy_out
        elopipe = Path(sys.executable).with_name("elopipe")
        waiter = subprocess.Popen(
            [str(elopipe), "sql", "SELECT x FROM t", "--db", str(db), "--format", "csv", "--wait", "30"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert waiter.stderr is not None
        said = waiter.stderr.readline()
        assert "waiting" in said, said  # it waits for the writer, and says so; then the writer ends
        assert holder.stdin is not None
        holder.stdin.write("done\n")
        holder.stdin.close()
        out, err = waiter.communicate(timeout=120)
        assert waiter.returncode == 0, err
        assert out.splitlines() == ["x", "42"]
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(timeout=30)


def _hold_open_read_only(db: Path) -> subprocess.Popen:
    """A process that keeps the store open read-only, as a long `elopipe sql` query does."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); print('ok', flush=True);"
            " sys.stdin.readline()",
            str(db),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "ok"
    return holder


def test_ingest_gives_up_after_wait_when_a_reader_holds_the_store(db: Path) -> None:
    holder = _hold_open_read_only(db)
    try:
        pgn = REPO.parent / "shared" / "data" / "pgn" / "wchcand22.pgn"
        res = CliRunner().invoke(app, ["ingest", str(pgn), "--db", str(db), "--wait", "1"])
        out = " ".join(res.output.split())
        assert res.exit_code == 1, res.output
        assert re.search(rf"held open by another program \(\S+, PID {holder.pid}\)", out), out
        assert "Traceback" not in out and "Could not set lock" not in out
    finally:
        holder.kill()
        holder.wait()


NESTED = (
    "SELECT ['a', 'b'] AS l, {'x': 1, 'y': [1, 2]} AS s, true AS b, 'ab\\x00\\xFF'::BLOB AS bl,"
    " INTERVAL 3 DAY + INTERVAL 4 HOUR AS iv, NULL AS n"
)


def test_nested_values_are_written_as_a_csv_reader_expects(db: Path) -> None:
    """LIST and STRUCT as JSON text, BOOLEAN true/false, BLOB and INTERVAL in DuckDB's text form:
    never Python's ['a', 'b'], True, b'...' or timedelta (issue 17)."""
    runner = CliRunner()
    res = runner.invoke(app, ["sql", NESTED, "--db", str(db), "--format", "csv"])
    assert res.exit_code == 0, res.output
    (row,) = pl.read_csv(res.output.encode(), infer_schema=False).rows()
    assert json.loads(row[0]) == ["a", "b"] and json.loads(row[1]) == {"x": 1, "y": [1, 2]}
    assert row[2:] == ("true", "ab\\x00\\xFF", "3 days 04:00:00", None)
    res = runner.invoke(app, ["sql", NESTED, "--db", str(db), "--format", "json"])
    assert json.loads(res.output) == [
        {"l": ["a", "b"], "s": {"x": 1, "y": [1, 2]}, "b": True, "bl": "ab\\x00\\xFF", "iv": "3 days 04:00:00",
         "n": None}
    ]  # fmt: skip
    res = runner.invoke(app, ["sql", NESTED, "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert '["a", "b"]' in res.output and "['a'" not in res.output and "True" not in res.output


def test_a_float_that_is_no_number_is_valid_json_and_the_same_text_in_csv(db: Path) -> None:
    """`--format json` wrote NaN and Infinity, which no JSON reader takes (a hostile tester)."""
    query = "SELECT 'NaN'::DOUBLE AS n, 'inf'::DOUBLE AS f, '-inf'::DOUBLE AS g, [1.5, 'nan'::DOUBLE] AS l"
    runner = CliRunner()
    res = runner.invoke(app, ["sql", query, "--db", str(db), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output, parse_constant=lambda c: pytest.fail(f"not JSON: {c}")) == [
        {"n": "nan", "f": "inf", "g": "-inf", "l": [1.5, "nan"]}
    ]
    res = runner.invoke(app, ["sql", query, "--db", str(db), "--format", "csv"])
    assert res.output.splitlines() == ["n,f,g,l", 'nan,inf,-inf,"[1.5, ""nan""]"']
