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


def strip_controls(value: str) -> str:
    """`value` without ANSI escape sequences and C0/C1 control characters; a tab becomes a space."""
    return CONTROL_RE.sub(lambda m: " " if m.group() == "\t" else "", value)


def blank_controls(line: str) -> str:
    """`line` with each ANSI sequence and control character replaced by as many spaces, so that
    fixed columns (TRF) keep their positions."""
    return CONTROL_RE.sub(lambda m: " " * len(m.group()), line)
