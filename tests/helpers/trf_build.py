"""Builders for synthetic TRF text in tests: rows are laid out on the TRF16 column grid."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.paths import SHARED_DATA


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


def results_in_round(text: str, rnd: int, skip: int = 0) -> str:
    """`text` with a result written in round `rnd` of every 001 row that is paired there (w wins,
    b loses), except the rows of the first `skip` boards (by the lower start rank)."""
    pos = 91 + (rnd - 1) * 10  # 0-based start of the round's 10-column block (TRF §5)
    out, left = [], set()
    for line in text.split("\n"):
        opp = line[pos : pos + 4].strip() if line.startswith("001") else ""
        colour = line[pos + 5 : pos + 6] if opp else ""
        if opp.isdigit() and int(opp) and colour in ("w", "b"):
            me = int(line[4:8])
            pair = (min(me, int(opp)), max(me, int(opp)))
            if len(left) < skip or pair in left:
                left.add(pair)
            else:
                line = line.ljust(pos + 8)
                line = line[: pos + 7] + ("1" if colour == "w" else "0") + line[pos + 8 :]
        out.append(line)
    return "\n".join(out)


GROS = "esp_open_gros_2010_javafo_trfx_round5_partial.trf"


def gros_played_rounds(folder: Path) -> Path:
    """Gros 2010 (shared/data/trf) written to `folder` under its own name as the complete event
    of its 4 played rounds: the file declares 9 (``XXR 9``) and enters round-5 byes ahead, an
    event in progress (`elopipe.read.trf.progress`), never rated. Declaring 4 rounds makes it
    complete; its games and byes are the file's."""
    src = SHARED_DATA / "trf" / GROS
    data = src.read_bytes()
    assert data.count(b"\nXXR 9") == 1, "the Gros file changed"
    out = folder / GROS
    out.write_bytes(data.replace(b"\nXXR 9", b"\nXXR 4"))
    return out


CLUB = [
    ("Alpha, Anton", 2100, "24600001", "m"), ("Beta, Bernd", 2000, "24600002", "m"),
    ("Gamma, Gustav", 1900, "24600003", "m"), ("Delta, Dieter", 1800, "24600004", "m"),
    ("Eps, Emil", 1700, "24600005", "m"), ("Zeta, Zora", 1600, "24600006", "w"),
]  # fmt: skip


def round_robin(start: str, end: str, result: str = "1", name: str = "Club Championship") -> str:
    """A TRF of a six-player round-robin (`CLUB`, German FIDE IDs) in Dublin from `start` to `end`
    (YYYY/MM/DD), one round a day, paired by the Berger table: the same pairings whatever the
    dates. White's `result` ('1', '0', '=') in every game: another year's results."""
    n = len(CLUB)
    blocks: dict[int, list[str]] = {i: [] for i in range(1, n + 1)}
    points = dict.fromkeys(range(1, n + 1), 0)  # half-points
    other = {"1": "0", "0": "1", "=": "="}
    half = {"1": 2, "0": 0, "=": 1}
    order = list(range(1, n + 1))
    for r in range(n - 1):
        for k in range(n // 2):
            a, b = (order[k], order[n - 1 - k]) if r % 2 == 0 else (order[n - 1 - k], order[k])
            ra, rb = result, other[result]
            blocks[a].append(block(b, "w", ra))
            blocks[b].append(block(a, "b", rb))
            points[a] += half[ra]
            points[b] += half[rb]
        order = [order[0], order[-1], *order[1:-1]]
    rows = [
        row(
            i,
            nm,
            blocks[i],
            sex=sex,
            rating=rt,
            fed="GER",
            fide_id=fid,
            birth="1990/01/01",
            points=f"{points[i] // 2}.{5 if points[i] % 2 else 0}",
            final_rank=i,
        )  # fmt: skip
        for i, (nm, rt, fid, sex) in enumerate(CLUB, 1)
    ]
    head = [f"012 {name}", "022 Dublin", "032 IRL", f"042 {start}", f"052 {end}", f"062 {n}", "092 Round Robin"]
    return trf(*head, *rows, header=False)
