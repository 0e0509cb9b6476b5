"""The round blocks of a TRF `001` row (trf-format.md §5): round r at cols 82+10r .. 89+10r,
opponent, colour and result code. Read here, one row at a time; paired across rows by
`elopipe.read.trf.rounds`."""

from __future__ import annotations

from dataclasses import dataclass

from elopipe.read.field_bounds import ROUND_MAX
from elopipe.read.records import PlayerRec
from elopipe.read.trf.codes import ALL_CODES
from elopipe.read.trf.fields import column
from elopipe.read.trf.issues import IssueLog, shown


@dataclass
class Block:
    """One round block of a `001` row (cols 82+10r .. 89+10r)."""

    rank: int
    round: int
    opponent: int | None  # None = 0000 / blank
    colour: str | None  # 'w' | 'b' | None ('-' or blank)
    code: str  # upper-cased result character; ' ' when blank
    raw: str
    line: int

    @property
    def empty(self) -> bool:
        return not self.raw.strip()


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
    blocks: list[Block] = []
    for r in range(1, n + 1):
        raw = column(line, 82 + 10 * r, 89 + 10 * r)
        tail = column(line, 90 + 10 * r, 91 + 10 * r)
        if tail.strip():
            issues.add(
                "trf_block_overflow",
                f"round {r}: characters in cols {90 + 10 * r}-{91 + 10 * r}",
                no,
                "warning",
                line,
            )
        opp_txt = raw[0:4].strip()
        opponent = None
        if opp_txt:
            if opp_txt.isascii() and opp_txt.isdigit():
                opponent = int(opp_txt) or None
            else:
                issues.add("trf_bad_block", f"round {r}: opponent {shown(opp_txt)} not a number", no, "error", line)
                blocks.append(Block(rank, r, None, None, "?", raw, no))
                continue
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
        blocks.append(Block(rank, r, opponent, colour, code, raw, no))
    return blocks
