"""Entry point of the `elopipe` console script.

Nothing heavy is imported at module level: loading Polars, DuckDB, Prefect and the commands takes
a second or more, and a Ctrl-C during that time must end like any other, with one line and no
traceback. `from elopipe.cli.main import app` still gives the Typer application (tests use it).
"""

from __future__ import annotations

import gc
import signal
import sys
from typing import Any, NoReturn

# Importing a command module registers its commands on `app`; `elopipe --help` lists them in this order.
COMMAND_MODULES = [
    "run", "ingest", "rate", "scenarios", "publish", "report", "player", "sql", "export",
    "elo", "compare", "lists", "players", "watch", "serve",
]  # fmt: skip


def load_app(command: str | None = None) -> Any:
    """The Typer application with every command registered, or only `command`'s (a name of
    `COMMAND_MODULES`): a command's run then imports no other command's modules (publishing's,
    Prefect's), a few tenths of a CPU second of every `elopipe rate` or `ingest`."""
    import importlib

    from elopipe.cli.app import app

    for name in [command] if command in COMMAND_MODULES else COMMAND_MODULES:
        importlib.import_module(f"elopipe.cli.commands.{name}")
    return app


def __getattr__(name: str) -> Any:
    if name == "app":
        return load_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Run the CLI. Usage errors exit 2 (Click's convention); a Ctrl-C that a command does not
    handle itself ends with one line and exit 130, never a traceback; so does a SIGTERM to `run`,
    `watch` or `serve` before their own handler is in place (docs/commands.md, `elopipe run`: "130 after
    Ctrl-C (or a SIGTERM, said in one line)")."""
    from elopipe.runtime.interrupt import early_sigterm

    if sys.argv[1:2] in (["run"], ["watch"], ["serve"], ["publish"]):
        # `publish` has no handler of its own: a SIGTERM stops it as a Ctrl-C does (its manifest
        # saved, its lists left pending for the next publish), said in one line, not a silent kill
        early_sigterm()
    try:  # before the commands are imported: modules read these settings on import
        from elopipe.runtime.settings import SettingError, check_environment

        try:
            check_environment()
        except SettingError as exc:
            print(_error_line(str(exc)), file=sys.stderr)
            sys.exit(exc.exit_code)
    except KeyboardInterrupt as stop:
        _interrupted(stop)
    if "--dask" in sys.argv:
        from elopipe.cli.commands.dask_opts import optional_dask_value

        sys.argv[1:] = optional_dask_value(sys.argv[1:])
    try:
        # `elopipe CMD ...`: only CMD is registered (its --help is its own); else, the whole list
        sys.exit(load_app(sys.argv[1] if len(sys.argv) > 1 else None)())
    except KeyboardInterrupt as stop:
        _interrupted(stop)
    except Exception as exc:
        # DuckDB failing under a command that did not expect it (a store's folder made read-only
        # while its lock file stays): one line, not a traceback; the module test keeps DuckDB's
        # import out of every command's start
        if not type(exc).__module__.lstrip("_").startswith("duckdb"):
            _internal_error(exc)
        from elopipe.runtime.errors import engine_message

        print(_error_line(f"the store could not be read or written: {engine_message(exc)}"), file=sys.stderr)
        sys.exit(1)
    except SystemExit as done:
        # the command has finished: a Ctrl-C while the interpreter shuts down (threads, atexit)
        # must not turn its exit into a silent kill
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        from elopipe.runtime.interrupt import output_was_closed

        if output_was_closed() and done.code in (None, 0, 130):  # stopped by the closed pipe
            done.code = 141
        _flush_stdout()
        # What the command leaves is released with the process: the interpreter's last cyclic
        # collection need not walk it first (0.3 of a TRF month's 8 CPU-s, bench/federation.py).
        gc.freeze()
        raise


# the commands that group sub-commands (`elopipe players merge`)
_GROUPS = ("scenarios", "lists", "players")


def _error_line(message: str) -> str:
    """`app.error_line` for a line said outside any command's context (before the commands are
    loaded, or after Click closed it): the command named from the words typed, as far as they
    name one ('elopipe players merge'; 'elopipe' for `elopipe --help`)."""
    from elopipe.cli.error_lines import error_line_of

    words = sys.argv[1:3]
    names = words[:1] if words[:1] and words[0] in COMMAND_MODULES else []
    if names and names[0] in _GROUPS and len(words) > 1 and not words[1].startswith("-"):
        names.append(words[1])
    return error_line_of(" ".join(["elopipe", *names]), message)


def _internal_error(exc: Exception) -> NoReturn:
    """End a command that failed on a bug of elopipe's: one line with the error's own words (no
    traceback, no class name: a user's terminal never shows Python's internals) and the file the
    traceback was written to, for a report; exit 1. ELOPIPE_TRACEBACK=1 raises it as it is."""
    import os
    import tempfile
    import traceback

    from elopipe.read.control_chars import escape_controls
    from elopipe.runtime.errors import first_line

    if os.environ.get("ELOPIPE_TRACEBACK") == "1":
        raise exc
    said = escape_controls(first_line(exc, "no message", limit=300))
    try:  # the words typed may hold bytes that are no UTF-8 (surrogates): written escaped
        fd, path = tempfile.mkstemp(prefix="elopipe-error-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(f"elopipe {' '.join(sys.argv[1:])}\n\n")
            traceback.print_exception(exc, file=fh)
        where = f"; the details are in {path} (please report them)"
    except Exception:  # the report is a help, never a second failure
        where = ""
    print(_error_line(f"internal error, a bug of elopipe: {said}{where}"), file=sys.stderr)
    sys.exit(1)


def _interrupted(stop: KeyboardInterrupt) -> None:
    from elopipe.runtime.interrupt import interrupted_line

    print(interrupted_line(stop), file=sys.stderr)
    sys.exit(130)


def _flush_stdout() -> None:
    """Write what stdout still buffers now, while a closed pipe (`| head`) can still end the
    command quietly: at the interpreter's exit it would print 'Exception ignored ... BrokenPipeError'."""
    from elopipe.cli.app import stdout_closed

    try:
        sys.stdout.flush()
    except BrokenPipeError:
        try:
            stdout_closed()
        except BaseException as stop:  # typer.Exit: its status, as the command's
            raise SystemExit(getattr(stop, "exit_code", 1)) from None


if __name__ == "__main__":  # python -m elopipe.cli.main
    main()
