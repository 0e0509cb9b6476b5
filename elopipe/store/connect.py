"""Opening the DuckDB store: one writer at a time, readers read-only.

DuckDB allows one writer process per file. Every write goes through `open_writer`,
which first takes an exclusive lock on `<db>.lock` (fcntl, released by the OS if the
process dies) so that a second writer waits with a message instead of failing inside
DuckDB. Readers use `open_reader`, which opens the file read-only.

Bad `--db` paths fail before anything is created, with `StorePathError`: a folder, an existing
file that is not a DuckDB database (no `victim.pgn.lock` is left beside it), a lock file that
cannot be created (read-only folder). A reader never creates anything. A writer given a path in
a folder that does not exist creates that folder (a new store is a normal first step) and says
so through its `on_wait` callback.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import duckdb

from elopipe.read.sources import is_text
from elopipe.runtime.errors import ElopipeError, first_line
from elopipe.runtime.hints import DEFAULT_STORE, command_hint
from elopipe.store.schema import ensure_schema

DEFAULT_DB = DEFAULT_STORE


class StorePathError(ElopipeError):
    """`db` cannot be a store: a folder, a file that is not a DuckDB database, or a place where
    the lock file cannot be created. The CLI shows it as a usage error (exit 2)."""


# Bytes 8-11 of every DuckDB database file (its main header).
_DUCKDB_MAGIC = b"DUCK"


def check_store_path(db: str | os.PathLike[str]) -> None:
    """Raise StorePathError if `db` exists and is not a DuckDB database file (a folder, a PGN,
    /proc/self/status, ...). A missing or empty file passes (a writer refuses an empty one once it
    opens it, which DuckDB refuses, and then removes the lock file it made; `require_store` refuses
    it before)."""
    path = Path(db)
    if not is_text(os.fspath(db)):
        raise StorePathError("the store's path is not valid UTF-8 text (DuckDB cannot open it); rename it")
    if path.is_dir():
        raise StorePathError(f"{db} is a folder; give the store's DuckDB file, e.g. {path / DEFAULT_DB}")
    wal = Path(f"{os.fspath(db)}.wal")
    if wal.exists() and not wal.is_file():  # DuckDB would open it and hang, even for a new store
        raise StorePathError(f"{wal} beside the store is not a regular file; remove it")
    if not path.exists():
        return
    if not path.is_file():  # opening a FIFO would hang, a device would read for ever
        raise StorePathError(f"{db} is not a regular file (a pipe, a socket or a device); give a store file")
    try:
        with open(path, "rb") as fh:
            head = fh.read(12)
    except OSError as exc:
        raise StorePathError(f"{db} cannot be read: {exc.strerror or exc}") from None
    if head and head[8:12] != _DUCKDB_MAGIC:
        raise StorePathError(
            f"{db} is not a DuckDB database (elopipe's store); give a store file, or a new name to create one"
        )


class StoreMissingError(ElopipeError, FileNotFoundError):
    """No store at the path a reader was given."""


class StoreBusyError(ElopipeError, RuntimeError):
    """Another process holds the write lock (or DuckDB's own lock) and did not release it in time."""


class StoreFullError(ElopipeError, RuntimeError):
    """The disk (or the quota) holding the store is full: a write failed and was rolled back, so
    the store is intact. The message names the disk and what was being written."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        # what was committed before the write that did not fit (elopipe.ingest.loader.load_batch sets it)
        self.loaded: Sequence[object] = []


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and the exceptions it was raised from or during: a failed ROLLBACK or cleanup after a
    failed statement hides the cause, which is what the user did (Ctrl-C) or met (a full disk)."""
    seen: BaseException | None = exc
    while seen is not None:
        yield seen
        # `raise ... from None` ends the chain, as Python's own report of it does: a command that
        # turned an error into its exit (typer.Exit from a query's timeout) is that exit
        seen = seen.__cause__ or (None if seen.__suppress_context__ else seen.__context__)


def is_interrupt(exc: BaseException) -> bool:
    """True for a Ctrl-C: KeyboardInterrupt, or the error a library made of it (DuckDB's
    InterruptException, 'Query interrupted' or 'INTERRUPT Error', or a KeyboardInterrupt raised in
    a Python callback that DuckDB or Polars reports as its own error), also when a later error
    (a cleanup statement in the aborted transaction) was raised while handling it."""
    return any(_one_interrupt(e) for e in _chain(exc))


def _one_interrupt(exc: BaseException) -> bool:
    if isinstance(exc, (KeyboardInterrupt, duckdb.InterruptException)):
        return True
    text = str(exc).strip().lower()
    return text == "query interrupted" or text.startswith("interrupt error") or "keyboardinterrupt" in text


def is_disk_full(exc: BaseException) -> bool:
    """True for a write that failed because the disk or the quota is full (an OSError, or DuckDB's
    IOException/TransactionException, which carry the system's text)."""
    for seen in _chain(exc):  # a failed ROLLBACK after a failed COMMIT hides the cause
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        text = str(seen)
        if "No space left on device" in text or "Disk quota exceeded" in text:
            return True
    return False


def disk_full_message(path: str | os.PathLike[str], writing: str) -> str:
    """One line for the user: which disk is full (its mount point) and what could not be written."""
    where = Path(os.path.abspath(path))
    mount = where if where.is_dir() else where.parent
    while not os.path.ismount(mount) and mount != mount.parent:
        mount = mount.parent
    return (
        f"the disk holding {path} (mounted at {mount}) is full: {writing} was not written;"
        " free some space and run the command again"
    )


def lock_path(db: str | os.PathLike[str]) -> Path:
    return Path(f"{os.fspath(db)}.lock")


# Locks this process holds, by lock-file path: (fd, depth). flock locks belong to an open file
# description, so a second os.open + flock in the same process would block on itself; nested
# `write_lock` calls (a pipeline holding the lock while its stages open writers) re-enter instead.
_held: dict[str, list[int]] = {}
_held_guard = threading.Lock()


def holds_write_lock(db: str | os.PathLike[str]) -> bool:
    """True when this process holds the write lock of `db`."""
    with _held_guard:
        return os.path.realpath(lock_path(db)) in _held


@contextlib.contextmanager
def write_lock(
    db: str | os.PathLike[str],
    timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Hold the exclusive write lock of `db` (an flock on `<db>.lock`).

    `timeout` None waits for ever; 0 fails at once. `on_wait` gets one message when
    we start waiting (and one when it creates the store's missing folder). Raises StoreBusyError
    on timeout, StorePathError (before creating anything) if `db` is a folder or not a DuckDB
    file, or the lock file cannot be created. The lock is per process and
    re-entrant: a nested call in the process that holds it (any thread) returns at once.
    The OS releases it when the process dies, so a killed run never leaves it stuck.
    """
    path = lock_path(db)
    key = os.path.realpath(path)
    with _held_guard:
        if key in _held:
            _held[key][1] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield
        finally:
            with _held_guard:
                _held[key][1] -= 1
        return

    check_store_path(db)
    _make_parent(Path(db), on_wait)
    if path.exists() and not path.is_file():
        raise StorePathError(f"the lock file {path} beside the store is not a regular file; remove it")
    try:
        fd, created = _open_lock_file(path)
    except OSError as exc:
        raise StorePathError(
            f"cannot create the lock file {path} beside the store: {exc.strerror or exc}"
            " (the store's folder must be writable)"
        ) from None
    try:
        deadline = None if timeout is None else time.monotonic() + timeout
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if _same_file(fd, path):
                    break
                # the holder removed the lock file (a store it created and undid, `open_writer_undone`):
                # this lock guards nothing any more; take the one at the path
                stale, fd = fd, os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
                fcntl.flock(stale, fcntl.LOCK_UN)
                os.close(stale)
                continue
            except BlockingIOError:
                holder = _read_holder(fd)
                if deadline is not None and time.monotonic() >= deadline:
                    raise StoreBusyError(
                        f"{db} is being written by another elopipe process ({holder}); try again when it finishes"
                    ) from None
                if not told and on_wait is not None:
                    on_wait(f"waiting for another elopipe process writing {db} ({holder}) ...")
                    told = True
                time.sleep(0.2)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}".encode(), 0)
        with _held_guard:
            _held[key] = [fd, 1]
        try:
            yield
        except StorePathError:
            # `db` proved no store once opened (an empty file, which DuckDB refuses; another
            # program's database): a refusal leaves nothing behind, so a lock file this call made
            # goes. A process waiting on it then locks an unlinked file, and is refused the same.
            if created:
                with contextlib.suppress(OSError):
                    path.unlink()
            raise
        finally:
            with _held_guard:
                del _held[key]
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


# what elopipe writes in its lock file (`write_lock`), or nothing: a file that holds anything else is not its
_OWN_LOCK = re.compile(rb"\s*(?:pid \d+)?\s*")


def _open_lock_file(path: Path) -> tuple[int, bool]:
    """(fd, whether this call created the file): O_EXCL first, so that only a lock file this
    process made is ever removed (`write_lock`). The lock file is written (the holder's pid), so
    a file at its name that is not elopipe's is refused (StorePathError), never written over: a
    link (it would write through to its target) or a file holding other text."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW
    try:
        return os.open(path, flags | os.O_EXCL, 0o644), True
    except FileExistsError:
        pass
    beside = f"{path}, beside the store, is"
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StorePathError(f"{beside} a symbolic link, not elopipe's lock file; move it away") from None
        raise
    if _OWN_LOCK.fullmatch(os.pread(fd, 256, 0)) is None:
        os.close(fd)
        raise StorePathError(f"{beside} a file of other text, not elopipe's lock file; move it away")
    if os.fstat(fd).st_nlink > 1:  # another name of a file elsewhere: writing it would change that file
        os.close(fd)
        raise StorePathError(f"{beside} a hard link to another file, not elopipe's lock file; move it away")
    return fd, False


def _same_file(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


@contextlib.contextmanager
def open_writer_undone(
    db: str | os.PathLike[str], on_wait: Callable[[str], None] | None = None
) -> Iterator[tuple[duckdb.DuckDBPyConnection, Callable[[], None]]]:
    """`open_writer`, and a function the body calls once it has stored something (`keep`). When
    the body raises before `keep` and this call created the store, the store, its WAL and its
    lock file are removed again: a refused input leaves no empty store behind (`lists import` of
    a file that is no list). A store that existed before is never removed; neither is a lock
    file this call did not create."""
    lock_new = not os.path.lexists(lock_path(db))
    kept = False

    def keep() -> None:
        nonlocal kept
        kept = True

    with write_lock(db, on_wait=on_wait):
        created = not os.path.lexists(db)  # under the lock: no other writer can create it now
        try:
            with open_writer(db, on_wait=on_wait) as con:
                yield con, keep
        except BaseException:
            if created and not kept:
                for leftover in (Path(db), Path(f"{os.fspath(db)}.wal")):
                    with contextlib.suppress(FileNotFoundError):
                        leftover.unlink()
                if lock_new:  # removed while held: a waiter sees the new inode (`_same_file`)
                    with contextlib.suppress(FileNotFoundError):
                        lock_path(db).unlink()
            raise


def _make_parent(db: Path, on_wait: Callable[[str], None] | None) -> None:
    parent = db.parent
    if parent.exists():
        if not parent.is_dir():
            raise StorePathError(f"{db}: {parent} is not a folder")
        return
    try:
        parent.mkdir(parents=True)
    except OSError as exc:
        raise StorePathError(f"{db}: cannot create the folder {parent}: {exc.strerror or exc}") from None
    if on_wait is not None:
        on_wait(f"created the folder {parent} for the new store {db.name}")


def _read_holder(fd: int) -> str:
    try:
        return os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown pid"
    except OSError:
        return "unknown pid"


def check_store(db: str | os.PathLike[str]) -> None:
    """`check_store_path`, then, for an existing DuckDB file, that it is an elopipe store or an
    empty database (StorePathError otherwise), for commands that open it only later (`watch`
    opens it when a file lands). A file another process holds open is left to that later open."""
    check_store_path(db)
    path = Path(db)
    if not path.exists() or path.stat().st_size == 0:
        return
    try:
        con = duckdb.connect(os.fspath(db), read_only=True)
    except duckdb.Error:
        return  # busy (a writer holds it): the command's own open waits for it and says so
    try:
        _check_is_store(con, db, new_ok=True)
    finally:
        con.close()


@contextlib.contextmanager
def open_writer(
    db: str | os.PathLike[str] = DEFAULT_DB,
    timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
    *,
    existing: bool = False,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """Take the write lock, open `db` read-write and make sure the schema exists. A missing `db`
    is a new store, unless `existing` (a command that changes the store it was given: `rate`, a
    merge, a scenario's removal): then StoreMissingError (`require_store`), and nothing is created,
    not even the lock file; an empty DuckDB database is then no store either (StorePathError, as a
    reader says it: the schema was written into it)."""
    if existing:
        require_store(db)
    with write_lock(db, timeout=timeout, on_wait=on_wait):
        con = _connect_writable(db, timeout, on_wait)
        try:
            # A transaction's appends stay in memory until COMMIT writes them once, instead of
            # being written at INSERT and again at COMMIT (a 110k-game file: 0.46 s, not 0.72 s).
            # elopipe's transactions are one file or one rating run: well within memory.
            con.execute("SET enable_optimistic_write = false")
            _check_is_store(con, db, new_ok=not existing)
            ensure_schema(con)
            yield con
        finally:
            con.close()


def _connect_writable(
    db: str | os.PathLike[str],
    timeout: float | None,
    on_wait: Callable[[str], None] | None,
) -> duckdb.DuckDBPyConnection:
    """Open `db` read-write, retrying while another (non-elopipe) process holds DuckDB's own
    file lock, e.g. a `duckdb` shell or a dashboard left open on the file."""
    deadline = None if timeout is None else time.monotonic() + timeout
    told = False
    while True:
        try:
            return _quiet(duckdb.connect(os.fspath(db)))
        except duckdb.IOException as exc:
            if "not a valid duckdb database" in str(exc).lower():
                raise StorePathError(f"{db} is not a DuckDB database (elopipe's store)") from None
            if "lock" not in str(exc).lower():
                raise StoreBusyError(f"DuckDB refused to open {db} for writing: {_reason(exc)}") from None
            if deadline is not None and time.monotonic() >= deadline:
                raise StoreBusyError(
                    f"{db} is held open by another program ({_lock_holder(exc)}); try again when it finishes"
                ) from None
            if not told and on_wait is not None:
                on_wait(f"waiting for another program to close {db} ({_lock_holder(exc)}) ...")
                told = True
            time.sleep(0.5)


_HOLDER = re.compile(r"lock is held in (?P<program>.+?) \(PID (?P<pid>\d+)\)")


def _lock_holder(exc: BaseException) -> str:
    """'python3.11, PID 4648' from DuckDB's lock error, or 'unknown process' (DuckDB's own text
    says how to use its CLI, which is not what an elopipe user needs)."""
    m = _HOLDER.search(str(exc))
    return f"{os.path.basename(m['program'])}, PID {m['pid']}" if m else "unknown process"


def _reason(exc: BaseException) -> str:
    return first_line(exc).removeprefix("IO Error: ")


def require_store(db: str | os.PathLike[str]) -> None:
    """Raise StoreMissingError if there is no store at `db` (a command that only reads or rates
    what was ingested: a mistyped --db must not leave an empty store behind), StorePathError if
    the path cannot be one. Creates nothing."""
    check_store_path(db)
    path = Path(db)
    if not path.exists():
        raise StoreMissingError(f"no database at {db}; run `{command_hint('ingest', db)}` first")
    if path.stat().st_size == 0:  # DuckDB refuses it too, but only once the lock file is made
        raise StorePathError(f"{db} is an empty file, not a DuckDB database (elopipe's store); give the store's file")


def open_reader(db: str | os.PathLike[str] = DEFAULT_DB, *, external_access: bool = True) -> duckdb.DuckDBPyConnection:
    """Open `db` read-only. Raises FileNotFoundError if it does not exist, StorePathError if it
    is a folder or not a DuckDB file, StoreBusyError if DuckDB refuses (a writer in another
    process holds its lock). Creates nothing.

    `external_access=False` sandboxes the connection (DuckDB `enable_external_access=False`,
    then `lock_configuration`): queries see the store's tables and views but cannot read,
    write or attach any other file, nor load extensions (used by `elopipe sql`).
    """
    require_store(db)
    config: dict[str, str | bool | int | float | list[str]] = (
        {} if external_access else {"enable_external_access": False}
    )
    try:
        con = duckdb.connect(os.fspath(db), read_only=True, config=config)
    except duckdb.IOException as exc:
        if "not a valid duckdb database" in str(exc).lower():
            raise StorePathError(f"{db} is not a DuckDB database (elopipe's store)") from None
        if "lock" in str(exc).lower():
            raise StoreBusyError(
                f"{db} is being written by another program ({_lock_holder(exc)}); try again when it finishes"
            ) from None
        raise StoreBusyError(f"DuckDB refused to open {db} read-only: {_reason(exc)}") from None
    try:
        _check_is_store(con, db, new_ok=False)
    except StorePathError:
        con.close()
        raise
    _quiet(con)
    if not external_access:
        con.execute("SET lock_configuration = true")
    return con


def _quiet(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Turn DuckDB's own progress bar off: past about 2 s of a query it draws on stdout, inside
    `elopipe sql --format csv` output and between elopipe's own lines."""
    con.execute("SET enable_progress_bar = false")
    return con


# Every elopipe store has this table from its first write (`schema.ensure_schema`).
_STORE_TABLE = "source_files"


def _check_is_store(con: duckdb.DuckDBPyConnection, db: str | os.PathLike[str], *, new_ok: bool) -> None:
    """Raise StorePathError when `db` is a DuckDB database of something else: it has tables, none
    of them elopipe's (a writer would add elopipe's columns to the user's own tables). An empty
    database is a new store for a writer (`new_ok`) and, for a reader, a store with nothing in it."""
    names = [
        r[0]
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() ORDER BY table_name"
        ).fetchall()
    ]
    if _STORE_TABLE in names:
        return
    if not names:
        if new_ok:
            return
        raise StorePathError(f"{db} holds no elopipe store yet; run `elopipe ingest` first")
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    raise StorePathError(
        f"{db} is a DuckDB database but not an elopipe store (its tables: {shown}); "
        "give the store's file, or a new name to create one"
    )
