"""Builders for synthetic TRF text in tests: rows are laid out on the TRF16 column grid."""

from __future__ import annotations


def block(opponent: int | str | None, colour: str = "-", result: str = " ") -> str:
    """One 8-character round block: opponent (right-aligned, '0000' when 0), colour, result."""
    if opponent is None:
        opp = "    "
    elif isinstance(opponent, str):
        opp = opponent.rjust(4)
    else:
        opp = f"{opponent:>4}" if opponent else "0000"
    return f"{opp} {colour} {result}"


def row(
    rank: int,
    name: str,
    blocks: list[str] = (),
    *,
    sex: str = "m",
    title: str = "",
    rating: int | str = "",
    fed: str = "",
    fide_id: int | str = "",
    birth: str = "",
    points: str = "0.0",
    final_rank: int | str = "",
) -> str:
    """A `001` row with every field at its TRF16 column (1-based: rank 5-8, name 15-47, ...)."""
    head = (
        f"001 {rank:>4} {sex:1}{title:>3} {name:<33} {rating!s:>4} {fed:<3} {fide_id!s:>11} "
        f"{birth:<10} {points:>4} {final_rank!s:>4}"
    )
    assert len(head) == 89, head
    return (head + "  " + "  ".join(blocks)).rstrip()


def trf(*lines: str, header: bool = True) -> str:
    top = ["012 Test Open", "022 Paris", "032 FRA", "042 2024/03/01", "052 2024/03/03"] if header else []
    return "\n".join([*top, *lines]) + "\n"
