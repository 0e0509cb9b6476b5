"""The FIDE engine's parameters, inputs and outputs, and the rules version of each event as a
Polars expression (FIDE B.02, the version in force on the event's start date; `elopipe.rating.fide.b02`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import polars as pl

from elopipe.rating import store_io
from elopipe.rating.fide import b02
from elopipe.read.control_chars import shown_value
from elopipe.read.dates import latest_plausible
from elopipe.runtime.errors import ElopipeError
from elopipe.runtime.settings import given_or_env


class RatingFromError(ElopipeError, ValueError):
    """A `rating_from` that is not a date, is after any list, or asks for periods whose rules
    cannot be confirmed (a usage error)."""

    exit_code = 2


SYSTEM_CLASS = {"fide": "standard", "fide-rapid": "rapid", "fide-blitz": "blitz"}


@dataclass(frozen=True)
class FideParams:
    """Options of a FIDE run.

    system: 'fide' | 'fide-rapid' | 'fide-blitz'.  rules: force 'V2017'|'V2022'|'V2024'
    (None = by date).  v2022_cap_lower: V2022 switch for the lower-rated side (see
    `elopipe.rating.fide.b02`).  unknown_tc: rate class assumed when the time control is
    unknown (flagged ``tc_assumed``).  check_time_minimum: drop standard games below the
    version's minimum time for 60 moves (B.02 1.3).  rating_from: events starting before
    this date are not rated (skip reason 'before_rating_from'); the default is
    `b02.rated_from(system)` (1 July 2009; rapid and blitz 1 January 2018): earlier events
    were rated under rules that cannot be
    confirmed (a 350-point rule, quarterly lists: `fide` module docstring), and rating them
    under later rules would publish figures no regulation gives.  A date or 'YYYY-MM-DD'
    text; an earlier one only with a forced `rules` version (a what-if run, ``--rules V2017
    --param rating_from=2005-01-01``).  no_moves: what the games of a results export are
    (`store_io.load_games`).  ro_from: where a player's Ro comes from (`RO_FROM_POLICIES`):
    'list', the rating on the list in force at the event's start as the store knows it (FIDE
    B.02 7.1.3: "the rating list in force at the start of the tournament"), an imported official
    list or the computed one; 'file', for a store that lacks the players' other games: a player
    with a FIDE ID whom no imported official list of that date (the list in force) lists starts
    each event from the rating the organiser's file gives (TRF 001, PGN WhiteElo / BlackElo),
    as Ro and as his opponents' Rc.

    Raises RatingFromError (a ValueError, a usage error) for a rating_from that is not a date, that is
    after any list, or that is earlier than `b02.RATED_FROM` without a forced version (naming the
    period refused); ValueError for a no_moves or ro_from policy that is not one of its choices.
    """

    system: str = "fide"
    rules: str | None = None
    v2022_cap_lower: bool = False
    unknown_tc: str = "standard"
    check_time_minimum: bool = True
    rating_from: dt.date | None = None
    no_moves: str = "played"
    ro_from: str = "list"

    def __post_init__(self) -> None:
        object.__setattr__(self, "no_moves", store_io.check_no_moves(self.no_moves))
        object.__setattr__(self, "ro_from", check_ro_from(self.ro_from))
        earliest = b02.rated_from(self.system)
        if self.rating_from is None:
            object.__setattr__(self, "rating_from", earliest)
        if isinstance(self.rating_from, str):
            try:
                value = dt.date.fromisoformat(self.rating_from)
            except ValueError:
                raise RatingFromError(f"rating_from must be a date YYYY-MM-DD, not {self.rating_from!r}") from None
            object.__setattr__(self, "rating_from", value)
        elif not isinstance(self.rating_from, dt.date):
            raise RatingFromError(f"rating_from must be a date YYYY-MM-DD, not {self.rating_from!r}")
        if self.rating_from > latest_plausible():
            raise RatingFromError(f"rating_from {self.rating_from.isoformat()} is after any list that can be computed")
        if self.rating_from < earliest and self.rules is None:
            why = (
                "quarterly lists, a 350-point rule, K and floor of that era"
                if self.system == "fide"
                else "the rapid and blitz rules before 2018 were not checked"
            )
            raise RatingFromError(
                f"FIDE's rules for {self.system} events starting from {self.rating_from.isoformat()} to "
                f"{(earliest - dt.timedelta(days=1)).isoformat()} cannot be confirmed ({why}): those periods are "
                "not rated; force a rules version (--rules V2017) for a what-if run"
            )

    def as_dict(self) -> dict[str, object]:
        return {
            "system": self.system,
            "rules": self.rules,
            "v2022_cap_lower": self.v2022_cap_lower,
            "unknown_tc": self.unknown_tc,
            "check_time_minimum": self.check_time_minimum,
            "rating_from": self.rating_from,
            "no_moves": self.no_moves,
            "ro_from": self.ro_from,
        }


# Where Ro comes from (`FideParams.ro_from`): the list in force (B.02 7.1.3), or the organiser's file
RO_FROM_POLICIES = ("list", "file")


def ro_from_policy(value: str | None = None) -> str:
    """The Ro policy asked for: `value`, else ELOPIPE_RO_FROM (a federation's standing choice, for
    every rate, run and watch), else 'list'. Raises ValueError for another policy."""
    return check_ro_from(given_or_env(value, "ELOPIPE_RO_FROM", "list"))


def check_ro_from(policy: str) -> str:
    """`policy` in any case, without surrounding blanks, if it is one of `RO_FROM_POLICIES`
    (returned lower case, as `--unknown-tc` reads its value); else ValueError naming them."""
    if (found := policy.strip().lower()) not in RO_FROM_POLICIES:
        raise ValueError(f"ro_from must be list or file, not {shown_value(policy)}")
    return found


@dataclass
class EngineInputs:
    """Frames read from the store (see `elopipe.rating.store_io` for their columns).

    standard_lists: for rapid/blitz only, the FIDE standard ratings (list_date, player_id,
    rating) used to seed unrated rapid/blitz players from March 2024 (R&B 7.2.1).
    """

    games: pl.DataFrame
    tournaments: pl.DataFrame
    tournament_players: pl.DataFrame
    players: pl.DataFrame
    official: pl.DataFrame
    standard_lists: pl.DataFrame | None = None


@dataclass
class Prepared:
    """Player-sides with their period, ready for the period loop.

    sides: one row per game and player side (see `prepare`); tournaments: tournament_id,
    eff_start, eff_end, list_date, in_force, version; skips: tournament_id, reason, n_games;
    file_ratings: tournament_id, player_id, file_rating, file_id; list_dates: every list
    from the first period with games to the last; fide_ids: the player_id of the players with a
    FIDE ID (Int64), read by the 'file' Ro policy only (`elopipe.rating.fide.ro`), else None;
    rate_of_play: per event, its rate of play and where it came from (`prepare._rate_of_play`).
    """

    sides: pl.DataFrame
    tournaments: pl.DataFrame
    skips: pl.DataFrame
    file_ratings: pl.DataFrame
    birth_years: pl.DataFrame
    list_dates: list[dt.date]
    official: pl.DataFrame
    standard_lists: pl.DataFrame | None
    birth_dates: pl.DataFrame | None = None
    fide_ids: pl.Series | None = None
    rate_of_play: pl.DataFrame | None = None


@dataclass
class EngineResult:
    """Frames for all computed lists (``system`` column not included).

    As returned by `run_periods`, exact values are integer hundredths (``pd_x100``,
    ``score_x100``, ``wpd_x100``, ``we_x100``, ``wwe_x100``); `to_contract` turns them into
    the store's DECIMAL columns.
    """

    rating_lists: pl.DataFrame
    rating_changes: pl.DataFrame
    tournament_ratings: pl.DataFrame
    rating_discrepancies: pl.DataFrame
    skips: pl.DataFrame
    list_dates: list[dt.date] = field(default_factory=list)


def pair_key(tournament: str, player: str) -> pl.Expr:
    """One Int64 key for (tournament, player): joins on it are several times faster than on
    the two columns (ids are below 2**31)."""
    return pl.col(tournament).cast(pl.Int64) * (1 << 32) + pl.col(player).cast(pl.Int64)


# a date on which each version is in force
_VERSION_PROBE = {name: start for start, name in b02.ERAS}


def rules_by_version(params: FideParams) -> dict[str, b02.RuleSet]:
    """The rule set of each version name (the ``version`` column of the sides)."""
    return {
        name: b02.rules_for_system(params.system, probe, None, params.v2022_cap_lower)
        for name, probe in _VERSION_PROBE.items()
    }


def rules_frame(params: FideParams) -> pl.DataFrame:
    rows = []
    for name, rs in rules_by_version(params).items():
        rows.append(
            {
                "version": name,
                "cap_mode": rs.cap_mode,
                "cap_lower": rs.v2022_cap_lower,
                "floor": rs.floor,
                "initial_rule": rs.initial_rule,
                "ru_max": rs.ru_max,
                "t120": rs.time_thresholds[0],
                "t90": rs.time_thresholds[1],
                "first_min": rs.first_event_min_x100,
            }
        )
    return pl.DataFrame(rows)


def version_expr(col: str, forced: str | None) -> pl.Expr:
    """Version name (Utf8) in force on the Date column `col`, or the forced one."""
    d = pl.col(col)
    if forced in ("V2017", "V2022"):
        return pl.lit(forced)
    if forced == "V2024":
        return pl.when(d >= b02.V2024A_FROM).then(pl.lit("V2024A")).otherwise(pl.lit("V2024"))
    if forced is not None:
        raise ValueError(f"unknown FIDE rules version {forced!r}")
    # `b02.version_for_date` over a column: the last era begun on the date
    expr = pl.lit(b02.ERAS[0][1])
    for start, version in b02.ERAS[1:]:
        expr = pl.when(d >= start).then(pl.lit(version)).otherwise(expr)
    return expr


def version_of(d: dt.date, params: FideParams) -> b02.RuleSet:
    return b02.rules_for_system(params.system, d, params.rules, params.v2022_cap_lower)
