"""Settings read from the environment, checked: a bad value is one line naming the variable and
what it expects (`SettingError`, exit 2), never a traceback.

The modules that read them do so on import (`read.sources`, `read.pgn.streaming`); the command
line checks them all first (`check_environment`), before it imports anything that reads one.
"""

from __future__ import annotations

import os

from elopipe.runtime.errors import ElopipeError

# the byte counts elopipe reads from the environment, and what each one sets
BYTE_SETTINGS = {
    "ELOPIPE_MAX_FILE_BYTES": "largest file read, decompressed",
    "ELOPIPE_STREAM_BYTES": "largest PGN read whole, not streamed",
    "ELOPIPE_CHUNK_BYTES": "size of one piece of a streamed PGN",
}


# the counts elopipe reads from the environment, and what each one sets
COUNT_SETTINGS = {
    "ELOPIPE_RATE_WINDOW_GAMES": "games a FIDE rating from the first period holds in memory at once",
}


class SettingError(ElopipeError, ValueError):
    """An environment variable of elopipe holds a value it cannot use (a usage error: exit 2)."""

    exit_code = 2


def env_bytes(name: str, default: int) -> int:
    """The byte count in the environment variable `name` (a whole number, 1 or more; `_` may
    group digits), or `default` when it is unset or blank. Raises SettingError otherwise."""
    value = _number_in(name)
    return default if value is None else value


def env_count(name: str, default: int) -> int:
    """The count in the environment variable `name` (a whole number, 1 or more; `_` may group
    digits), or `default` when it is unset or blank. Raises SettingError otherwise."""
    value = _number_in(name, COUNT_SETTINGS.get(name, "a count"), "")
    return default if value is None else value


def check_environment() -> None:
    """Raise SettingError for the first variable of `BYTE_SETTINGS` or `COUNT_SETTINGS` set to an
    unusable value."""
    for name in BYTE_SETTINGS:
        _number_in(name)
    for name in COUNT_SETTINGS:
        env_count(name, 1)


def _number_in(name: str, what: str | None = None, unit: str = " of bytes") -> int | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:  # ASCII digits only: int() also reads other scripts' digits ('٣')
        value = int(text) if text.isascii() else 0
    except ValueError:
        value = 0
    if value < 1:
        shown = text[:40].encode("unicode_escape").decode("ascii")
        raise SettingError(
            f"{name} ({what or BYTE_SETTINGS.get(name, 'a byte count')}) must be a whole number{unit}, 1 or more,"
            f" not {shown}; unset it for the default"
        )
    return value


def given_or_env(value: str | None, name: str, default: str) -> str:
    """A run policy's text: `value` when the option was given, else the environment variable
    `name` when it is set, else `default`. An empty option or variable is a value, returned as it
    is for the policy's check to refuse: `--unknown-tc ''` (an unexpanded shell variable, a
    template left blank) must not quietly mean the default. Only an unset variable is not given."""
    if value is not None:
        return value
    return os.environ.get(name, default)
