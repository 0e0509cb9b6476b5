"""Errors as a user reads them: one base class for elopipe's own errors, and the first line of any
error's message, without the class name or a traceback.

`ElopipeError` is what the library raises for a condition the user can act on (a store that is
busy or missing, a list file in the wrong format, a forbidden merge, a stage folder the workers
cannot see). The CLI catches it once (`elopipe.cli.app`) and prints its message on one line,
exiting with its `exit_code`. Each subclass also keeps the builtin base it always had
(ValueError, OSError, RuntimeError), so callers that catch those keep working.
"""

from __future__ import annotations

import re


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


# DuckDB's error class before its message: 'Binder Error: ', 'Invalid Input Error: ', 'IO Error: '
_DUCKDB_CLASS = re.compile(r"[A-Za-z]+(?: [A-Za-z]+)* Error: ")
# DuckDB's quote of the query: 'LINE 2: <the line, maybe cut to '... ' on the left>', then carets
_DUCKDB_LINE = re.compile(r"LINE (\d+): ")


def engine_message(exc: BaseException) -> str:
    """DuckDB's error message as one line of plain words: without its class name ('Binder
    Error: '), its hint lines ('Candidate bindings: ...', 'Did you mean ...?') kept and joined with
    a blank, and its quote of the query with carets under it replaced by the position
    ('(line 2, column 3)'; the line alone when DuckDB cut the quoted line on the left).
    Any other error's text is joined the same way."""
    words: list[str] = []
    position = ""
    lines = str(exc).splitlines()
    for i, raw in enumerate(lines):
        line = raw.strip()
        quote = _DUCKDB_LINE.match(raw)
        if quote:
            caret = lines[i + 1].find("^") if i + 1 < len(lines) else -1
            shown = raw[quote.end() :]
            column = caret - quote.end() + 1
            cut = shown.startswith("...")  # the caret counts from the cut, not from the line's start
            position = f"line {quote.group(1)}" + ("" if cut or column < 1 else f", column {column}")
            break
        if line:
            words.append(line)
    text = " ".join(words)
    named = _DUCKDB_CLASS.match(text)
    text = (text[named.end() :] if named else text) or "unknown error"
    return f"{text} ({position})" if position else text
