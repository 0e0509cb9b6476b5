"""The Typer application every `elopipe` command registers on (see elopipe/cli/commands/)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from typer.core import TyperGroup
from typer.models import TyperPath

from elopipe.cli.error_lines import error_line_of
from elopipe.jobs.store import StoreFullError, StorePathError, disk_full_message, is_disk_full, is_interrupt
from elopipe.runtime.errors import ElopipeError, first_line


class _Group(TyperGroup):
    """Shows Click's usage errors (an unknown option, a missing argument, a bad value) and a bad
    `--db` (a folder, not a DuckDB file, no lock file possible) as one line, exit 2, whichever
    command met them (`usage_line`); an `ElopipeError` as its message, with its exit code;
    a system error on a path (an `--out` that is a file) as one line, exit 1; a Ctrl-C as one
    line, exit 130; a reader that closed the pipe (`| head`) without a word (`stdout_closed`).
    Every error line names the command (`error_line`). The groups of sub-commands (`players`,
    `lists`, `scenarios`) are of this class too, so that 'elopipe players merge' is named whole:
    once an error reaches a group, the context of the command that raised it is closed."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            refuse_empty_paths(cmd)
        return cmd

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        try:  # parsing the options imports more of typer (pydantic): a Ctrl-C can come here
            return super().make_context(*args, **kwargs)
        except typer.TyperException as exc:  # `elopipe --frob`, `elopipe frob`
            _usage_error(exc)
        except KeyboardInterrupt as stop:
            _interrupted(stop)
        except BrokenPipeError:
            stdout_closed()
        except SystemExit as exc:
            _help_pipe_closed(exc)
            raise

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except typer.TyperException as exc:  # the command's options and arguments, parsed here
            _usage_error(exc, " ".join(_names(ctx, ctx.invoked_subcommand)))
        except StorePathError as exc:
            err_console.print(f"{_invoked(ctx)}: invalid value for '--db': {exc}", style="red")
            raise typer.Exit(2) from None
        except ElopipeError as exc:
            # every command's own errors, in one place: the message, no traceback
            _say_error(ctx, str(exc) or type(exc).__doc__ or "failed")
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt as stop:
            _interrupted(stop)
        except BrokenPipeError:  # caught before OSError below: not "Broken pipe", exit 1
            stdout_closed()
        except SystemExit as exc:  # a sub-command group's --help (`players split --help | head -2`)
            _help_pipe_closed(exc)
            raise
        except RuntimeError as exc:
            if is_interrupt(exc):  # DuckDB's 'Query interrupted' from a Ctrl-C, as a RuntimeError
                _interrupted()
            # pathlib's resolve() on a loop of symbolic links (Python 3.11; later ones raise OSError)
            if not str(exc).startswith("Symlink loop from "):
                raise
            where = str(exc).removeprefix("Symlink loop from ").strip("'")
            _say_error(ctx, f"{where}: too many levels of symbolic links")
            raise typer.Exit(2) from None
        except Exception as exc:
            if is_interrupt(exc):  # Ctrl-C met inside a DuckDB query (DuckDB's error, not KeyboardInterrupt)
                _interrupted()
            if not is_disk_full(exc):
                if isinstance(exc, OSError):  # an output path that is a file, a folder not allowed...
                    _say_error(ctx, _os_error_line(exc))
                    raise typer.Exit(1) from None
                raise
            # any command's write (rate, publish, export): DuckDB rolled the store back
            _say_error(ctx, _disk_full_line(exc))
            raise typer.Exit(1) from None


def _names(ctx: Any, sub: str | None = None) -> list[str]:
    """The names of the command of context `ctx` as typed after 'elopipe' (['players', 'merge']),
    then `sub` when given: the root's own name is how Python was started, never said."""
    names = [sub] if sub else []
    while ctx is not None and ctx.parent is not None:
        names.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    return names


def _invoked(ctx: Any) -> str:
    """The command a group's context `ctx` ran, as `command_name` says it while it runs."""
    return " ".join(["elopipe", *_names(ctx, ctx.invoked_subcommand)])


def _say_error(ctx: Any, message: str) -> None:
    err_console.print(error_line(message, _invoked(ctx)), style="red", soft_wrap=True)


class _NonEmptyPath(TyperPath):
    """A path parameter that refuses "" (`refuse_empty_paths`)."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and not value.strip():  # "", or only spaces
            self.fail("an empty path; name a file or folder ('.' for the current folder)", param, ctx)
        return super().convert(value, param, ctx)


def refuse_empty_paths(cmd: Any) -> None:
    """Make an empty string given for a path of `cmd` (and of its sub-commands) a usage error.
    Python reads "" as the current folder: `elopipe ingest "$INBOX"` with INBOX unset read every
    file under the current folder, and `--out ""` published into it, a path nobody named."""
    for sub in getattr(cmd, "commands", {}).values():
        refuse_empty_paths(sub)
    for param in cmd.params:
        if type(param.type) is TyperPath:  # Typer's type of every `Path` parameter, made per command
            param.type.__class__ = _NonEmptyPath


def _usage_error(exc: typer.TyperException, command: str | None = None) -> NoReturn:
    """Print Click's usage error `exc` as `usage_line` says it (of `command` when Click gave
    the error no context) and exit with its status (2);
    any other Click error is re-raised to typer, as is the help that `elopipe` alone printed
    (typer names that error by its class name too: its help is printed as it is made)."""
    if exc.exit_code != 2 or type(exc).__name__ == "NoArgsIsHelpError":
        raise exc
    err_console.print(usage_line(exc, command), style="red")
    raise typer.Exit(exc.exit_code) from None


def usage_line(exc: typer.TyperException, command: str | None = None) -> str:
    """One line for a usage error, in elopipe's style instead of Click's usage, hint and rich
    panel: the command, Click's reason, where to look ('elopipe rate: no such option: --sytem;
    did you mean --system? (try --help)'). `command`: the sub-command's name, for an error
    Click raised without its context (an option given without its value)."""
    ctx = getattr(exc, "ctx", None)
    names = _names(ctx) if ctx is not None else [command] if command else []
    possible = getattr(exc, "possibilities", None)  # an unknown option: Click's close matches
    reason = exc.message if possible else exc.format_message()
    reason = " ".join(reason.split()).removesuffix(".")
    if possible:
        reason += f"; did you mean {' or '.join(sorted(possible))}?"
    return f"{' '.join(['elopipe', *names])}: {reason[:1].lower()}{reason[1:]} (try --help)"


def _disk_full_line(exc: BaseException) -> str:
    if isinstance(exc, StoreFullError):
        return str(exc)
    target = getattr(exc, "filename", None) or _quoted_path(str(exc))
    if target:
        return disk_full_message(target, "the command's output")
    return "the disk is full: the command's output was not written; free some space and run the command again"


def _os_error_line(exc: OSError) -> str:
    """'cannot use /tmp/x: File exists': the path and the system's reason, without the errno."""
    reason = exc.strerror or first_line(exc)
    return f"cannot use {exc.filename}: {reason}" if exc.filename else reason


def _quoted_path(text: str) -> str | None:
    """The file named in DuckDB's error text ('Could not write file "x.duckdb.wal": ...')."""
    start = text.find('"')
    end = text.find('"', start + 1)
    return text[start + 1 : end] if 0 <= start < end else None


#: The exit status of a program a closed pipe stopped (128 + SIGPIPE), as a shell expects it.
EXIT_PIPE_CLOSED = 141


def stdout_closed() -> NoReturn:
    """The reader of the output went away (`elopipe sql ... | head -2`): exit quietly with
    `EXIT_PIPE_CLOSED`, no message. Python ignores SIGPIPE, so a write raises BrokenPipeError;
    stdout is pointed at /dev/null so that the interpreter's final flush does not fail again
    (Python docs, signal module, "Note on SIGPIPE")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no file descriptor (a test runner's buffer)
        pass
    raise typer.Exit(EXIT_PIPE_CLOSED) from None


def _help_pipe_closed(exc: SystemExit) -> None:
    """`stdout_closed` when `exc` is rich's answer to a closed pipe: typer prints --help with its
    own rich Console, which then points stdout at /dev/null and raises SystemExit(1). No elopipe
    command raises SystemExit, so exit 1 with stdout now /dev/null can only be that."""
    if exc.code != 1:
        return
    try:
        redirected = os.path.samestat(os.fstat(sys.stdout.fileno()), os.stat(os.devnull))
    except (OSError, ValueError):  # stdout is no file descriptor (a test runner's buffer)
        return
    if redirected:
        stdout_closed()


def _interrupted(stop: BaseException | None = None) -> NoReturn:
    # typer would exit 130 without a word; the user is told the command stopped, and how
    from elopipe.runtime.interrupt import interrupted_line

    err_console.print(interrupted_line(stop), style="yellow")
    raise typer.Exit(130) from None


app = typer.Typer(
    cls=_Group,
    name="elopipe",
    help="Chess tournament files (PGN, TRF) to FIDE/FFE rating lists, in DuckDB.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def sub_app(name: str, help: str) -> typer.Typer:
    """A group of sub-commands (`elopipe players merge`) registered on `app` as `name`; its
    errors are said as the top level's are, naming the sub-command (`_Group`)."""
    group = typer.Typer(cls=_Group, help=help, no_args_is_help=True)
    app.add_typer(group, name=name)
    return group


def _print_version(value: bool) -> None:
    if value:
        import elopipe

        console.print(f"elopipe {elopipe.__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_print_version, help="Print elopipe's version and exit."
    ),
) -> None:
    pass


def plain_console(**kwargs: Any) -> Console:
    """A rich Console that prints text as it is: data (player names, file paths, SQL results)
    may hold `[/b]`, `[x]` or `:smile:`, which must never be read as markup, emoji codes or
    highlighted. Colour is given with `style=`, never with inline markup. Lines are not wrapped
    (soft wrap): summaries stay whole lines in narrow or piped output."""
    kwargs.setdefault("soft_wrap", True)
    return _Console(markup=False, emoji=False, highlight=False, **kwargs)


class _Console(Console):
    """A Console that ends the command as `stdout_closed` does when the pipe it prints to closes
    (rich's own answer is exit 1)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        stdout_closed()


console = plain_console(stderr=False)
err_console = plain_console(stderr=True)

# widest table printed whole (characters); a wider one wraps its cells, never cuts them
_MAX_TABLE_WIDTH = 2000


def print_table(table: Any, out: Console | None = None) -> None:
    """Print a rich Table at its natural width even when the terminal (or a pipe, 80 columns)
    is narrower: rich would otherwise cut long cells (player names, tournament lists) with '…'."""
    out = out or console
    # measured on a console as wide as allowed: a measurement never exceeds its console's width
    need = plain_console(width=_MAX_TABLE_WIDTH).measure(table).maximum
    width = max(out.width, min(need, _MAX_TABLE_WIDTH))
    plain_console(width=width, stderr=out.stderr).print(table)


DB_OPTION_HELP = "DuckDB file of the store."


def command_name() -> str:
    """The command being run as the user typed it and as its usage errors name it (`usage_line`):
    'elopipe rate', 'elopipe players merge'; 'elopipe' outside a command."""
    return " ".join(["elopipe", *_names(_current_context())])


def _current_context() -> Any:
    """Click's context of the command being run, or None: typer 0.28 runs the commands in its own
    copy of Click (`typer._click`), whose context stack `click.get_current_context` does not see;
    earlier typers in Click itself."""
    import importlib

    for module in ("typer._click.globals", "click.globals"):
        try:
            return importlib.import_module(module).get_current_context(silent=True)
        except ImportError:
            continue
    return None


def error_line(message: str, command: str | None = None) -> str:
    """One of elopipe's own error lines (its checks of options, what a command was asked to do,
    what the library refused: every line a command ends on with a status other than 0 and 130),
    naming the command as Click's usage errors do: 'elopipe rate: error: MESSAGE'
    (`error_lines.error_line_of`). `command`: 'elopipe players merge', when said once the
    command's context is closed; else the command running (`command_name`)."""
    return error_line_of(command or command_name(), message)


def check_text(value: str | None, what: str) -> None:
    """Exit 2 when the text argument `value` (a query, a name; not a path, which may hold any
    bytes) holds bytes that are not UTF-8 (Python passes them on as surrogates, which DuckDB and
    the readers cannot take: an internal error, or a store said to be unreadable). `what`: how the
    line names the argument ('the query', '--tournament')."""
    if value is not None and any("\udc80" <= c <= "\udcff" for c in value):
        fail(f"{what} holds bytes that are not UTF-8 (is the terminal's encoding UTF-8?)")


def fail(message: str, exit_code: int = 2) -> NoReturn:
    """Print `error_line(message)` on standard error and end the command with `exit_code`
    (2: a usage error, the default; 1: the command failed). Every `error:` line of the commands
    is printed here, so they all name their command the same way."""
    err_console.print(error_line(message), style="red", soft_wrap=True)
    # said: the error being handled, if any (a query stopped at its time limit), is not the
    # Ctrl-C `_Group.invoke` would take it for
    raise typer.Exit(exit_code) from None


def checked_policy(flag: str, value: str | None, policy: Callable[[str | None], str]) -> str:
    """`policy(value)`: a run policy read from its option, else its environment variable, else its
    default (`--no-moves`, `--ro-from`); a ValueError it raises is a usage error, one line naming
    `flag`, or the variable `ELOPIPE_<FLAG>` when the value came from it, exit 2."""
    try:
        return policy(value)
    except ValueError as exc:
        key = flag.removeprefix("--").replace("-", "_")
        # no option given: the value is the environment's, and the line names where it came from
        where = flag if value is not None else f"ELOPIPE_{key.upper()}"
        fail(f"{where}: {str(exc).removeprefix(key + ' ')}")


def drop_folder_path(inbox: Path) -> tuple[Path, str | None]:
    """`inbox` (of `watch` and `serve`) resolved, and created when missing, with the line that
    says so for the command to print after its first (a mistyped inbox must not be watched in
    silence; None when it was there); a path that is not a folder is a usage error (exit 2)."""
    inbox = inbox.resolve()
    if inbox.exists() and not inbox.is_dir():
        fail(f"not a folder: {inbox}")
    if inbox.exists():
        return inbox, None
    inbox.mkdir(parents=True)
    return inbox, f"created the drop folder {inbox}"


def check_out_folder(out: Path, doing: str, folders: list[str] | None = None) -> None:
    """A usage error (one line, exit 2) when the output folder `out` cannot be written
    (`out_folder_problem`), or one of the `folders` inside it (relative to it) that the command
    writes into is a symbolic link or not a folder (`elopipe.publish.folders.folder_problem`:
    'cannot publish to out: out/players is a file, not a folder'). `doing` names the command's
    work: 'cannot {doing} {out}: ...'. Asked before the command starts, instead of the system's
    'Not a directory: out/lists' from its first write, after the work."""
    reason = out_folder_problem(out)
    if not reason and folders:
        from elopipe.publish.folders import folder_problem

        reason = folder_problem(out, folders)
    if reason:
        fail(f"cannot {doing} {out}: {reason}")


def check_out_not_input(out: Path, folders: list[Path], what: str) -> None:
    """A usage error (one line, exit 2) when the output folder `out` is one of the input
    `folders` (`what` names it: 'the drop folder', 'an input folder'): its pages would be taken
    as new files, and a folder holding elopipe's manifest is never read again as input
    (`elopipe.read.sources`). A folder inside an input folder is fine: it is skipped as output."""
    target = out.resolve()
    for folder in folders:
        if folder.resolve() == target:  # a file never is: `check_out_folder` refused it first
            named = "" if folder == out else f" ({folder})"
            fail(f"cannot publish to {out}: it is {what}{named}; give another --out")


def check_db_outside(db: Path, inbox: Path) -> None:
    """A usage error (one line, exit 2) when the store `db` lies in the drop folder `inbox` (at any
    depth): the store, its lock and its log would be taken as dropped files, batch after batch."""
    store, folder = db.absolute().resolve(), inbox.absolute().resolve()
    if store == folder or folder in store.parents:
        fail(f"the store {db} is inside the drop folder {inbox}: its files would be read as dropped files; "
             "give a --db outside it")  # fmt: skip


def out_folder_problem(out: Path) -> str | None:
    """Why the output folder `out` cannot be written, in words, or None: a loop of symbolic
    links; it, or a folder on the way to it, is a link to nothing or a file; the nearest folder
    that exists may not be written (permission, a read-only file system), or no folder can be
    made in it (/proc). The last is tried: a folder is made there and removed at once."""
    try:
        out.resolve()
    except (RuntimeError, OSError):  # Python 3.11 says a loop with RuntimeError
        return "too many levels of symbolic links"
    where = out
    while not where.exists() and where != where.parent:  # the folder a missing `out` is made in
        if where.is_symlink():
            link = f"{where} is" if where != out else "it is"
            return f"{link} a symbolic link to {os.readlink(where)}, which does not exist"
        where = where.parent
    said = "" if where == out else f" in {where}"
    if not where.is_dir():
        return "it is a file, not a folder" if where == out else f"{where} is a file, not a folder"
    if not os.access(where, os.W_OK | os.X_OK):
        read_only = os.statvfs(where).f_flag & os.ST_RDONLY
        return ("the folder is on a read-only file system" if read_only else "permission denied") + said
    if where != out:
        import tempfile

        try:
            os.rmdir(tempfile.mkdtemp(prefix=".elopipe-probe-", dir=where))
        except OSError as exc:
            return f"no folder can be made{said} ({(exc.strerror or 'refused').lower()})"
    return None


def say_set_aside(pairs: list[tuple[str, str]]) -> None:
    """The one line (`kept_lines.set_aside_line`) about the user's files a command kept under
    `.elopipe-kept/` before writing their names; nothing when there are none."""
    if pairs:
        from elopipe.publish.kept_lines import set_aside_line

        err_console.print(set_aside_line(pairs), style="yellow", soft_wrap=True)
