"""The round blocks of a TRF `001` row (trf-format.md §5): round r at cols 82+10r .. 89+10r,
opponent, colour and result code. Read here, one row at a time; paired across rows by
`elopipe.read.trf.rounds`."""

from __future__ import annotations

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
    known = _BLOCKS
    for r, at in enumerate(range(91, 91 + 10 * n, 10), start=1):
        cols = padded[at : at + 10]
        read = known.get(cols)
        if read is None:
            read = _read_block(cols)
        if read[5]:
            issues.add(
                "trf_block_overflow",
                f"round {r}: characters in cols {90 + 10 * r}-{91 + 10 * r}",
                no,
                "warning",
                line,
            )
        if read[0] != _ODD:
            append(Block(rank, r, read[0], read[1], read[2], read[3], no, read[4]))
        else:
            append(_odd_block(no, line, rank, r, read[3], issues))
    return blocks


# The 10 columns of a round, read (`_read_block`): a month of TRF holds a few thousand distinct
# ones among hundreds of thousands, and a row's blocks are read once each. A plain dict, emptied
# when full: a lookup costs a third of an `lru_cache` call, which reorders its list on each hit.
_Read = tuple[int | None, str | None, str, str, bool, bool]
_BLOCKS: dict[str, _Read] = {}
_BLOCKS_MAX = 1 << 15
_ODD = -1  # the opponent of a block `_clean_block` refuses (`_odd_block` reads it): no start rank


def _read_block(cols: str) -> _Read:
    """(opponent, colour, code, raw, empty, overflow) of the 10 columns of one round, added to
    `_BLOCKS`: `raw` its first 8, the first four as `_clean_block` reads them (opponent `_ODD`
    when it refuses them: `_odd_block` reads the block), `overflow` whether its last two columns
    hold characters."""
    raw = cols[:8]
    clean = _clean_block(raw)
    overflow = bool(cols[8:].strip())
    read: _Read = (_ODD, None, "", raw, False, overflow) if clean is None else (*clean[:3], raw, clean[3], overflow)
    if len(_BLOCKS) >= _BLOCKS_MAX:
        _BLOCKS.clear()
    _BLOCKS[cols] = read
    return read


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
