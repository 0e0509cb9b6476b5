"""Movetext: the one SAN grammar, the skim of a game's main line and its hash forms.

The SAN grammar is written once (`SAN_PIECES`, `FILES`, `RANKS`, `PROMOTIONS`, `CASTLING`,
`NULL_MOVES`): `SAN_SET` enumerates it for the one-by-one reader (dict lookups run in C) and
`san_regex()` writes it as a regular expression for the column-wise path (elopipe.read.pgn.columns).
"""

from __future__ import annotations

import hashlib
import re

from elopipe.read.pgn.results import (
    MARKERS,
)
from elopipe.read.pgn.split import blanks, strip_comments

# Movetext is skimmed as UTF-8 bytes: no per-slice width scan of a wide str, and sha1 needs bytes.
_SEMI = re.compile(rb";[^\n]*")


_NAG = re.compile(rb"\$\d*")


_MARKERS_B = frozenset(m.encode() for m in MARKERS)


# The SAN grammar, written once. A move is a piece move (piece, optional file, rank or square of
# departure, optional capture, destination), a pawn move (destination, or a capture from an
# adjacent file; to the last rank with an optional promotion), castling, or a null move.
SAN_PIECES = "KQRBN"
FILES = "abcdefgh"
RANKS = "12345678"
LAST_RANKS = "18"
PROMOTIONS = "QRBN"
CASTLING = ("O-O-O", "O-O")
CASTLING_DIGITS = ("0-0-0", "0-0")  # written by some programs; `0-0` is also a double forfeit
NULL_MOVES = ("--", "Z0")


def _adjacent_captures() -> list[str]:
    """'axb', 'bxa', 'bxc', ...: the files a pawn captures from and to."""
    return [f + "x" + g for i, f in enumerate(FILES) for g in FILES[max(0, i - 1) : i + 2] if g != f]


def _san_set() -> frozenset[str]:
    """Every SAN move string of the grammar (without check or annotation suffixes): about 53,000
    strings, so the words of a movetext are recognised by dict lookups run in C instead of a regex
    per token."""
    squares = [f + r for f in FILES for r in RANKS]
    out: set[str] = set()
    for piece in SAN_PIECES:
        for dis in ["", *FILES, *RANKS, *squares]:
            for cap in ("", "x"):
                for sq in squares:
                    out.add(piece + dis + cap + sq)
    pawn: set[str] = set(squares) | {c + r for c in _adjacent_captures() for r in RANKS}
    for base in list(pawn):
        if base[-1] in LAST_RANKS:
            for promo in PROMOTIONS:
                pawn.add(base + "=" + promo)
                pawn.add(base + promo)
    out |= pawn
    out.update(CASTLING + CASTLING_DIGITS + NULL_MOVES)
    return frozenset(out)


def san_regex() -> str:
    """The grammar as a regular expression (Rust regex syntax, for Polars) matching exactly the
    words of `SAN_SET` except `CASTLING_DIGITS` and `NULL_MOVES`, which the column-wise path leaves
    to the one-by-one reader."""
    piece, files, ranks = f"[{SAN_PIECES}]", f"[{FILES[0]}-{FILES[-1]}]", f"[{RANKS[0]}-{RANKS[-1]}]"
    adjacent = "|".join(_adjacent_captures())
    pawn = f"(?:{files}|{adjacent})(?:[{LAST_RANKS}]=?[{PROMOTIONS}]|{ranks})"
    return f"(?:{piece}{files}?{ranks}?x?{files}{ranks}|{pawn}|{'|'.join(CASTLING)})"


SAN_SET = frozenset(san.encode() for san in _san_set())


def _hash_form(san: str) -> str:
    """The form a SAN token takes in the movetext hash: a piece move is the piece and its
    destination ('Ngf3', 'Ng1f3', 'Nxf3' -> 'Nf3'), since exporters differ in disambiguation
    (fide_candidates_2022 writes 'Ngf3' where wchcand22 writes 'Nf3'); castling with letters;
    null moves '--'; promotions with '='. A position-true canonical SAN would need a replay,
    which the default mode does not do; the lost detail never makes two games of different
    players or dates collide, and game identity also compares those (issue 7)."""
    if san[0] in "KQRBN":
        return san[0] + san[-2:]
    if san[0] in "O0":
        return "O-O-O" if len(san) == 5 else "O-O"
    if san in ("--", "Z0"):
        return "--"
    if san[-1] in "QRBN" and san[-2] != "=":
        return san[:-1] + "=" + san[-1]
    return san


HASH_FORM = {san: _hash_form(san.decode()).encode() for san in SAN_SET}


def _strip_variations(s: bytes, keep_length: bool = False) -> tuple[bytes, bool, bool]:
    """`s` without its ( ) variations: each outermost balanced pair, nested ones inside, becomes a
    space (with `keep_length`, spaces of its length, newlines kept); a ) that closes nothing
    becomes a space; the text from the first ( that is never closed is dropped. Returns (text,
    any stray ')', any unclosed '('). One pass over the brackets: a file nested 50,000 levels
    deep (hostile, or broken) costs no more than its length."""
    parts: list[bytes] = []
    depth, start, done = 0, 0, 0
    stray = False
    for m in _PAREN.finditer(s):
        i = m.start()
        if s[i] == 40:  # (
            if depth == 0:
                start = i
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                parts += [s[done:start], blanks(s[start : i + 1]) if keep_length else b" "]
                done = i + 1
        else:
            parts += [s[done:i], b" "]
            done, stray = i + 1, True
    if depth:  # an unclosed (: what follows it is no main line
        parts.append(s[done:start])
    else:
        parts.append(s[done:])
    return b"".join(parts), stray, depth > 0


_PAREN = re.compile(rb"[()]")


def skim(mt: bytes) -> tuple[list[bytes], str | None, list[tuple[str, str, str]], int]:
    """(SAN tokens, final marker or None, problems as (code, severity, message), n ignored tokens)."""
    probs: list[tuple[str, str, str]] = []
    s = mt
    if b"{" in s or b"}" in s:
        s = strip_comments(s)
        if b"{" in s:
            s = s[: s.index(b"{")]
            probs.append(("unterminated_comment", "error", "movetext ends inside a { comment"))
        if b"}" in s:
            s = s.replace(b"}", b" ")
            probs.append(("stray_brace", "warning", "stray } in movetext"))
    if b";" in s:
        s = _SEMI.sub(b" ", s)
    if b"(" in s or b")" in s:
        s, stray_close, open_left = _strip_variations(s)
        if stray_close:
            probs.append(("unbalanced_variation", "warning", "stray ) in movetext ignored"))
        if open_left:
            probs.append(("unterminated_variation", "error", "movetext ends inside a ( variation"))
    if b"$" in s:
        s = _NAG.sub(b" ", s)
    tail = s.rstrip()
    marker = None
    if tail:
        last = tail[-12:].split()[-1]
        if last in _MARKERS_B:
            marker = last.decode()
            tail = tail[: -len(last)]
    if b"e.p" in tail:
        tail = tail.replace(b"e.p.", b" ").replace(b"e.p", b" ")
    # "1.e4" and "10....Qd4" become "1." "e4" and "10." "." "." "." "Qd4": every "." makes exactly
    # one non-move word, so the words left over after the SAN filter (run in C) are counted
    words = tail.replace(b".", b". ").translate(None, b"+#!?").split()
    # the hash forms of the SAN words, non-moves dropped: one pass in C (map + filter)
    forms = list(filter(None, map(HASH_FORM.get, words)))
    n_bad = len(words) - len(forms) - tail.count(b".")
    if marker is None and forms and forms[-1] == b"O-O" and tail.endswith(b"0-0"):
        marker = "0-0?"  # castling or double forfeit: the caller decides with the Result tag
    return forms, marker, probs, n_bad


def san_words(mt: bytes) -> list[bytes]:
    """The SAN tokens as written (for a replay), in the same order as `skim`'s forms."""
    s = mt
    if b"{" in s:
        s = strip_comments(s)
        if b"{" in s:
            s = s[: s.index(b"{")]
    if b";" in s:
        s = _SEMI.sub(b" ", s)
    if b"(" in s or b")" in s:
        s = _strip_variations(s)[0]
    s = s.replace(b"e.p.", b" ").replace(b".", b". ").translate(None, b"+#!?")
    return [w for w in s.split() if w in SAN_SET]


def san_offsets(mt: bytes) -> list[tuple[bytes, int]]:
    """`san_words(mt)` with the offset of each word in `mt`: comments, variations and `;` lines
    are blanked in place (same length), so an offset counts the movetext's own bytes. Used only to
    place an illegal move on its line, so it is computed only for such a game."""
    s = strip_comments(mt, keep_length=True) if b"{" in mt else mt
    if b"{" in s:
        s = s[: s.index(b"{")]
    if b";" in s:
        s = _blank(_SEMI, s)
    if b"(" in s or b")" in s:
        s = _strip_variations(s, keep_length=True)[0]
    s = s.replace(b"e.p.", b"    ").translate(_MARKS_TO_SPACE)
    return [(m.group(), m.start()) for m in _WORD_OR_DOT.finditer(s) if m.group() in SAN_SET]


_MARKS_TO_SPACE = bytes.maketrans(b"+#!?", b"    ")


_WORD_OR_DOT = re.compile(rb"[^\s.]+\.?")


def _blank(pattern: re.Pattern[bytes], s: bytes) -> bytes:
    """`pattern`'s matches in `s` replaced by spaces of the same length, their newlines kept."""
    return pattern.sub(lambda m: blanks(m.group()), s)


def hash_forms(forms: list[bytes]) -> str | None:
    """`movetext_hash` of SAN words in their `HASH_FORM`: sha1 hex of them joined by one space;
    None when there are none."""
    return hashlib.sha1(b" ".join(forms)).hexdigest() if forms else None
