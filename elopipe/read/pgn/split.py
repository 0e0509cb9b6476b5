"""Cutting a PGN text into raw games: tag blocks, movetexts, and the faults that blur the cut.

A tag block is a run of lines that start with `[Name `; the movetext of a game is what lies
between its tag block and the next one. The rules for blank lines inside a tag section (fault 25),
headers-only games (fault 29), tag blocks inside an unterminated `{` comment (fault 22), games
without tags after a result marker (fault 37) and markers glued to the next `[Event` are in the
reader's module docstring (elopipe.read.pgn.reader).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from functools import partial
from typing import NamedTuple

# A tag line: `[Name "value"]`, `[Name<TAB>"value" ]`, `[Name value]`, `[Name"value"]`.
# Searched as "\n[" so the regex engine can jump between candidates (a literal prefix).
_TAG_LINE = r'\[[ \t]*[A-Za-z][A-Za-z0-9_]*(?:[ \t]*"|[ \t]+[^\s\]"][^\n]*\])[^\n]*'


# Possessive: nothing follows the lines, so giving one back never helps (a quarter less time).
# The first line is written out so that the pattern starts with the literal "\n[", which the
# regex engine searches for; with "\n" alone it tried every line of the movetexts too (a tenth less).
_TAG_LINE_REST = _TAG_LINE.removeprefix(r"\[")
_BLOCK = re.compile(rf"\n(\[{_TAG_LINE_REST}(?:\n|\Z)(?:{_TAG_LINE}(?:\n|\Z))*+)".encode())


_TAG_NAMES = re.compile(rb"(?m)^[ \t]*\[[ \t]*([A-Za-z][A-Za-z0-9_]*)")


_BLANK_LINE = re.compile(rb"\n[ \t]*\n")


_MARKER_ENDS = (b"1-0", b"0-1", b"1/2-1/2", b"*")


_WS = b" \t\n"


class RawGame(NamedTuple):
    header: bytes  # tag lines (possibly several blocks joined)
    header_start: int  # offset of the first tag line, or of the movetext when headerless
    mt_start: int
    mt_end: int


_new_raw_game = partial(tuple.__new__, RawGame)  # from a 4-tuple, in C (no Python __new__ per game)


def strip_comments(s: bytes, repl: bytes = b" ", keep_length: bool = False) -> bytes:
    """`s` with each `{...}` comment replaced by `repl` (with `keep_length`, spaces of its length,
    newlines kept), as the regex `{[^}]*}` would, but in one pass: from an unclosed `{` on, the
    text is left as it is. The regex tried every later `{` to the end of the text: a movetext of
    40,000 unclosed braces took seconds, a few megabytes minutes."""
    parts: list[bytes] = []
    i = 0
    while (a := s.find(b"{", i)) >= 0 and (b := s.find(b"}", a + 1)) >= 0:
        parts += [s[i:a], blanks(s[a : b + 1]) if keep_length else repl]
        i = b + 1
    parts.append(s[i:])
    return b"".join(parts)


def _open_comment(seg: bytes) -> bool:
    """True when `seg` ends inside an unterminated `{` comment."""
    last_open = seg.rfind(b"{")
    if last_open < 0 or last_open < seg.rfind(b"}"):  # every `{` is closed by a later `}`
        return False
    rest = strip_comments(seg, b"")
    i = rest.find(b"{")
    if i < 0:
        return False
    j = rest.find(b";")
    # a `{` after a `;` on the same line is comment text, not an opening brace
    return not (0 <= j < i and b"\n" not in rest[j:i])


def in_line_comment(data: bytes, pos: int) -> bool:
    """True when `pos` lies after a `;` or inside a `{` opened earlier on its line."""
    head = data[data.rfind(b"\n", 0, pos) + 1 : pos]
    if b"{" in head:
        head = strip_comments(head)
        if b"{" in head:
            return True
    return b";" in head


def _names(block: bytes) -> list[bytes]:
    return _TAG_NAMES.findall(block)


def split_games(text: bytes) -> list[RawGame]:
    """Raw games of `text`, which starts with a "\n" (see `_BLOCK`)."""
    return split_movetexts(text)[0]


def _plain_blocks(text: bytes, blocks: list[tuple[int, int]], end: int) -> tuple[list[bool], list[bytes]] | None:
    """For each tag block, whether the text up to the next block is a plain movetext: not empty
    nor a short run of whitespace (a blank line inside a tag section), no `{` left open, no blank
    line followed by more text (a game without tags). For such a block `split` takes the movetext
    as it is; it looks at the others closely. Also the movetexts. None if they are not UTF-8."""
    import polars as pl

    ends = [b for _, b in blocks]
    starts = [a for a, _ in blocks[1:]] + [end]
    segs = [text[b:a] for b, a in zip(ends, starts, strict=True)]
    try:
        m = pl.Series(segs, dtype=pl.Binary).cast(pl.String)
    except pl.exceptions.PolarsError:
        return None
    n = m.str.len_bytes()
    short_space = (n < 64) & m.str.contains(r"^[ \t\n\r\x0b\x0c]*$")
    plain = (n > 0) & ~short_space & ~m.str.contains(r"(?s)\n[ \t]?\n.*[^ \t\n]")
    # a `{` left open: the last `{` comes after the last `}` (a regex over every movetext is slower)
    braces = m.str.contains("{", literal=True).arg_true().to_list()
    opened = [i for i in braces if segs[i].rfind(b"{") > segs[i].rfind(b"}")]
    if opened:
        plain = plain.scatter(opened, False)
    return plain.to_list(), segs


def split_movetexts(text: bytes) -> tuple[list[RawGame], list[bytes]]:
    """Raw games of `text` (see `split`) and their movetexts."""
    raw: list[RawGame] = []
    movetexts: list[bytes] = []
    for part_raw, part_movetexts in split_parts(text, 1):
        raw += part_raw
        movetexts += part_movetexts
    return raw, movetexts


def split_parts(text: bytes, parts: int | None) -> Iterator[tuple[list[RawGame], list[bytes]]]:
    """`split_movetexts(text)` in about `parts` consecutive pieces (raw games and movetexts),
    each yielded as soon as it is split, so that a consumer can start on it. The pieces joined
    are exactly the whole: the loop over tag blocks only pauses between them. `parts` None: one
    piece per `COLUMN_CHUNK_GAMES` tag blocks, at most `COLUMN_CHUNKS`."""
    blocks = [m.span(1) for m in _BLOCK.finditer(text)]
    if parts is None:
        parts = max(1, min(COLUMN_CHUNKS, len(blocks) // COLUMN_CHUNK_GAMES))
    raw: list[RawGame] = []
    first = blocks[0][0] if blocks else len(text)
    if text[:first].strip():
        _add_headerless(raw, text, 0, first)
    movetexts: list[bytes] = [text[g.mt_start : g.mt_end] for g in raw]
    n = len(blocks)
    i = 0
    for part in range(max(1, parts)):
        stop = n if part == parts - 1 else max(i, n * (part + 1) // parts)
        if i >= stop and part < parts - 1:
            continue
        i = _split_blocks(text, blocks, i, stop, raw, movetexts)
        yield raw, movetexts
        raw, movetexts = [], []


def _split_blocks(
    text: bytes, blocks: list[tuple[int, int]], i: int, stop: int, raw: list[RawGame], movetexts: list[bytes]
) -> int:
    """Split the games that start at tag blocks `i`.. before block `stop` (a game may take in
    later blocks); append them to `raw` and their movetexts to `movetexts`. Returns the block
    where the next game starts."""
    n = len(blocks)
    base = i
    quick = _plain_blocks(text, blocks[i:stop], blocks[stop][0] if stop < n else len(text)) if stop - i >= 64 else None
    plain, segs = quick if quick is not None else ([False] * (stop - i), [])
    odd = [base + k for k, p in enumerate(plain) if not p] + [stop]  # blocks the loop below looks at closely
    while i < stop:
        if plain[i - base]:
            # a run of plain blocks: what the loop below does for each, without looking
            k = odd[bisect.bisect_left(odd, i)]
            spans = blocks[i:k]
            nexts = [a for a, _ in blocks[i + 1 : k + 1]] + ([len(text)] if k == n else [])
            heads = [text[a:b] for a, b in spans]
            raw.extend(map(_new_raw_game, zip(heads, [a for a, _ in spans], [b for _, b in spans], nexts, strict=True)))
            movetexts.extend(segs[i - base : k - base])
            i = k
            continue
        done = len(raw)
        b_start, b_end = blocks[i]
        header = text[b_start:b_end]
        mt_start = b_end
        j = i + 1
        while j < n:
            nxt_start, nxt_end = blocks[j]
            gap = nxt_start - mt_start
            if gap == 0 or (gap < 64 and text[mt_start:nxt_start].isspace()):
                nxt = text[nxt_start:nxt_end]
                if set(_names(header)).isdisjoint(_names(nxt)):
                    header += nxt  # blank line inside the tag section
                    mt_start = nxt_end
                    j += 1
                    continue
                break
            if (
                text.find(b"{", b_end, nxt_start) >= 0
                and _open_comment(text[b_end:nxt_start])
                and not _ends_runaway_comment(text, nxt_start, nxt_end)
            ):
                j += 1  # tag-like lines inside a comment are movetext
                continue
            break
        mt_end = blocks[j][0] if j < n else len(text)
        cut = _next_game_cut(text, mt_start, mt_end)
        if cut is not None:
            raw.append(RawGame(header, b_start, mt_start, cut))
            _add_headerless(raw, text, cut, mt_end)
        else:
            raw.append(RawGame(header, b_start, mt_start, mt_end))
        movetexts.extend(text[g.mt_start : g.mt_end] for g in raw[done:])
        i = j
    return i


def _ends_runaway_comment(text: bytes, start: int, end: int) -> bool:
    """True when the tag block text[start:end], met inside an open `{` comment, is a new game's
    tag section rather than comment text: it follows a blank line, or it starts with `[Event` and
    has another tag line or a blank line after it. An unclosed `{` would otherwise swallow every
    later game of the file; a one-line `[Event "..."]` inside a comment that closes right after
    stays comment text (fault 22)."""
    prev_nl = text.rfind(b"\n", 0, start - 1)
    if prev_nl >= 0 and not text[prev_nl + 1 : start - 1].strip():
        return True
    if text[start : start + 6] != b"[Event" or text[start + 6 : start + 7] not in (b" ", b"\t", b'"'):
        return False
    if text.find(b"\n[", start, end) >= 0:
        return True
    nl = text.find(b"\n", end)
    return not text[end : nl if nl >= 0 else len(text)].strip()


def _next_game_cut(text: bytes, start: int, end: int) -> int | None:
    """Where a game without tags starts inside text[start:end]: after a result marker that ends
    a line followed by a blank line and more movetext (fault 37). None if there is no such place."""
    e = end
    while e > start and text[e - 1] in _WS:
        e -= 1
    if text.find(b"\n\n", start, e) < 0 and text.find(b"\n \n", start, e) < 0 and text.find(b"\n\t\n", start, e) < 0:
        return None
    body = text[start:e]
    for m in _BLANK_LINE.finditer(body):
        before = body[: m.start()].rstrip()
        if (
            before.endswith(_MARKER_ENDS)
            and not body[m.end() :].lstrip().startswith(b"[")
            and not _open_comment(before)
        ):
            return start + m.end()
    return None


def _add_headerless(raw: list[RawGame], text: bytes, start: int, end: int) -> None:
    """Games without a tag section between `start` and `end`, split at marker + blank line."""
    pos = start
    while pos < end:
        cut = _next_game_cut(text, pos, end)
        stop = cut if cut is not None else end
        seg = text[pos:stop]
        if seg.strip():
            lead = len(seg) - len(seg.lstrip())
            raw.append(RawGame(b"", pos + lead, pos, stop))
        pos = stop


def blanks(b: bytes) -> bytes:
    return bytes(c if c == 10 else 32 for c in b)


COLUMN_CHUNKS = 4  # a large file is analysed in up to this many chunks (see read_loop.ReadLoop._run_columns)


COLUMN_CHUNK_GAMES = 15_000  # at least this many raw games per chunk
