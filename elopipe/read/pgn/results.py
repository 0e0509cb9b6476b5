"""PGN results and time controls as data: normalisation tables and the FIDE rate class.

Results (PGN standard, section 8.2.6 of the PGN spec): only `1-0`, `0-1`, `1/2-1/2` and `*`
are valid. Files in the wild also write `½-½`, `0.5-0.5`, `1:0`, ChessBase forfeit marks
`+:-` / `-:+` / `-:-`, `+/-`, `0-0` (double forfeit) and `1-0 (forfeit)`. `normalise_result`
maps each to a `ResultForm`; anything it does not know is the unknown result `*`, never a
draw (pgn-faults.md entries 11 and 12).

Time controls: FIDE Laws of Chess, Appendices A.1 and B.1, and the FIDE rating regulations
(see shared/specs/fide-rating-rules.md §11): the time for 60 moves is base + 60 × increment;
standard is ≥ 60 min, rapid more than 10 and less than 60 min, blitz more than 3 and at most
10 min. Faster games (bullet) and correspondence are not rated by FIDE: class None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from elopipe.read.rate_of_play import classify_minutes  # the FIDE thresholds, in one place

ONE = Decimal(1)
HALF = Decimal("0.5")
ZERO = Decimal(0)


@dataclass(frozen=True)
class ResultForm:
    """A result string, normalised.

    `result` is '1-0' | '0-1' | '1/2-1/2' | '*' | '0-0'; `standard` is True only for the four
    PGN forms written exactly; `forfeit` is True when the notation itself says the game was
    not played (ChessBase `+:-`, `1-0 (forfeit)`, `0-0`).
    """

    result: str
    standard: bool
    forfeit: bool = False
    known: bool = True


_STANDARD = {r: ResultForm(r, True) for r in ("1-0", "0-1", "1/2-1/2", "*")}

# Written forms that people understand but that are not valid PGN (faults 11, 12).
_ODD: dict[str, ResultForm] = {}
for _raw in ("½-½", "1/2", "0.5-0.5", ".5-.5", "=-=", "1/2:1/2", "½:½", "0.5:0.5", "draw", "½"):
    _ODD[_raw] = ResultForm("1/2-1/2", False)
for _raw in ("1:0", "1-0.0", "1.0-0.0", "1.0-0", "white wins"):
    _ODD[_raw] = ResultForm("1-0", False)
for _raw in ("0:1", "0-1.0", "0.0-1.0", "0-1.0", "black wins"):
    _ODD[_raw] = ResultForm("0-1", False)
for _raw in ("+:-", "+/-", "+--", "1-0f", "1f-0", "1f-0f", "1-0ff", "1-0 ff", "+-0", "1-0 forfeit", "1-0 (forfeit)"):
    _ODD[_raw] = ResultForm("1-0", False, forfeit=True)
for _raw in ("-:+", "-/+", "--+", "0-1f", "0f-1", "0f-1f", "0-1ff", "0-1 ff", "0-+", "0-1 forfeit", "0-1 (forfeit)"):
    _ODD[_raw] = ResultForm("0-1", False, forfeit=True)
for _raw in ("-:-", "-/-", "0-0", "0:0", "0f-0f", "0-0 (forfeit)", "0-0 forfeit", "0-0f"):
    _ODD[_raw] = ResultForm("0-0", False, forfeit=True)

# Termination values that say the game was not played over the board (PGN standard 9.8.1 has
# "abandoned"; exports write "forfeit", "unplayed", "not played", "walkover"). A loss on time is
# a played game: "Time forfeit" (lichess writes it on every such game), "forfeits on time" —
# but "Forfeit: Black did not arrive in time" is a forfeit.
_UNPLAYED_TERMINATIONS = ("unplayed", "not played", "abandoned", "walkover")
_ON_TIME = ("time forfeit", "on time")


def unplayed_termination(term_l: str) -> bool:
    """Whether a Termination value (lower case) marks the game as not played (see above)."""
    forfeit = "forfeit" in term_l and not any(t in term_l for t in _ON_TIME)
    return forfeit or any(t in term_l for t in _UNPLAYED_TERMINATIONS)


def unplayed_termination_expr(term_l: Any) -> Any:
    """`unplayed_termination` as a Polars expression over a lower-case Termination column."""
    marked = term_l.str.contains("forfeit", literal=True)
    for t in _ON_TIME:
        marked = marked & ~term_l.str.contains(t, literal=True)
    for t in _UNPLAYED_TERMINATIONS:
        marked = marked | term_l.str.contains(t, literal=True)
    return marked


_UNKNOWN = ResultForm("*", False, known=False)
_DASHES = str.maketrans({"–": "-", "—": "-", "−": "-", "‐": "-"})
_SPACES = re.compile(r"\s+")

# Result markers accepted at the end of movetext. `+-`/`-+` are left out on purpose: in movetext
# they are evaluation glyphs ("White is winning"), not results.
MARKERS = frozenset({"1-0", "0-1", "1/2-1/2", "*", "½-½", "1/2", "0.5-0.5", "+:-", "-:+", "-:-", "1:0", "0:1"})

SCORES: dict[str, tuple[Decimal | None, Decimal | None]] = {
    "1-0": (ONE, ZERO),
    "0-1": (ZERO, ONE),
    "1/2-1/2": (HALF, HALF),
    "0-0": (ZERO, ZERO),
    "*": (None, None),
}


def normalise_result(raw: str | None) -> ResultForm | None:
    """Normalise a Result tag or movetext marker. None when `raw` is absent or empty/placeholder
    ('', '?', '-', '---'): the caller then has no result from this source."""
    if raw is None:
        return None
    hit = _STANDARD.get(raw)
    if hit is not None:
        return hit
    s = raw.strip()
    if s in ("", "?", "-", "--", "---", "??"):
        return None
    hit = _STANDARD.get(s)
    if hit is not None:
        return ResultForm(hit.result, False)  # right value, stray whitespace
    s = _SPACES.sub(" ", s.translate(_DASHES).lower())
    hit = _ODD.get(s) or _ODD.get(s.replace(" ", ""))
    if hit is not None:
        return hit
    compact = s.replace(" ", "")
    if compact in _STANDARD:
        return ResultForm(compact, False)
    # '1-0 (forfeit)', '0-1 by forfeit', '1-0 (ff)' and the like
    m = re.match(r"^(1-0|0-1|0-0|1/2-1/2|½-½)\b.*\b(forfeit|ff|default|forf)\b", s)
    if m:
        res = "1/2-1/2" if m.group(1) in ("1/2-1/2", "½-½") else m.group(1)
        return ResultForm(res, False, forfeit=res != "1/2-1/2")
    return _UNKNOWN


# ---- time control --------------------------------------------------------------------------

_PERIOD = re.compile(r"^(?:(\d+)/)?(\d+(?:\.\d+)?)(?:\+(\d+(?:\.\d+)?))?$")
_FREE_MIN = re.compile(r"(\d+)\s*(?:min|minutes|mins|')", re.I)
_FREE_INC = re.compile(r"(\d+)\s*(?:s|sec|secs|seconds|\")\b[^.]*?(?:increment|per move|bonus|inc)", re.I)
_FREE_INC2 = re.compile(r"(?:increment|bonus|inc)\D{0,30}?(\d+)\s*(?:s|sec|secs|seconds)\b", re.I)


def minutes_for_60_moves(tc: str | None) -> float | None:
    """Minutes a player has for 60 moves under a PGN TimeControl value, or None if unknown.

    Accepts the PGN spec forms `S`, `S+I`, `M/S`, multi-period `M/S:M/S:S+I` (seconds), and
    free text such as '90 minutes for 40 moves, followed by 30 minutes ... 30 seconds
    increment' (fault 19). '?', '-' and '' are unknown; correspondence ('1/259200') gives None.
    """
    if not tc:
        return None
    s = tc.strip()
    if s in ("?", "-", "", "*"):
        return None
    periods = s.split(":")
    parsed = [_PERIOD.match(p.strip()) for p in periods]
    if all(parsed):
        total = 0.0
        moves = 0
        inc = 0.0
        for m in parsed:
            assert m is not None
            n_moves, secs, incr = m.groups()
            if incr:
                inc = max(inc, float(incr))
            if moves < 60:
                total += float(secs)
            if n_moves:
                if int(n_moves) < 10 and float(secs) >= 86400:  # days per move: correspondence
                    return None
                moves += int(n_moves)
            else:
                moves = 60
        return (total + 60 * inc) / 60.0
    mins = [int(x) for x in _FREE_MIN.findall(s)]
    if not mins:
        return None
    inc_m = _FREE_INC.search(s) or _FREE_INC2.search(s)
    inc = float(inc_m.group(1)) if inc_m else 0.0
    return sum(mins) + inc  # 60 moves x inc seconds = inc minutes


def rate_class(tc: str | None) -> str | None:
    """'standard' | 'rapid' | 'blitz' from a TimeControl value (FIDE thresholds, module doc);
    None when unknown, bullet (≤ 3 min) or correspondence."""
    minutes = minutes_for_60_moves(tc)
    if minutes is None:
        return None
    c = classify_minutes(minutes)
    if c is None:  # minutes <= 0
        return None
    return {"bullet": None, "correspondence": "standard"}.get(c, c)
