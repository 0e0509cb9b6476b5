"""The round blocks of a TRF `001` row (trf-format.md §5): round r at cols 82+10r .. 89+10r,
opponent, colour and result code. Read here, one row at a time; paired across rows by
`elopipe.read.trf.rounds`."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from elopipe.read.field_bounds import ROUND_MAX
from elopipe.read.records import PlayerRec
from elopipe.read.trf.codes import ALL_CODES
from elopipe.read.trf.issues import IssueLog, shown


@dataclass(slots=True)
class Block:
    """One round block of a `001` row (cols 82+10r .. 89+10r)."""

    rank: int
    round: int
    opponent: int | None  # None = 0000 / blank
    colour: str | None  # 'w' | 'b' | None ('-' or blank)
    code: str  # upper-cased result character; ' ' when blank
    raw: str
    line: int
    empty: bool  # nothing written in the block's columns (`raw` blank)


@dataclass
class TrfRow:
    """One `001` row: the player, its round blocks, its line number and raw text."""

    player: PlayerRec
    blocks: list[Block]
    line: int
    raw: str


def parse_blocks(no: int, line: str, rank: int, issues: IssueLog) -> list[Block]:
    """The round blocks of one `001` row (round r at cols 82+10r .. 89+10r, §5); bad ones get code '?'."""
    body = line.rstrip()
    n = max(0, (len(body) - 91 + 9) // 10)
    if n > ROUND_MAX:
        issues.add("trf_too_many_rounds", f"{n} round blocks: blocks after round {ROUND_MAX} not read", no, "error")
        n = ROUND_MAX
    # blank beyond the end of the line (§2), as `column` reads it: cols 82+10r .. 91+10r of every round
    padded = line.ljust(91 + 10 * n)
    blocks: list[Block] = []
    append = blocks.append  # a month of TRF holds 270k blocks: lookups hoisted
    read = _read_block
    for r in range(1, n + 1):
        at = 81 + 10 * r
        clean, overflow = read(padded[at : at + 10])
        if overflow:
            issues.add(
                "trf_block_overflow",
                f"round {r}: characters in cols {90 + 10 * r}-{91 + 10 * r}",
                no,
                "warning",
                line,
            )
        if clean is not None:
            opponent, colour, code, raw, empty = clean
            append(Block(rank, r, opponent, colour, code, raw, no, empty))
        else:
            append(_odd_block(no, line, rank, r, padded[at : at + 8], issues))
    return blocks


@functools.lru_cache(maxsize=1 << 15)
def _read_block(cols: str) -> tuple[tuple[int | None, str | None, str, str, bool] | None, bool]:
    """(the block's (opponent, colour, code, raw, empty) when `_clean_block` reads it, else None;
    whether its two columns after the block hold characters) of the 10 columns of one round.
    Cached: a month of TRF holds a few thousand distinct ones among hundreds of thousands, and a
    row's blocks are read once each."""
    raw = cols[:8]
    clean = _clean_block(raw)
    return (None if clean is None else (clean[0], clean[1], clean[2], raw, clean[3])), bool(cols[8:].strip())


def _clean_block(raw: str) -> tuple[int | None, str | None, str, bool] | None:
    """(opponent, colour, code, empty) of a block `_odd_block` reads without an issue: an opponent of
    digits or blank, colour `w`, `b`, `-` or blank, a known result code or blank, blanks between;
    None for any other."""
    opp_txt = raw[0:4].strip()
    if opp_txt and not (opp_txt.isascii() and opp_txt.isdigit()):
        return None
    colour_ch, code = raw[5], raw[7].upper()
    if colour_ch not in "wb- " or raw[4] != " " or raw[6] != " " or (code != " " and code not in ALL_CODES):
        return None
    opponent = (int(opp_txt) or None) if opp_txt else None
    return opponent, colour_ch if colour_ch in "wb" else None, code, not raw.strip()


def _odd_block(no: int, line: str, rank: int, r: int, raw: str, issues: IssueLog) -> Block:
    """Block `r` of a row when `_clean_block` refuses it, each fault an issue."""
    opp_txt = raw[0:4].strip()
    opponent = None
    if opp_txt:
        if opp_txt.isascii() and opp_txt.isdigit():
            opponent = int(opp_txt) or None
        else:
            issues.add("trf_bad_block", f"round {r}: opponent {shown(opp_txt)} not a number", no, "error", line)
            return Block(rank, r, None, None, "?", raw, no, not raw.strip())
    colour_ch = raw[5]
    colour = colour_ch.lower() if colour_ch in "wbWB" else None
    if colour_ch not in "wbWB- ":
        issues.add("trf_bad_block", f"round {r}: colour {shown(colour_ch)} not w/b/-", no, "error", line)
    elif colour_ch in "WB":
        issues.quirk("trf_colour_upper", "colour written in upper case", no, line, "info")
    code = raw[7].upper()
    if code != " " and code not in ALL_CODES:
        issues.add("trf_bad_block", f"round {r}: result code {shown(raw[7])} unknown", no, "error", line)
        code = "?"
    if raw[4] != " " or raw[6] != " ":
        issues.add("trf_bad_block", f"round {r}: block {shown(raw)} off the 10-column grid", no, "warning", line)
    return Block(rank, r, opponent, colour, code, raw, no, not raw.strip())
