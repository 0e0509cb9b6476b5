"""The rules and options of a rating run, checked before any engine runs (`elopipe rate --rules`,
``--param KEY=VALUE``, ``--unknown-tc``): a bad one is a usage error (`ParamError`, exit 2) that
names what is accepted, never a value silently taken for another.

Each engine option has one kind: a number within bounds (`NUMERIC`), a boolean (`BOOLEANS`:
true/false, yes/no, 1/0, any case), a choice (`choices`, any case, stored as spelled here), a
date (`DATES`, YYYY-MM-DD), or the Elo K (a number or a K schedule). Rules names are folded
the same way everywhere (`rules_name`: FIDE 'v2024' is 'V2024').
"""

from __future__ import annotations

import datetime as dt
import math
import re

from elopipe.rating import systems
from elopipe.rating.fide import b02
from elopipe.read.control_chars import shown_value
from elopipe.runtime.errors import ElopipeError
from elopipe.runtime.settings import given_or_env


class ParamError(ElopipeError, ValueError):
    """A rules name or an engine option value that is not accepted (a usage error)."""

    exit_code = 2


BOOLEAN_WORDS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
BOOLEANS = frozenset(
    {"v2022_cap_lower", "check_time_minimum", "strict_boundary", "use_file_rating", "fide_priority", "by_event_end"}
)
DATES = frozenset({"rating_from"})

# Numeric engine options: (integers only, lowest, lowest allowed, highest). A value outside
# is refused before any engine runs: a negative K or tau has no meaning, and a huge one
# (k=1e308) overflows the exact Decimal arithmetic of the engines.
NUMERIC: dict[str, tuple[bool, float, bool, float]] = {
    # elo (elopipe.rating.generic.run): K in rating points, ratings in rating points
    "k": (False, 0, False, 1000),
    "default_rating": (False, 0, True, 4000),
    # glicko2 (elopipe.rating.generic.glicko.GlickoParams)
    "initial_rating": (False, 0, True, 4000),
    "initial_rd": (False, 0, False, 1000),
    "rd_max": (False, 0, False, 1000),
    "file_rating_rd": (False, 0, False, 1000),
    "initial_volatility": (False, 0, False, 1),
    "tau": (False, 0, False, 10),
    # ffe (elopipe.rating.ffe.params.FfeRules)
    "compat_limit": (True, 0, True, 4000),
    "threshold": (True, 0, True, 1000),
    "floor": (True, 0, True, 4000),
    "archive_seasons": (True, 0, True, 1000),
}

_RATE_CLASSES = ("standard", "rapid", "blitz")


def unknown_tc_policy(value: str | None = None) -> str:
    """The rate class assumed for an event whose rate of play nothing says (`--unknown-tc`):
    `value`, else ELOPIPE_UNKNOWN_TC (a federation's standing choice, for every rate, run and
    watch), else 'standard'; any case, returned lower case. Raises ParamError for another value.
    The games stay flagged `tc_assumed` and their events are named by `rate` and `run`."""
    return str(parse_param("unknown_tc", given_or_env(value, "ELOPIPE_UNKNOWN_TC", "standard")))


def choices(key: str) -> tuple[str, ...] | None:
    """The values option `key` accepts when it is a choice, else None. Sources: the engines'
    own checks (`generic.run.ELO_PERIODS`, `ffe.params.FfeRules`, `ffe.ages.CATEGORIES` (spec A.5),
    `store_io.NO_MOVES_POLICIES`, `fide.params.RO_FROM_POLICIES`, `periods.SCHEMES`)."""
    if key == "unknown_tc":
        return _RATE_CLASSES
    if key == "rate_class":  # elo, glicko2: 'any' rates every rate of play
        return (*_RATE_CLASSES, "any")
    if key == "z_mode":
        return ("table", "logistic")
    if key == "unrated_opponents":
        return ("ignore", "iterative")
    if key == "period":
        from elopipe.rating.generic.run import ELO_PERIODS

        return ELO_PERIODS
    if key == "no_moves":
        from elopipe.rating.store_io import NO_MOVES_POLICIES

        return NO_MOVES_POLICIES
    if key == "ro_from":
        from elopipe.rating.fide.params import RO_FROM_POLICIES

        return RO_FROM_POLICIES
    if key == "period_scheme":
        from elopipe.rating.periods import SCHEMES

        return tuple(SCHEMES)
    if key == "young_max_category":
        from elopipe.rating.ffe.ages import CATEGORIES

        return tuple(c[1] for c in CATEGORIES[:7]) + tuple(c[0] for c in CATEGORIES[:7])
    return None


def rules_name(system: str, text: str) -> str:
    """The rules name `text` gives for `system` (a scenario 'BASE@NAME': BASE's), folded:
    FIDE systems 'V2017' | 'V2022' | 'V2024' (any case); FFE systems 'table' | 'logistic' (the
    Z mode, spec A.4). Raises ParamError for another name, and for Elo and Glicko-2, which
    have no rules versions. A registered engine's rules are left to it."""
    base = systems.base_of(system).strip().lower()
    if base.startswith("fide"):
        try:
            return b02.version_name(text)
        except ValueError as exc:
            raise ParamError(str(exc)) from None
    if base.startswith("ffe"):
        name = text.strip().lower()
        if name not in ("table", "logistic"):
            raise ParamError(f"{base}: --rules must be table or logistic, not '{text.strip()}'")
        return name
    if base in ("elo", "glicko2"):
        raise ParamError(f"{base}: --rules does not apply (use --param)")
    return text


def parse_param(key: str, text: str) -> object:
    """The value of option `key` written `text` (a --param VALUE), by the option's kind (module
    docstring): bool, int or float, the choice as spelled in `choices`, a date, or text (a K
    schedule, an option of a registered engine). Raises ParamError saying what is accepted."""
    given, text = text, text.strip()  # the refusal shows the value as written (' ' is not '')
    if key in BOOLEANS:
        if text.lower() not in BOOLEAN_WORDS:
            raise ParamError(f"{key} must be true or false (or yes/no, 1/0), not {shown_value(given)}")
        return BOOLEAN_WORDS[text.lower()]
    if key in DATES:
        try:
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):  # fromisoformat also takes 20050101, 2005-W01...
                raise ValueError(text)
            return dt.date.fromisoformat(text)
        except ValueError:
            raise ParamError(f"{key} must be a date YYYY-MM-DD, not {shown_value(given)}") from None
    accepted = choices(key)
    if accepted is not None:
        found = [c for c in accepted if c.lower() == text.lower()]
        if not found:
            raise ParamError(f"{key} must be one of {', '.join(accepted)}, not {shown_value(given)}")
        return found[0]
    return check_param(key, _number(text))


def _number(text: str) -> object:
    """`text` as an int, else a float, else unchanged."""
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def check_param(key: str, value: object) -> object:
    """`value` if it is valid for the numeric option `key` (see `NUMERIC`; a K schedule text is
    checked rule by rule), else ParamError saying what is expected. Other options are returned
    unchanged."""
    if key == "k" and isinstance(value, str):
        from elopipe.rating.generic.elo import KSchedule

        try:
            sched = KSchedule.parse(value)
        except ValueError as exc:
            raise ParamError(f"k must be a number or a K schedule such as '20,games<30:40' ({exc})") from None
        for k in (sched.default, *(k for _, k in sched.by_games), *(k for _, k in sched.by_rating)):
            check_param("k", k)
        return value
    if key not in NUMERIC:
        return value
    integral, low, low_ok, high = NUMERIC[key]
    kind = "an integer" if integral else "a number"
    bounds = f"{'>=' if low_ok else '>'} {low:g} and <= {high:g}"
    if isinstance(value, bool) or not isinstance(value, int | float) or (integral and not isinstance(value, int)):
        raise ParamError(f"{key} must be {kind} {bounds}")
    if not math.isfinite(value) or not (low <= value <= high) or (value == low and not low_ok):
        raise ParamError(f"{key} must be {kind} {bounds}, not {value:g}")
    return value
