"""Text preparation for the PGN reader: the text as bytes, with the fixes that keep line numbers,
and the signs of mojibake (shared/specs/pgn-faults.md, faults 3, 4, 24 and the glued `[Event`).

`prepare` gives the bytes the reader splits (elopipe.read.pgn.split): a leading newline so that
a tag section on line 1 is found, CR line ends as LF, and (unless `quick`) U+FEFF removed, `%`
escape lines blanked, indented tags moved to the line start and an `[Event` glued to the
previous game's result put on a line of its own (the lines that newline shifts are kept in
`Prepared.ins_lines`, so that `line_at` gives the caller's line numbers). `quick` leaves out the
whole-text searches for those rare fixes: `needs_fixes` then looks for them in the raw games.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from elopipe.read.pgn.split import RawGame, in_line_comment

if TYPE_CHECKING:
    import polars as pl

__all__ = ["Prepared", "line_at", "mojibake_hint", "mojibake_hint_single_byte", "needs_fixes", "prepare"]

_TAG_NAME = r"[A-Za-z][A-Za-z0-9_]*"
_INDENTED_TAG = re.compile(rb'(?m)^[ \t]+(?=\[[ \t]*[A-Za-z][A-Za-z0-9_]*[ \t]*")')
_GLUED = re.compile(rb'(?:1-0|0-1|1/2-1/2|\*)[ \t]*(?=\[[A-Za-z][A-Za-z0-9_]*[ \t]*")')
_PERCENT = re.compile(rb"(?m)^%[^\n]*")
_MOJIBAKE_HINT = re.compile(rb"\xc3[\x82-\x85\x90\x91][\xc2-\xe2]")
# the same sign in single-byte text, before it is decoded: one of ÂÃÄÅÐÑ, then any non-ASCII
# byte (each decodes to a character whose UTF-8 starts with 0xC2..0xE2)
_MOJIBAKE_HINT_1BYTE = re.compile(rb"[\xc2-\xc5\xd0\xd1][\x80-\xff]")
# what `prepare(quick=True)` leaves out, as found in a raw game's tag section or movetext (each
# starts at a line start): U+FEFF, a `%` line (`_LINE_STARTS`: literal searches, a line start
# being the text's start or a newline), an indented tag (`_INDENTED`), a result marker with a tag after
# it on its line (`_GLUED_TAG`: all a glued `[Event` rewrite needs).
_LINE_STARTS = ("%",)
# an indented tag: blanks, however many, then `[` (looked for only in the rows with a line that
# starts with a blank: the regex would meet a candidate on every line)
_INDENTED = r"(?:^|\n)[ \t]+\["
# a line that starts with a blank, but for the first: a regex, 3 times cheaper than Polars'
# `contains_any` of the two literals (Aho-Corasick), the same rows
_BLANK_STARTS = r"\n[ \t]"
_GLUED_TAG = rf"(?:1-0|0-1|1/2-1/2|\*)[ \t]*\[{_TAG_NAME}[ \t]*\""
# the two characters a `_GLUED_TAG` match ends with at its `[`: a marker's last one or a blank.
# Every line of a tag section starts with `[`, so the regex engine met a candidate on every line
# of the tag sections: these find the few sections that need the regex at all (`0[`, `1[`, `2[`,
# `*[`, ` [`, `\t[`: a regex, five times cheaper than Polars' `contains_any` of the six literals).
_BEFORE_TAG = r"[012* \t]\["


@dataclass
class Prepared:
    """What `prepare` gives: the bytes to split, the lines (1-based) an inserted newline shifted,
    and whether the text shows signs of mojibake (`mojibake_hint`)."""

    data: bytes
    maybe_mojibake: bool
    ins_lines: list[int] = field(default_factory=list)


def prepare(text: str | None, utf8: bytes | None, quick: bool, known_mojibake: bool | None) -> Prepared:
    """The text (or its UTF-8 bytes `utf8`) prepared for splitting (module docstring).
    `known_mojibake`: the whole file's hint when the text is one piece of it (else None: this
    text's own)."""
    # the leading newline lets the split find a tag section on line 1; all checks run on bytes
    data = b"\n" + utf8 if utf8 is not None else ("\n" + (text or "")).encode("utf-8", "surrogatepass")
    ascii_only = utf8.isascii() if utf8 is not None else (text or "").isascii()
    # read_pgn is given LF text (elopipe.read.textio); a stray CR would end up inside tag values
    if b"\r" in data[:65536] or b"\r" in data[-65536:]:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")

    def hint(data: bytes) -> bool:
        # UTF-8 read as a single-byte encoding shows up as Ã, Â, Ä, Å, Ð, Ñ + another non-ASCII char
        if known_mojibake is not None:
            return known_mojibake
        return not ascii_only and _MOJIBAKE_HINT.search(data) is not None

    if quick:
        return Prepared(data, hint(data))
    if not ascii_only and b"\xef\xbb\xbf" in data:  # U+FEFF
        data = data.replace(b"\xef\xbb\xbf", b"")
    if b"\n%" in data:
        data = _PERCENT.sub(b"", data)
    if b"\n " in data or b"\n\t" in data:  # a tag may be indented by any number of blanks
        data = _INDENTED_TAG.sub(b"", data)
    ins_lines: list[int] = []
    # an [Event tag not at a line start may be glued to the previous game's result
    if data.count(b"[Event ") != data.count(b"\n[Event ") and _GLUED.search(data):
        data = _unglue(data, ins_lines)
    return Prepared(data, hint(data), ins_lines)  # the hint of the fixed text


def _unglue(data: bytes, ins_lines: list[int]) -> bytes:
    """`data` with a newline after each result marker a tag follows on its line (not in a `;`
    comment); the first line (1-based) each inserted newline shifted is added to `ins_lines`."""
    parts: list[bytes] = []
    pos = 0
    n_lines = 0
    for m in _GLUED.finditer(data):
        if in_line_comment(data, m.start()):
            continue  # '; 1-0 [Event "x"]' is comment text, not a game boundary
        n_lines += data.count(b"\n", pos, m.end())
        parts.append(data[pos : m.end()])
        parts.append(b"\n")
        # data starts with "\n"
        ins_lines.append(n_lines + len(ins_lines) + 1)
        pos = m.end()
    parts.append(data[pos:])
    return b"".join(parts)


def line_at(ins_lines: list[int], new_line: int) -> int:
    """Line number in the caller's text of line `new_line` of the prepared text."""
    if not ins_lines:
        return new_line
    return new_line - bisect.bisect_right(ins_lines, new_line)


def mojibake_hint(utf8: bytes) -> bool:
    """True when UTF-8 text shows the sign of UTF-8 read as CP1252 or Latin-1 that the reader
    looks for (Ã, Â, Ä, Å, Ð or Ñ before another non-ASCII character), `%` lines left out (the
    reader drops them). `utf8` must start at a line start."""
    if b"\n%" in utf8 or utf8.startswith(b"%"):
        utf8 = _PERCENT.sub(b"", utf8)
    return _MOJIBAKE_HINT.search(utf8) is not None


def mojibake_hint_single_byte(data: bytes) -> bool:
    """`mojibake_hint` of the UTF-8 of `data` decoded as CP1252 or Latin-1, without decoding it."""
    if b"\n%" in data or data.startswith(b"%"):
        data = _PERCENT.sub(b"", data)
    return _MOJIBAKE_HINT_1BYTE.search(data) is not None


def text_columns(raw_games: list[RawGame], movetexts: list[bytes]) -> tuple[pl.Series, pl.Series] | None:
    """The raw games' tag sections and movetexts as Polars string Series, or None when they
    are not UTF-8."""
    import polars as pl

    try:
        return (
            pl.Series([rg.header for rg in raw_games], dtype=pl.Binary).cast(pl.String),
            pl.Series(movetexts, dtype=pl.Binary).cast(pl.String),
        )
    except pl.exceptions.PolarsError:
        return None


def needs_fixes(columns: tuple[Any, Any]) -> bool:
    """True when a tag section or movetext holds what `prepare(quick=True)` left out. Together
    they hold every non-blank byte of the text."""
    headers, movetexts = columns

    def any_at_line_start(c: Any) -> bool:
        if any(
            bool(c.str.starts_with(start).any()) or bool(c.str.contains("\n" + start, literal=True).any())
            for start in _LINE_STARTS
        ):
            return True
        blank = c.str.contains(_BLANK_STARTS) | c.str.starts_with(" ") | c.str.starts_with("\t")
        return bool(c.filter(blank.fill_null(False)).str.contains(_INDENTED).any())

    def any_glued(c: Any, prefilter: bool) -> bool:
        if prefilter:
            c = c.filter(c.str.contains(_BEFORE_TAG).fill_null(False))
        return bool(c.str.contains(_GLUED_TAG).any())

    return any(
        bool(c.str.contains("\ufeff", literal=True).any()) or any_at_line_start(c) or any_glued(c, c is headers)
        for c in (headers, movetexts)
    )
