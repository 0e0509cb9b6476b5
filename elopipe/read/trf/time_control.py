"""Rate class (standard / rapid / blitz) of a tournament from its time-control text.

FIDE Handbook: Rating Regulations B.02 (2024) 1.1 (standard: at least 60 minutes per player
for 60 moves), FIDE Laws of Chess Appendix A.1 (rapid: more than 10 and less than 60
minutes for 60 moves) and B.1 (blitz: 10 minutes or less). "Minutes for 60 moves" =
base time + 60 x increment. Used for TRF 122/222 text; PGN TimeControl ('5400+30') works too.
"""

from __future__ import annotations

import re

from elopipe.read.rate_evidence import FAST, name_words
from elopipe.read.rate_of_play import classify_minutes, text_minutes, time_text

_STANDARD_WORDS = re.compile(r"(?<![^\W_])(?:standard|classical|classic)(?![^\W_])")
_ENCODED = re.compile(r"^(?:(\d+)/)?(\d+)(?:\+(\d+))?(?::.*)?$")  # TRF26 222 / PGN: seconds


def rate_class_for_minutes(minutes_for_60_moves: float) -> str:
    """'standard' (>= 60), 'rapid' (> 10 and < 60) or 'blitz' (<= 10): the thresholds of
    `elopipe.read.rate_of_play.classify_minutes`, with bullet counted as blitz and
    correspondence as standard (a TRF tournament is rated in one of FIDE's three lists)."""
    c = classify_minutes(minutes_for_60_moves)
    if c is None:  # no time at all (0 minutes or less)
        return "blitz"
    return {"bullet": "blitz", "correspondence": "standard"}.get(c, c)


def rate_class_from_encoded(text: str | None) -> str | None:
    """From an encoded time control in seconds: '5400+30', '40/6000+30:900+30', '300'."""
    if not text:
        return None
    m = _ENCODED.match(text.strip())
    if not m:
        return None
    base_s = int(m.group(2))
    inc_s = int(m.group(3) or 0)
    return rate_class_for_minutes((base_s + 60 * inc_s) / 60)


def rate_class_from_keywords(text: str | None) -> str | None:
    """'blitz' / 'rapid' / 'standard' when a time-control text names one in words ('Bullet',
    'Blitzschach', 'Rapid', 'Standard: 90 minutes'), else None.  The words are those of
    `elopipe.read.rate_evidence.name_words`, whole words only ('Blitzstein' says nothing);
    bullet is read as blitz and 'fast' (rapid or blitz) as nothing (a TRF is rated on one of
    FIDE's three lists)."""
    said = name_words(text)
    if said is not None:
        return {"bullet": "blitz", "correspondence": "standard", FAST: None}.get(said[0], said[0])
    return "standard" if _STANDARD_WORDS.search((text or "").lower()) else None


def rate_class_from_text(text: str | None) -> str | None:
    """Best guess from free text ('90 minutes + 30 seconds per move', '1:30 + 10', '40/120, 60').

    Keywords ('blitz', 'rapid', 'standard', ...) win; a value written as TRF26 222 writes it
    ('5400+30', '180+2': a base of 180 or more is seconds) is read as seconds; otherwise the
    minutes for 60 moves of `elopipe.read.rate_of_play.text_minutes` (minutes, '1:30' and '1h30'
    hours and minutes, a number marked 'sec' or after '+' seconds, move counts left out: one
    reading of the text for the TRF's class and the rate of play; '40/120+30' was rapid here and
    150 minutes there). Returns None when no number can be read.
    """
    if not text or not text.strip():
        return None
    by_word = rate_class_from_keywords(text)
    if by_word:
        return by_word
    compact = time_text(text).strip()
    enc = re.fullmatch(r"(?:\d+/)?(\d+)\+\d+(?::\S*)?", compact)
    # '5400+30', '180+2': seconds, as TRF26 222 writes it; a smaller base ('90+30', '15+10') is
    # minutes plus seconds, as arbiters write line 122 by hand
    if enc and int(enc.group(1)) >= 180:
        return rate_class_from_encoded(compact)
    minutes = text_minutes(text)
    return None if minutes is None else rate_class_for_minutes(minutes)
