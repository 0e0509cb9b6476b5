"""Time-control classification: standard, rapid, blitz (FIDE B.02 1.3; R&B chapter 1).

The time of a game is counted per player over 60 moves: base time plus 60 × increment
(FIDE rapid/blitz regulations, 2024, article 1; spec §6.1 and §11).  Classes, in minutes
for 60 moves (m):

* ``standard``: m ≥ 60 (the version's minimum by rating, 60/90/120, is checked by the
  engine, not here);
* ``rapid``: 10 < m < 60;
* ``blitz``: 3 < m ≤ 10;
* ``bullet``: m ≤ 3 (not FIDE-rated);
* ``correspondence``: m > 1440 (e.g. PGN ``1/86400``, one move a day; not FIDE-rated);
* ``None``: unknown.  `elopipe.read.rate_evidence` then reads the other evidence (the
  event's name, site, rounds per day) before it assumes a configurable default (standard)
  and flags the games (``rating_changes.tc_assumed``).

Sources of the time control, in order: the game's PGN ``TimeControl`` tag (seconds, PGN
standard §9.6: ``40/5400+30:1800+30``, ``300+2``, ``1/259200``), the tournament's
``rate_class`` when a reader set it, then the tournament's text (TRF ``122``/``222``, free
text such as ``90 minutes + 30 seconds per move`` or ``1:30 + 10 from move 1``).
"""

from __future__ import annotations

import functools
import math
import re

RATE_CLASSES = ("standard", "rapid", "blitz", "bullet", "correspondence")

_PGN_PART = re.compile(r"(?:(\d+)/)?(\d+)(?:\+(\d+(?:\.\d+)?))?")
#: The shortest base time in seconds a PGN TimeControl means (lichess's 1/4 minute); a smaller
#: one is minutes.
SECONDS_BASE_MIN = 15


def pgn_minutes(tc: str | None) -> float | None:
    """Minutes per player for 60 moves from a PGN TimeControl value (seconds), or None.

    A single ``moves/seconds`` control repeats (PGN standard), so ``40/7200`` gives
    7200 × 60/40 s.  Several controls are added until 60 moves are covered; a control
    without a move count (sudden death) ends the sum.  Increments count 60 times.
    """
    if tc is None:
        return None
    s = tc.strip().replace(" ", "")
    if not s or s in ("?", "-"):
        return None
    parts = s.split(":")
    total = 0.0
    inc = 0.0
    moves_done = 0
    for part in parts:
        m = _PGN_PART.fullmatch(part)
        if m is None:
            return None
        mv, secs, incr = m.group(1), float(m.group(2)), float(m.group(3) or 0)
        inc = max(inc, incr)
        if mv is None:
            # '3+2', '5+3': minutes, as some programs write it; no clock starts with 1 to 14
            # seconds (lichess's shortest base is 15 s), so such a base is read as minutes
            total += secs * 60 if len(parts) == 1 and 0 < secs < SECONDS_BASE_MIN else secs
            break
        mv_i = int(mv)
        if mv_i <= 0:
            return None
        if len(parts) == 1:
            total += secs * math.ceil(60 / mv_i)
            break
        total += secs
        moves_done += mv_i
        if moves_done >= 60:
            break
    return (total + 60 * inc) / 60


_HMM = re.compile(r"\b(\d{1,2}):(\d{2})\b")
# '1h30' (French, Spanish: an hour and thirty minutes) -> '1:30'; 'G/90', 'G90' (game in 90
# minutes) -> '90'
_H_MIN = re.compile(r"(?<![\d.])(\d{1,2})\s*h\s*(\d{2})(?![\d])", re.IGNORECASE)
_GAME_IN = re.compile(r"(?<![^\W_])g\s*/?\s*(?=\d)", re.IGNORECASE)


def time_text(text: str) -> str:
    """A time-control text with the ways of writing hours and minutes that the readers do not
    parse rewritten: '1h30' -> '1:30' (hours and minutes), 'G/90' and 'G90' -> '90' (a game in
    90 minutes). Pure text; `text_minutes` and the TRF reader's class both read it."""
    return _GAME_IN.sub("", _H_MIN.sub(lambda m: f"{m.group(1)}:{m.group(2)}", text))


_INC = re.compile(r"(\d+(?:\.\d+)?)\s*(?:''|\"|s\b|sec\w*|seconds?|secondes?)")
_INC_BARE = re.compile(r"(?:\+|plus)\s*(\d+)\s*(?:per move|from move\s*\d*|/move|s/move|$)")
_MOVES = re.compile(r"(?:\b\d+\s*(?:moves?|mv|coups?)\b|x\s*\d+|\b\d+\s*/(?=\s*\d)|move\s*\d+)")
_NUM = re.compile(r"(\d+(?:\.\d+)?)\s*(h\b|hours?|')?")


def text_minutes(text: str | None) -> float | None:
    """Minutes per player for 60 moves from free text (TRF 122/222), or None if unknown.

    PGN-like values whose numbers exceed 300 are read as seconds (``40/6000+30:900+30``).
    Otherwise numbers are minutes unless marked as seconds (``s``, ``sec``, ``"``);
    ``h:mm`` is hours and minutes; move counts (``40 moves``, ``x40``, ``40/``) are ignored.
    Bases are added (``40/120, 60`` → 180); the largest increment counts 60 times.
    """
    if text is None:
        return None
    t = time_text(text.strip().lower())
    if not t:
        return None
    compact = t.replace(" ", "")
    if re.fullmatch(r"[\d/+:.]+", compact) and (":" not in compact or "/" in compact):
        nums = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", compact)]
        if nums and max(nums) > 300:
            return pgn_minutes(compact)
    t = _HMM.sub(lambda m: str(int(m.group(1)) * 60 + int(m.group(2))), t)
    incs = [float(x) for x in _INC.findall(t)]
    t = _INC.sub(" ", t)
    incs += [float(x) for x in _INC_BARE.findall(t)]
    t = _INC_BARE.sub(" ", t)
    t = _MOVES.sub(" ", t)
    base = 0.0
    found = False
    for num, unit in _NUM.findall(t):
        value = float(num)
        base += value * 60 if unit and unit.startswith("h") else value
        found = True
    if not found:
        return None
    return base + (max(incs) if incs else 0.0)


def classify_minutes(minutes: float | None) -> str | None:
    """Rate class for `minutes` per player over 60 moves (see the module docstring)."""
    if minutes is None or minutes <= 0:
        return None
    if minutes > 1440:
        return "correspondence"
    if minutes >= 60:
        return "standard"
    if minutes > 10:
        return "rapid"
    if minutes > 3:
        return "blitz"
    return "bullet"


def tag_minutes(tc: str | None) -> float | None:
    """Minutes per player for 60 moves from a PGN TimeControl tag: its standard form
    (`pgn_minutes`), else the free text some files write there (pgn-faults 19: the FIDE World
    Cup 2025's "90 minutes for the first 40 moves, followed by 30 minutes ...", `text_minutes`)."""
    minutes = pgn_minutes(tc)
    return minutes if minutes is not None else text_minutes(tc)


@functools.lru_cache(maxsize=4096)
def classify_pgn(tc: str | None) -> str | None:
    """Rate class of a PGN TimeControl value, or None if unknown."""
    return classify_minutes(tag_minutes(tc))


@functools.lru_cache(maxsize=4096)
def classify_text(text: str | None) -> str | None:
    """Rate class of a free-text time control (TRF 122/222), or None if unknown."""
    return classify_minutes(text_minutes(text))
