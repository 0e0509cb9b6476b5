"""An error as a user reads it: its first line, without the class name or a traceback."""

from __future__ import annotations


def first_line(exc: BaseException, default: str = "unknown error", limit: int | None = None) -> str:
    """The first non-blank line of `exc`'s message (`default` when it has none), cut to `limit`
    characters with '...' when given."""
    text = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "") or default
    if limit is not None and len(text) > limit:
        text = text[: limit - 3] + "..."
    return text
