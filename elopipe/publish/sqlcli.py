"""Run one SQL query on the store, read-only, and format the result (`elopipe sql`).

The database is opened with `elopipe.store.connect.open_reader` (DuckDB `read_only=True`), so a
query never changes the store and works while another process reads it. If DuckDB
refuses to open the file (another process holds its write lock) `StoreBusyError` says so.

The connection is also sandboxed: DuckDB's `enable_external_access=False` (then the
configuration is locked), so a query reads only the store's own tables and views: `COPY ... TO`,
`EXPORT DATABASE`, `ATTACH`, `read_text('/etc/passwd')`, `read_csv(...)`, `INSTALL` are refused
with a `QueryError`. One statement per call: several statements are refused (`UsageError`), as is
an empty query.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import decimal
import io
import json
import math
import os
import signal
import threading
import uuid
from collections.abc import Iterator
from typing import Any, TextIO

import duckdb

from elopipe.read.control_chars import escape_controls
from elopipe.runtime.errors import ElopipeError, engine_message
from elopipe.store.connect import open_reader

FORMATS = ("table", "csv", "json")


class QueryError(ElopipeError, RuntimeError):
    """DuckDB rejected the query (syntax, unknown table, a write on a read-only store, or a
    file access refused by the sandbox)."""


class QueryInterrupted(QueryError):
    """Ctrl-C stopped the query."""


class UsageError(ElopipeError, ValueError):
    """The query text is not one SQL statement (empty, or several statements)."""

    exit_code = 2


def check_query(query: str) -> None:
    """Raise UsageError unless `query` is exactly one SQL statement (a syntax error is left
    to DuckDB, which reports it as a QueryError)."""
    if not query.strip():
        raise UsageError("the query is empty; give one SQL statement, e.g. elopipe sql 'SELECT * FROM v_rating_list'")
    try:
        n = len(duckdb.extract_statements(query))
    except duckdb.Error:
        return
    if n == 0:
        raise UsageError("the query holds no SQL statement")
    if n > 1:
        raise UsageError(f"the query holds {n} statements; elopipe sql runs one statement per call")


def _explain(exc: duckdb.Error) -> str:
    """DuckDB's refusal in one line (`engine_message`), with what elopipe sql allows when the
    query wrote or reached outside the store."""
    msg = engine_message(exc)
    low = msg.lower()
    if isinstance(exc, duckdb.InterruptException):
        return "the query was stopped: it ran longer than the time limit (--timeout)"
    if "read-only" in low or "read only" in low:
        msg += " (elopipe sql opens the store read-only; use the elopipe commands to write)"
    elif isinstance(exc, duckdb.PermissionException) or "disabled by configuration" in low:
        msg += " (elopipe sql reads only the store's tables and views: no file reads, writes or exports)"
    return msg


@contextlib.contextmanager
def open_query(
    db: str | os.PathLike[str], query: str, timeout: float | None = None
) -> Iterator[tuple[list[str], duckdb.DuckDBPyConnection]]:
    """Run `query` on `db` opened read-only and sandboxed; yield its column names and the
    cursor to fetch rows from (closed on exit).

    `timeout` (seconds, None = no limit) interrupts the query, fetching included, when it
    runs longer: a dashboard or script never hangs on a runaway query. Ctrl-C (in the main
    thread) interrupts it too.

    Raises UsageError (empty query, several statements, a `timeout` not a number of seconds),
    FileNotFoundError (no database),
    elopipe.store.connect.StoreBusyError (DuckDB refused to open it), QueryError (DuckDB rejected
    the query, with its message, or the timeout stopped it), QueryInterrupted (Ctrl-C stopped it).
    """
    check_query(query)
    if timeout is not None and (math.isnan(timeout) or timeout < 0):
        raise UsageError(f"--timeout must be a number of seconds, 0 or more, not {timeout}")
    if timeout is not None and timeout > threading.TIMEOUT_MAX:
        timeout = None  # longer than a timer can wait (about 292 years): no limit
    con = open_reader(db, external_access=False)
    stopper = _Stopper(con)
    timer = threading.Timer(timeout, stopper.stop) if timeout else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        with _ctrl_c_stops(stopper) as ctrl_c:
            try:
                try:
                    cur = con.execute(query)
                except duckdb.Error as exc:
                    raise QueryError(_explain(exc)) from exc
                cols = [] if cur.description is None else [d[0] for d in cur.description]
                yield cols, cur
            except QueryError:
                if ctrl_c.is_set():
                    raise QueryInterrupted("the query was stopped (Ctrl-C)") from None
                raise
    finally:
        if timer is not None:
            timer.cancel()
        stopper.end()
        con.close()


class _Stopper:
    """Interrupts the query on a connection from any thread, however early: a stop (timeout or
    Ctrl-C) can come before DuckDB has begun the query, when an interrupt has nothing to stop
    (and DuckDB clears it as a query begins). So after `stop()` a thread interrupts again every
    50 ms until `end()`, which the owner calls before closing the connection."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con
        self._lock = threading.Lock()
        self._ended = threading.Event()
        self._thread: threading.Thread | None = None

    def stop(self) -> None:
        with self._lock:
            if self._thread is None and not self._ended.is_set():
                self._thread = threading.Thread(target=self._interrupt, name="elopipe-stop-query", daemon=True)
                self._thread.start()

    def end(self) -> None:
        with self._lock:
            self._ended.set()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _interrupt(self) -> None:
        while True:
            self._con.interrupt()
            if self._ended.wait(0.05):
                return


@contextlib.contextmanager
def _ctrl_c_stops(stopper: _Stopper) -> Iterator[threading.Event]:
    """While the block runs, Ctrl-C stops the DuckDB query (which otherwise runs on in C++ and
    ignores the signal) and sets the yielded event. Main thread only; elsewhere the event stays
    unset and signals are left alone."""
    pressed = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield pressed
        return

    def on_sigint(_signum: int, _frame: object) -> None:
        pressed.set()
        stopper.stop()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, previous)


def fetch_batches(cur: duckdb.DuckDBPyConnection, size: int = 10_000) -> Iterator[list[tuple[Any, ...]]]:
    """The remaining rows of `cur`, `size` at a time. Raises QueryError if DuckDB fails mid-way
    (or a timeout of `open_query` interrupted it)."""
    while True:
        try:
            rows = cur.fetchmany(size)
        except duckdb.Error as exc:
            raise QueryError(_explain(exc)) from exc
        if not rows:
            return
        yield rows


def run_query(db: str | os.PathLike[str], query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Column names and rows of `query` on `db` opened read-only (see `open_query`)."""
    with open_query(db, query) as (cols, cur):
        if not cols:
            return [], []
        return cols, [r for batch in fetch_batches(cur) for r in batch]


def _plain(value: Any) -> Any:
    """`value` as JSON holds it: decimals as strings (exact), dates ISO 8601, BLOBs and
    intervals in DuckDB's text form, UUIDs as text, LIST/STRUCT/MAP as arrays and objects, a
    float that is no number ('nan', 'inf', '-inf') as text."""
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return _blob_text(bytes(value))
    if isinstance(value, dt.timedelta):
        return _interval_text(value)
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # 'nan', 'inf', '-inf' as DuckDB writes them: JSON has no such number
    return value


def _blob_text(data: bytes) -> str:
    """DuckDB's text form of a BLOB: printable ASCII as is, every other byte as \\xNN."""
    return "".join(chr(b) if 32 <= b < 127 and b != 92 else f"\\x{b:02X}" for b in data)


def _interval_text(value: dt.timedelta) -> str:
    """An INTERVAL as DuckDB writes it: '3 days 04:05:06' (days, then the time of day)."""
    days, rest = divmod(value, dt.timedelta(days=1))
    secs = rest.total_seconds()
    hh, mm, ss = int(secs // 3600), int(secs % 3600 // 60), secs % 60
    time = f"{hh:02d}:{mm:02d}:{ss:09.6f}".rstrip("0").rstrip(".") if ss % 1 else f"{hh:02d}:{mm:02d}:{int(ss):02d}"
    if not days:
        return time
    return f"{days} day{'s' if abs(days) != 1 else ''} {time}"


def _csv_cell(value: Any) -> Any:
    """One CSV field: NULL empty; BOOLEAN true/false; LIST, STRUCT and MAP as JSON text (a CSV
    reader or a spreadsheet reads them back; a Python repr would not); the rest as `_plain`."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple | dict):
        return json.dumps(_plain(value), ensure_ascii=False)
    return _plain(value)


def text_cell(value: Any) -> str:
    """One value as text for the terminal's table: as its CSV field (`_csv_cell`), its control
    characters but newlines written \\xNN (`escape_controls`): a stored escape code (a raw line
    kept as the file wrote it) or a query's chr(27) is shown, never run by the terminal. CSV and
    JSON give the values as they are."""
    return escape_controls(str(_csv_cell(value)), keep_newlines=True)


def to_csv(cols: list[str], rows: list[tuple[Any, ...]]) -> str:
    """CSV text with a header line; NULL is an empty field; decimals keep their digits."""
    buf = io.StringIO()
    write_csv(buf, cols, [rows])
    return buf.getvalue()


def write_csv(out: TextIO, cols: list[str], batches: Any) -> int:
    """Write a header line and every row of `batches` (iterable of row lists) as CSV to `out`
    (fields as `_csv_cell`); return the row count."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(cols)
    n = 0
    for rows in batches:
        for r in rows:
            w.writerow([_csv_cell(v) for v in r])
        n += len(rows)
    return n


def write_json(out: TextIO, cols: list[str], batches: Any) -> int:
    """Write the rows of `batches` as a JSON array of objects (as `to_json`) to `out`, one
    object after the other; return the row count."""
    out.write("[")
    n = 0
    for rows in batches:
        for r in rows:
            obj = {c: _plain(v) for c, v in zip(cols, r, strict=True)}
            out.write(("\n" if n == 0 else ",\n") + json.dumps(obj, ensure_ascii=False))
            n += 1
    out.write("\n]\n" if n else "]\n")
    return n


def to_json(cols: list[str], rows: list[tuple[Any, ...]]) -> str:
    """A JSON array of objects, one per row; decimals as strings (exact), dates ISO 8601."""
    data = [{c: _plain(v) for c, v in zip(cols, r, strict=True)} for r in rows]
    return json.dumps(data, ensure_ascii=False, indent=1)
