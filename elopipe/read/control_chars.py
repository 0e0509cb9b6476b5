"""C0/C1 control characters and ANSI escape sequences in text fields.

Copied terminal output and broken exporters leave escape codes (ESC [ 31 m ...) and other
control characters in player names and tags; stored raw, they break name matching, CSV and
terminal output. The readers remove them from every text field the loader stores as a column
and record a warning with the raw value. A tab becomes a space.
"""

from __future__ import annotations

import re

# ANSI CSI (ESC [ params final), OSC (ESC ] ... BEL or ESC \), or a two-character ESC sequence
_ANSI = r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])"
_CONTROL = r"[\x00-\x08\x0a-\x1f\x7f-\x9f]"
CONTROL_RE = re.compile(rf"{_ANSI}|{_CONTROL}|\t")
# a quick test on a whole text: any control character other than newline (tabs are common in
# movetext and are checked per tag value)
ANY_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


# UTF-8 bytes: C0 controls (tab and newline aside) and DEL map to 1; C1 controls are \xc2\x80-\x9f
_C0_TABLE = bytes(1 if (c < 32 and c not in (9, 10)) or c == 127 else 0 for c in range(256))
_C1_UTF8 = re.compile(rb"\xc2[\x80-\x9f]")


def has_controls_utf8(data: bytes) -> bool:
    """True when UTF-8 `data` holds a control character other than tab and newline. One
    `bytes.translate` pass: ~5x faster than a regex character class over a large file."""
    step = 1 << 20  # translate makes a copy: 1 MB at a time, not the whole file
    if any(b"\x01" in data[i : i + step].translate(_C0_TABLE) for i in range(0, len(data), step)):
        return True
    return b"\xc2" in data and _C1_UTF8.search(data) is not None


def strip_controls(value: str) -> str:
    """`value` without ANSI escape sequences and C0/C1 control characters; a tab becomes a space."""
    return CONTROL_RE.sub(lambda m: " " if m.group() == "\t" else "", value)


# the characters that reorder or break a terminal's line without being control characters: the
# line and paragraph separators and the bidirectional embeddings, overrides and isolates
_LAYOUT = "\u2028\u2029\u202a-\u202e\u2066-\u2069"
# every control character, tab and newline included: none is shown raw in a one-line message
_ANY_CONTROL_OR_TAB = re.compile(rf"[\x00-\x1f\x7f-\x9f{_LAYOUT}]")
# the same but for the newline, which a table's cell shows as a second line
_CONTROL_BUT_NEWLINE = re.compile(rf"[\x00-\x09\x0b-\x1f\x7f-\x9f{_LAYOUT}]")


def escape_controls(value: str, keep_newlines: bool = False) -> str:
    """`value` for a one-line message: each control character (tab and newline too) written
    \\xNN, so a terminal shows it and never runs it, and so each character that would reorder or
    break the line (U+2028, U+202E right-to-left override, ...: \\u202e); letters of any script
    kept as they are.
    `keep_newlines`: newlines are left as they are (a table's cell of several lines)."""
    pattern = _CONTROL_BUT_NEWLINE if keep_newlines else _ANY_CONTROL_OR_TAB
    return pattern.sub(_escaped, value)


def _escaped(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown_value(value: object) -> str:
    """`value` (from a file, an option or a variable) quoted for a one-line message: 'F', or
    'A\\x1b[' for the text A, ESC, [ (`escape_controls`: its control characters, tabs and
    newlines written \\xNN, never sent to a terminal; never a Python repr); blanks kept as
    written, so ' ' is not ''."""
    return "'" + escape_controls(str(value)) + "'"


def blank_controls(line: str) -> str:
    """`line` with each ANSI sequence and control character replaced by as many spaces, so that
    fixed columns (TRF) keep their positions."""
    return CONTROL_RE.sub(lambda m: " " * len(m.group()), line)
