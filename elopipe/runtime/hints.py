"""The elopipe commands a message suggests ('Details: elopipe sql ...', 'run `elopipe rate`'):
copied and pasted, they must act on the store the user gave, so each names `--db PATH` when that
store is not the default one (`DEFAULT_STORE`, which `elopipe.store.connect.DEFAULT_DB` is)."""

from __future__ import annotations

import os
import shlex

DEFAULT_STORE = "elopipe.duckdb"


def command_hint(command: str, db: str | os.PathLike[str] | None = None) -> str:
    """'elopipe COMMAND', followed by ' --db PATH' (quoted for a POSIX shell) when `db` is given
    and is not the default store of the current folder (compared as absolute paths, so
    './elopipe.duckdb' is the default too). `command` is the rest of the command line, already
    quoted where it needs to be."""
    hint = f"elopipe {command}"
    if db is None or os.path.abspath(os.fspath(db)) == os.path.abspath(DEFAULT_STORE):
        return hint
    return f"{hint} --db {shlex.quote(os.fspath(db))}"
