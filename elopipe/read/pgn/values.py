"""Tag values as the store keeps them: dates, round and board, ratings and FIDE IDs, each a rule
that returns the value (or None) and whether the raw text was readable. Both paths use them:
the one-by-one reader per game, the column-wise path per distinct value.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any, TypeGuard

from elopipe.read.dates import parse_game_date
from elopipe.read.field_bounds import (
    BOARD_MAX,
    RATING_MAX,
    RATING_MIN,
    ROUND_MAX,
)
from elopipe.read.ids import is_placeholder_id, is_too_long_id

_ROUND = re.compile(r"^\s*(\d+)(?:\s*[.\-/]\s*(\d+))?")


_FIDE_ID = re.compile(r"^\d{1,12}$")


PLACEHOLDERS = frozenset(
    {"", "?", "-", "--", "---", "??", "???", "????", "n/a", "N/A", "NN", "nn", "N.N.", "N.N", "n.n.", "N. N.", "NN."}
)

# the names results exports give the bye's side, lower case: English, German (spielfrei,
# Freilos), French (exempt), Spanish (descansa), Dutch (vrij, pauze), and the words of pairing
# programs; 'Bye (1 pt)', 'BYE 1', '(bye)' by `_BYE_FORM`
BYE_WORDS = frozenset(
    {"bye", "-bye-", "spielfrei", "freilos", "exempt", "descansa", "vrij", "pauze", "not paired", "no opponent",
     "forfeit"}
)  # fmt: skip
# 'Bye', '(bye)', '-bye-', 'Bye (1 pt)', 'BYE 1': the word alone, with a score or a note in
# brackets; never 'Bye, Torbjorn' or 'Byers' (a player of that name)
_BYE_FORM = re.compile(
    r"^[(\-\s]*bye[\s\-)]*(?:\(.*\)|\d+(?:[.,]\d+)?\s*(?:pts?\.?|points?)?)?[\s\-)]*$", re.IGNORECASE
)


def is_bye_name(name: str | None) -> bool:
    """True when a player's name is the bye's side of a results export (`BYE_WORDS`, any case,
    or 'bye' with a score or a note: `_BYE_FORM`), not a person ('Bye, Torbjorn' is one)."""
    if not name:
        return False
    s = name.strip()
    return s.lower() in BYE_WORDS or _BYE_FORM.match(s) is not None


def is_odd_name(name: str) -> bool:
    """A player name that needs a closer look: a placeholder or a bye (stray spaces are checked
    in _odd_players)."""
    return name in PLACEHOLDERS or is_bye_name(name)


def parse_round(label: str) -> tuple[int | None, int | None, str | None]:
    """(round, board, problem) of a Round label; see `GameBuilder._round`."""
    s = label.strip()
    if s in PLACEHOLDERS:
        return None, None, None
    m = _ROUND.match(s)
    if m is None:
        return None, None, f"Round {label!r} is not a round number: round stored as NULL"
    number = int(m.group(1))
    board = int(m.group(2)) if m.group(2) else None
    rnd = number if 1 <= number <= ROUND_MAX else None
    problems = []
    if rnd is None:
        problems.append(f"round outside 1..{ROUND_MAX}")
    if board is not None and not 1 <= board <= BOARD_MAX:
        board = None
        problems.append(f"board outside 1..{BOARD_MAX}")
    if problems:
        return rnd, board, f"Round {label!r}: {' and '.join(problems)}, stored as NULL"
    return rnd, board, None


def clean(v: str | None) -> str | None:
    if v is None:
        return None
    v = v.strip()
    return None if v in PLACEHOLDERS else v


def date_unreadable(v: str | None) -> TypeGuard[str]:
    """A Date value that is neither empty nor a placeholder like '????.??.??' (`_game` reports it
    when it gives no date)."""
    c = clean(v)
    return bool(v) and c is not None and bool(c.strip("?."))


def _date_rule(v: str) -> tuple[dt.date | None, str, bool]:
    """(date, precision, warns) of a Date value as `GameBuilder._date` and `_game` treat it."""
    d, prec, _ = parse_game_date(v.strip()) if v else (None, "none", None)
    return d, prec, d is None and date_unreadable(v)


def _event_date_rule(v: str) -> tuple[dt.date | None, str, bool]:
    """(date, precision, warns) of an EventDate value: only a refused (implausible) date warns;
    an unreadable one is dropped silently, as `_game` does."""
    d, prec, why = parse_game_date(v.strip()) if v else (None, "none", None)
    return d, prec, why is not None


def date_message(tag: str, raw: str, why: str | None) -> tuple[str, str]:
    """(code, message) of a Date/EventDate value that gives no date: refused (`why`, from
    `parse_game_date`) or unreadable."""
    if why is not None:
        return "date_implausible", f"{tag} {raw!r} {why}: date not stored"
    return "date_unparsed", f"{tag} {raw!r} could not be read"


def _round_rule(v: str) -> tuple[int | None, int | None, bool]:
    rnd, board, problem = parse_round(v)
    return rnd, board, problem is not None


def board_rule(v: str) -> tuple[int | None, bool]:
    """(board, warns) of a Board value; a placeholder is no board and no warning."""
    if clean(v) is None:
        return None, False
    s = v.strip()
    ok = s.isascii() and s.isdigit() and 1 <= int(s) <= BOARD_MAX
    return (int(s) if ok else None), not ok


def elo_rule(v: str) -> tuple[int | None, bool]:
    """(rating, warns) of a WhiteElo/BlackElo value: RATING_MIN..RATING_MAX (field_bounds), else
    None, with a warning unless it is a placeholder or 0."""
    s = v.strip()
    val = None
    if s.isdigit() and s.isascii():
        n = int(s)
        val = n if RATING_MIN <= n <= RATING_MAX else None
    return val, val is None and s not in PLACEHOLDERS and s != "0"


def fide_id_rule(v: str) -> tuple[int | None, bool]:
    """(FIDE ID, warns) of a WhiteFideId/BlackFideId value (pgn-faults.md 18, 40): a placeholder
    (`elopipe.read.ids`: blank, `?`, zeros, nines) is no ID; only nines warn, as they look like
    an ID; a number of more than nine digits (`elopipe.read.ids.is_too_long_id`) is no ID and
    warns; anything else that is not digits warns."""
    s = v.strip()
    if is_placeholder_id(s):
        return None, s.startswith("9")
    if is_too_long_id(s):
        return None, True
    if _FIDE_ID.match(s):
        return int(s), False
    return None, s not in PLACEHOLDERS


VALUE_RULES: dict[str, Any] = {
    "date": _date_rule,
    "event_date": _event_date_rule,
    "round": _round_rule,
    "board": board_rule,
    "elo": elo_rule,
    "fide_id": lambda v: (fide_id_rule(v)[1],),
    "clean": lambda v: (clean(v),),
    "eco": lambda v: (None if v in PLACEHOLDERS else v,),
    "odd_name": lambda v: (is_odd_name(v),),
}


class _Memo:
    """A rule with its results kept by value: the column path applies each rule once per distinct
    value of a chunk, and a file's chunks share most of their values (names, dates, ratings)."""

    __slots__ = ("cache", "rule")

    def __init__(self, rule: Callable[[str], Any]) -> None:
        self.rule = rule
        self.cache: dict[str, Any] = {}

    def __call__(self, v: str) -> Any:
        r = self.cache.get(v)
        if r is None:  # a rule returns a tuple, never None
            r = self.cache[v] = self.rule(v)
        return r


def memoized_rules(rules: dict[str, Any]) -> dict[str, Any]:
    """`rules` (`VALUE_RULES`) each applied at most once per value for as long as the result is
    kept (one file's read): the rules are pure functions of the value."""
    return {name: _Memo(rule) for name, rule in rules.items()}
