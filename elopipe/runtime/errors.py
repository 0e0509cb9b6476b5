"""Errors as a user reads them: one base class for elopipe's own errors, and the first line of any
error's message, without the class name or a traceback.

`ElopipeError` is what the library raises for a condition the user can act on (a store that is
busy or missing, a list file in the wrong format, a forbidden merge, a stage folder the workers
cannot see). The CLI catches it once (`elopipe.cli.app`) and prints its message on one line,
exiting with its `exit_code`. Each subclass also keeps the builtin base it always had
(ValueError, OSError, RuntimeError), so callers that catch those keep working.
"""

from __future__ import annotations


class ElopipeError(Exception):
    """An error a user can act on. `exit_code`: the CLI's exit status (1: failed; 2: usage)."""

    exit_code = 1


def first_line(exc: BaseException, default: str = "unknown error", limit: int | None = None) -> str:
    """The first non-blank line of `exc`'s message (`default` when it has none), cut to `limit`
    characters with '...' when given."""
    text = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "") or default
    if limit is not None and len(text) > limit:
        text = text[: limit - 3] + "..."
    return text
