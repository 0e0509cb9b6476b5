"""The FIDE rating engine in Polars: every monthly list from the games in the store.

Rules: `elopipe.rating.fide` (FIDE B.02, V2017/V2022/V2024/V2024A, and the rapid/blitz
chapter).  Periods: `elopipe.rating.periods` (FIDE lists on the 1st of the month; an event
is rated on the first list whose closing date, list date − 3 days, is on or after its end
date; it uses the list in force on its start date, B.02 7.1.3 and spec §3.1).

How one period (list t) is computed, with no per-game Python loop:

1. The player-sides of the period's games (two rows per game) are joined to the list in
   force at each tournament's start (the latest computed or imported list dated on or
   before the start; every computed list holds every rated player).  A player with no
   rating in the store before a tournament takes the rating written in the file (TRF
   rating column, PGN WhiteElo/BlackElo) as their rating on that list ("bootstrap"); a
   player whose history is unknown counts as having ≥ 30 games.
   Disagreements between a file's rating and the store's list are recorded.
   Per-player values reach the sides by gathers through a dense player-id array
   (`elopipe.rating.lookup.IdLookup`) rather than hash joins; only the (event, player)
   pairs whose list in force is not the latest one, or who are unrated, are looked up in
   the older lists and the files (the others are rated on the current list).
2. D = Ro − Rc, the version's 400-point rule (8.3.1), PD by a gather into table 8.1.2,
   W − PD in hundredths.
3. K from the state at the start of the period (list t − 1): ever ≥ 2400 → 10; junior and
   never ≥ 2300 → 40; < 30 games → 40; else 20 (8.3.3, order of spec §4.2); then
   K = floor(700/n) when K × n > 700.
4. Change = K × Σ(W − PD), rounded once per period, halves away from zero (8.3.4).
   The per-tournament unrounded K × (W − We) is kept (``tournament_ratings.change_x100``).
5. Unrated players pool their games against rated opponents over ≤ 26 months (7.1.4);
   a zero first event is disregarded (8.2.1); Ru is published at ≥ 5 games and ≥ the floor.
6. A rating below the floor makes the player unrated (7.2.1); the 1 Mar 2024 list applies
   the one-off adjustment R + 0.4 × (2000 − R) to every rating below 2000 after the
   period's change (FIDE B.02 (2024), transitional rule of 1 March 2024); inactive = no
   rated game in the last 12 months (7.2.2, flag 'i').

List flags (``rating_lists.flags``, comma-separated): 'i' inactive; 'new' first rating
published; 'pool' unrated with pooled games; 'delisted' fell below the floor;
'adj2024:+N' the 1 March 2024 adjustment added N rating points.  ``change`` is always the
K-based change of the period, so rating = previous rating + change (+ N on 1 March 2024,
or Ru for 'new').
7. An imported official list for t (``official_lists``) overrides the computed ratings of
   the players it lists (it is what FIDE published).

Output frames (`EngineResult`) follow the store contract of `elopipe.store.schema`:
``rating_lists``, ``rating_changes``, ``tournament_ratings``, ``rating_discrepancies``.
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from elopipe.rating import fide, store_io
from elopipe.rating.lookup import IdLookup
from elopipe.rating.periods import PeriodScheme, add_months, get_scheme
from elopipe.rating.rounding import div_round_expr, round_x100_expr
from elopipe.rating.tables import dp_expr, pd_x100_expr
from elopipe.read.dates import latest_plausible
from elopipe.read.rate_of_play import classify_games

SYSTEM_CLASS = {"fide": "standard", "fide-rapid": "rapid", "fide-blitz": "blitz"}


@dataclass(frozen=True)
class FideParams:
    """Options of a FIDE run.

    system: 'fide' | 'fide-rapid' | 'fide-blitz'.  rules: force 'V2017'|'V2022'|'V2024'
    (None = by date).  v2022_cap_lower: V2022 switch for the lower-rated side (see
    `elopipe.rating.fide`).  unknown_tc: rate class assumed when the time control is
    unknown (flagged ``tc_assumed``).  check_time_minimum: drop standard games below the
    version's minimum time for 60 moves (B.02 1.3).  rating_from: events starting before
    this date are not rated (skip reason 'before_rating_from'); the default is
    `fide.rated_from(system)` (1 July 2009; rapid and blitz 1 January 2018): earlier events
    were rated under rules that cannot be
    confirmed (a 350-point rule, quarterly lists: `fide` module docstring), and rating them
    under later rules would publish figures no regulation gives.  A date or 'YYYY-MM-DD'
    text; an earlier one only with a forced `rules` version (a what-if run, ``--rules V2017
    --param rating_from=2005-01-01``).

    Raises ValueError for a rating_from that is not a date, or that is earlier than
    `fide.RATED_FROM` without a forced version (naming the period refused).
    """

    system: str = "fide"
    rules: str | None = None
    v2022_cap_lower: bool = False
    unknown_tc: str = "standard"
    check_time_minimum: bool = True
    rating_from: dt.date | None = None
    no_moves: str = "played"

    def __post_init__(self) -> None:
        store_io.check_no_moves(self.no_moves)
        earliest = fide.rated_from(self.system)
        if self.rating_from is None:
            object.__setattr__(self, "rating_from", earliest)
        if isinstance(self.rating_from, str):
            try:
                value = dt.date.fromisoformat(self.rating_from)
            except ValueError:
                raise ValueError(f"rating_from must be a date YYYY-MM-DD, not {self.rating_from!r}") from None
            object.__setattr__(self, "rating_from", value)
        elif not isinstance(self.rating_from, dt.date):
            raise ValueError(f"rating_from must be a date YYYY-MM-DD, not {self.rating_from!r}")
        if self.rating_from > latest_plausible():
            raise ValueError(f"rating_from {self.rating_from.isoformat()} is after any list that can be computed")
        if self.rating_from < earliest and self.rules is None:
            why = (
                "quarterly lists, a 350-point rule, K and floor of that era"
                if self.system == "fide"
                else "the rapid and blitz rules before 2018 were not checked"
            )
            raise ValueError(
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
        }


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
    from the first period with games to the last.
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


# ---- versions as expressions ------------------------------------------------------


def _pair_key(tournament: str, player: str) -> pl.Expr:
    """One Int64 key for (tournament, player): joins on it are several times faster than on
    the two columns (ids are below 2**31)."""
    return pl.col(tournament).cast(pl.Int64) * (1 << 32) + pl.col(player).cast(pl.Int64)


# a date on which each version is in force
_VERSION_PROBE = {name: start for start, name in fide.ERAS}


def _rules_by_version(params: FideParams) -> dict[str, fide.RuleSet]:
    """The rule set of each version name (the ``version`` column of the sides)."""
    return {
        name: fide.rules_for_system(params.system, probe, None, params.v2022_cap_lower)
        for name, probe in _VERSION_PROBE.items()
    }


def _rules_frame(params: FideParams) -> pl.DataFrame:
    rows = []
    for name, rs in _rules_by_version(params).items():
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
        return pl.when(d >= fide.V2024A_FROM).then(pl.lit("V2024A")).otherwise(pl.lit("V2024"))
    if forced is not None:
        raise ValueError(f"unknown FIDE rules version {forced!r}")
    # `fide.version_for_date` over a column: the last era begun on the date
    expr = pl.lit(fide.ERAS[0][1])
    for start, version in fide.ERAS[1:]:
        expr = pl.when(d >= start).then(pl.lit(version)).otherwise(expr)
    return expr


def _version_of(d: dt.date, params: FideParams) -> fide.RuleSet:
    return fide.rules_for_system(params.system, d, params.rules, params.v2022_cap_lower)


# ---- preparation ---------------------------------------------------------------------


def prepare(inputs: EngineInputs, params: FideParams, scheme: PeriodScheme | None = None) -> Prepared:
    """Turn the store's frames into player-sides assigned to periods.

    Online events (`fide.online_platform_expr` on the tournaments' ``site``/``platform``:
    a lichess TRF export, a PGN Site naming lichess.org, chess.com, chess24, ICC, a URL or
    ending in 'INT') are not rated: their games go to `skips` with reason
    'online:<platform>' (FIDE rates over-the-board play only).

    sides columns: game_id, tournament_id, player_id, opponent_id, score_x100 Int64,
    list_date, in_force, eff_start Date, version Utf8, reason Utf8 (null = can be rated;
    else 'forfeit', 'not_rated_code', 'no_result', 'no_moves', 'variant', 'no_player'),
    tc_minutes Float64, tc_assumed Boolean.  Games of another rate class and events with
    no date at all are left out and counted in `skips`.
    """
    scheme = scheme or get_scheme("fide")
    games = inputs.games
    tours = inputs.tournaments
    rate_class = SYSTEM_CLASS[params.system]
    # (event, player) pairs are one Int64 key (`_pair_key`): ids come from the store's
    # sequences, so never negative; a hand-edited store must not be rated wrongly in silence
    for col in ("tournament_id", "white_id", "black_id"):
        low = games.get_column(col).min()
        if low is not None and low < 0:  # type: ignore[operator]
            raise ValueError(f"games.{col} holds negative ids ({low}); the store's ids are never negative")

    # online play is never rated (`fide.online_platform_expr`); frames built without the
    # site/platform columns (older callers) have none
    online_cols = [pl.col(c) if c in tours.columns else pl.lit(None, pl.Utf8).alias(c) for c in ("site", "platform")]
    online = (
        tours.select("tournament_id", *online_cols)
        .with_columns(fide.online_platform_expr().alias("online"))
        .filter(pl.col("online").is_not_null())
        .select("tournament_id", "online")
    )
    tours = scheme.assign(
        tours.select("tournament_id", "eff_start", "eff_end", "date_source", "n_games"),
        end_col="eff_end",
        start_col="eff_start",
    ).with_columns(version_expr("eff_start", params.rules).alias("version"))

    games = classify_games(games, inputs.tournaments, default=params.unknown_tc)
    games = games.join(
        tours.select("tournament_id", "list_date", "in_force", "eff_start", "version"),
        on="tournament_id",
        how="left",
    )

    if online.height:
        games = games.join(online, on="tournament_id", how="left")
        on_line = games.filter(pl.col("online").is_not_null())
        games = games.filter(pl.col("online").is_null()).drop("online")
    else:
        on_line = games.clear().with_columns(pl.lit(None, pl.Utf8).alias("online"))
    too_old = games.filter(pl.col("eff_start") < params.rating_from)
    games = games.filter(pl.col("eff_start").is_null() | (pl.col("eff_start") >= params.rating_from))
    no_dates = games.filter(pl.col("list_date").is_null())
    other = games.filter(pl.col("list_date").is_not_null() & (pl.col("rate_class") != rate_class))
    skips = _skips(on_line, too_old, no_dates, other, tours)

    g = games.filter(pl.col("list_date").is_not_null() & (pl.col("rate_class") == rate_class))
    g = g.with_columns(_unrated_reason().alias("reason"))
    sides = _sides(g)

    file_ratings = _file_ratings(sides, inputs)
    sides = sides.drop("game_file_rating")

    # birth years as the store believes them (`store_io.load_players`: from the files, order-free)
    birth_years = inputs.players.select("player_id", "birth_year").filter(pl.col("birth_year").is_not_null())
    # full birth dates (players.birth_date) for the V2017 junior wording, "until the 18th birthday"
    birth_dates = None
    if "birth_date" in inputs.players.columns:
        birth_dates = inputs.players.select("player_id", "birth_date").filter(pl.col("birth_date").is_not_null())

    periods = sides.get_column("list_date").unique().sort().to_list()
    list_dates: list[dt.date] = []
    if periods:
        list_dates = scheme.lists_between(periods[0], periods[-1])
    return Prepared(
        sides=sides,
        tournaments=tours,
        skips=skips,
        file_ratings=file_ratings,
        birth_years=birth_years,
        birth_dates=birth_dates,
        list_dates=list_dates,
        official=inputs.official,
        standard_lists=inputs.standard_lists,
    )


def _skips(
    on_line: pl.DataFrame, too_old: pl.DataFrame, no_dates: pl.DataFrame, other: pl.DataFrame, tours: pl.DataFrame
) -> pl.DataFrame:
    """The events left out and why (`rating_skips`: tournament_id, reason, n_games): online
    play, before `rating_from`, no dates, another rate class; events with neither games nor
    dates too."""
    skips = pl.concat(
        [
            on_line.group_by("tournament_id").agg(
                (pl.lit("online:") + pl.col("online").first()).alias("reason"),
                pl.len().cast(pl.Int64).alias("n_games"),
            ),
            too_old.group_by("tournament_id").agg(
                pl.lit("before_rating_from").alias("reason"),
                pl.len().cast(pl.Int64).alias("n_games"),
            ),
            no_dates.group_by("tournament_id").agg(
                pl.lit("no_dates").alias("reason"), pl.len().cast(pl.Int64).alias("n_games")
            ),
            other.group_by("tournament_id", "rate_class")
            .agg(pl.len().cast(pl.Int64).alias("n_games"))
            .select(
                "tournament_id",
                (pl.lit("rate_class:") + pl.col("rate_class")).alias("reason"),
                "n_games",
            ),
        ]
    )
    # events without any game and without dates are also recorded
    empty_nodate = tours.filter(pl.col("list_date").is_null() & (pl.col("n_games") == 0)).select(
        "tournament_id", pl.lit("no_dates").alias("reason"), pl.lit(0, pl.Int64).alias("n_games")
    )
    skips = pl.concat([skips, empty_nodate]).sort("tournament_id", "reason")

    return skips


def _unrated_reason() -> pl.Expr:
    """Why a game of the rate class is not rated (null: it can be): 'no_player' (a bye or the
    same player twice), 'not_rated_code' (TRF W/D/L), 'forfeit' (B.02 5.x: unplayed games are
    not rated), 'no_result', 'no_moves' (fewer than two plies or a moveless game rated as
    unplayed), 'variant'."""
    code = pl.col("unplayed_code").fill_null("").str.to_uppercase()
    variant = pl.col("variant").fill_null("").str.to_lowercase()
    reason = (
        pl.when(pl.col("white_id").is_null() | pl.col("black_id").is_null())
        .then(pl.lit("no_player"))
        .when(pl.col("white_id") == pl.col("black_id"))
        .then(pl.lit("no_player"))
        .when(code.is_in(["W", "D", "L"]))
        .then(pl.lit("not_rated_code"))
        .when(~pl.col("played").fill_null(False))
        .then(pl.lit("forfeit"))
        .when(pl.col("white_score").is_null() | pl.col("black_score").is_null())
        .then(pl.lit("no_result"))
        .when(pl.col("has_moves").fill_null(True).not_() | (pl.col("ply_count").fill_null(2) < 2))
        .then(pl.lit("no_moves"))
        .when(~variant.is_in(["", "standard", "chess"]))
        .then(pl.lit("variant"))
        .otherwise(None)
    )
    return reason


def _sides(g: pl.DataFrame) -> pl.DataFrame:
    """Two rows per game, one per player-side: the side's player and opponent, score in
    hundredths, the rating the game's tags give, and the (event, player) and (event,
    opponent) keys."""
    common = [
        "game_id",
        "round",
        "tournament_id",
        "list_date",
        "in_force",
        "eff_start",
        "version",
        "reason",
        "tc_minutes",
        "tc_assumed",
    ]
    white = g.select(
        *common,
        pl.col("white_id").alias("player_id"),
        pl.col("black_id").alias("opponent_id"),
        (pl.col("white_score") * 100).round(0).cast(pl.Int64).alias("score_x100"),
        pl.col("white_rating_in_file").alias("game_file_rating"),
    )
    black = g.select(
        *common,
        pl.col("black_id").alias("player_id"),
        pl.col("white_id").alias("opponent_id"),
        (pl.col("black_score") * 100).round(0).cast(pl.Int64).alias("score_x100"),
        pl.col("black_rating_in_file").alias("game_file_rating"),
    )
    sides = (
        pl.concat([white, black])
        .filter(pl.col("player_id").is_not_null())
        .with_columns(
            _pair_key("tournament_id", "player_id").alias("tp_key"),
            _pair_key("tournament_id", "opponent_id").alias("to_key"),
        )
    )

    return sides


def _file_ratings(sides: pl.DataFrame, inputs: EngineInputs) -> pl.DataFrame:
    """The rating written in the files per (event, player): tournament_id, player_id, tp_key,
    file_rating, file_id."""
    # the rating written in the file for (event, player): the event's player row, else the
    # lowest per-game value (deterministic whatever the order of the games)
    tp = inputs.tournament_players
    from_games = (
        sides.filter(pl.col("game_file_rating").fill_null(0) > 0)
        .group_by("tournament_id", "player_id")
        .agg(pl.col("game_file_rating").min().alias("g_rating"))
    )
    file_ratings = (
        tp.select("tournament_id", "player_id", "rating_in_file", "file_id")
        .join(from_games, on=["tournament_id", "player_id"], how="full", coalesce=True)
        .select(
            "tournament_id",
            "player_id",
            pl.coalesce(
                pl.when(pl.col("rating_in_file") > 0).then(pl.col("rating_in_file")),
                pl.col("g_rating"),
            ).alias("file_rating"),
            "file_id",
        )
    )
    file_ratings = file_ratings.join(
        inputs.tournaments.select("tournament_id", pl.col("file_id").alias("t_file")),
        on="tournament_id",
        how="left",
    ).select(
        "tournament_id",
        "player_id",
        _pair_key("tournament_id", "player_id").alias("tp_key"),
        "file_rating",
        pl.coalesce("file_id", "t_file").alias("file_id"),
    )
    return file_ratings


# ---- the period loop ------------------------------------------------------------------

_STATE_SCHEMA = {
    "player_id": pl.Int64,
    "rating": pl.Int64,
    "total_games": pl.Int64,
    "ever_2400": pl.Boolean,
    "ever_2300": pl.Boolean,
    "birth_year": pl.Int64,
    "last_active": pl.Date,
    "pool_from": pl.Date,
    "k_official": pl.Int64,
    "first_rated": pl.Date,
}
_RATING_SCHEMA = {"player_id": pl.Int64, "rating": pl.Int64}
_POOL_SCHEMA = {
    "player_id": pl.Int64,
    "list_date": pl.Date,
    "tournament_id": pl.Int64,
    "eff_start": pl.Date,
    "rc": pl.Int64,
    "score_x100": pl.Int64,
}


def _by_player(df: pl.DataFrame) -> pl.DataFrame:
    """`df` ordered by player_id, with Polars' sorted flag set.

    Joins on player_id between frames both flagged sorted use a merge join, several times
    faster than hashing the 500k-row state of a full base list.
    """
    key = df.get_column("player_id")
    if key.flags["SORTED_ASC"]:
        return df
    if key.null_count() == 0 and key.is_sorted():
        return df.with_columns(key.set_sorted())
    return df.sort("player_id")


def _empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)


def _asof_rating(keys: pl.DataFrame, hist: pl.DataFrame, date_col: str, out: str) -> pl.DataFrame:
    """keys(player_id, `date_col`) + `out` = rating on the latest `hist` list ≤ date."""
    if hist.height == 0:
        return keys.with_columns(pl.lit(None, pl.Int64).alias(out))
    # only the players asked for: the history can hold a whole base list
    h = (
        hist.join(keys.select("player_id").unique(), on="player_id", how="semi")
        .select("player_id", pl.col("list_date").alias(date_col), pl.col("rating").alias(out))
        .sort("player_id", date_col)
    )
    return keys.sort("player_id", date_col).join_asof(
        h, on=date_col, by="player_id", strategy="backward", check_sortedness=False
    )


class _Lists:
    """Every list known so far (imported or computed), by date: player_id → rating.

    A computed list holds every rated player known when it was computed, so the list in
    force on a date is the latest list dated on or before it (FIDE B.02 7.1: the list in
    force at the start) — except for players bootstrapped later: a player first seen in
    period t with a file rating for the list b in force at an event's start (b < t) is
    rated b, and on every list dated in [b, t) that was computed before they were known
    (or that was never computed: no games before).  Those ratings live in `boots`
    (player_id, boot_date = b, boot_rating, boot_period = t) and fill the gaps of older
    lists (`_ratings_in_force`).
    """

    def __init__(self) -> None:
        self.by_date: dict[dt.date, pl.DataFrame] = {}
        self.dates: list[dt.date] = []
        self.boots: pl.DataFrame = _empty(_BOOT_SCHEMA)

    def put(self, d: dt.date, ratings: pl.DataFrame) -> None:
        if d not in self.by_date:
            bisect.insort(self.dates, d)
        self.by_date[d] = ratings.select(list(_RATING_SCHEMA)).cast(_RATING_SCHEMA)

    def in_force(self, d: dt.date) -> pl.DataFrame | None:
        i = bisect.bisect_right(self.dates, d) - 1
        return self.by_date[self.dates[i]] if i >= 0 else None

    def in_force_date(self, d: dt.date) -> dt.date | None:
        i = bisect.bisect_right(self.dates, d) - 1
        return self.dates[i] if i >= 0 else None

    def add_boots(self, t: dt.date, rows: pl.DataFrame) -> None:
        """Record the players bootstrapped in period `t` (player_id, boot_rating, boot_date)."""
        if rows.height:
            new = rows.select("player_id", "boot_date", "boot_rating", pl.lit(t).alias("boot_period"))
            self.boots = pl.concat([self.boots, new.cast(_BOOT_SCHEMA)])


# A month is a few hundred thousand rows held in memory: Polars' in-memory engine runs
# these plans faster than the streaming engine (the default since Polars 2.0)
_ENGINE = "in-memory"

_BOOT_SCHEMA = {"player_id": pl.Int64, "boot_date": pl.Date, "boot_rating": pl.Int64, "boot_period": pl.Date}


def run_periods(
    prep: Prepared,
    params: FideParams,
    through: dt.date | None = None,
) -> EngineResult:
    """Compute every list of `prep.list_dates` (up to `through`) in order.

    Python iterates over periods only; each period is a handful of Polars joins and
    group-bys over its player-sides, and one join into the full list of players.
    """
    list_dates = [d for d in prep.list_dates if through is None or d <= through]
    sides_all = prep.sides
    official = prep.official
    state = _empty(_STATE_SCHEMA)
    lists = _Lists()
    if list_dates and official.height:
        first = list_dates[0]
        all_dates = official.get_column("list_date").unique().to_list()
        dates = sorted(d for d in all_dates if d < first)

        def on(d: dt.date) -> pl.DataFrame:
            # a single imported list (the usual base) is used as it is, without a copy
            return official if len(all_dates) == 1 else official.filter(pl.col("list_date") == d)

        for d in dates:
            lists.put(d, on(d))
        if dates:
            state = _by_player(_state_from_official(state, on(dates[-1])))
    std_hist = None
    if prep.standard_lists is not None and prep.standard_lists.height:
        std_hist = prep.standard_lists.select("player_id", "list_date", "rating")

    out_lists, out_changes, out_tr, out_disc = [], [], [], []
    pool = _empty(_POOL_SCHEMA)
    periods = sides_all.get_column("list_date").unique().to_list()
    if len(periods) == 1:
        # one period (a month rated on its own): the frame itself, without a copy
        sides_by_period = {periods[0]: sides_all}
    else:
        sides_by_period = {k[0]: v for k, v in sides_all.partition_by("list_date", as_dict=True).items()}
    off_dates = set(official.get_column("list_date").unique().to_list()) if official.height else set()
    off_by_date = {
        d: official if len(off_dates) == 1 else official.filter(pl.col("list_date") == d)
        for d in list_dates
        if d in off_dates
    }
    prev_list: dt.date | None = None
    for t in list_dates:
        state, pool, frames = _one_period(
            t,
            prev_list,
            sides_by_period.get(t),
            state,
            lists,
            pool,
            prep,
            params,
            off_by_date.get(t),
            std_hist,
        )
        lists_t, changes_t, tr_t, disc_t = frames
        out_lists.append(lists_t)
        for out, f in ((out_changes, changes_t), (out_tr, tr_t), (out_disc, disc_t)):
            if f is not None:
                out.append(f)
        prev_list = t

    return EngineResult(
        rating_lists=_concat(out_lists, LIST_SCHEMA),
        rating_changes=_concat(out_changes, CHANGE_SCHEMA),
        tournament_ratings=_concat(out_tr, TR_SCHEMA),
        rating_discrepancies=_concat(out_disc, DISC_SCHEMA),
        skips=prep.skips,
        list_dates=list_dates,
    )


LIST_SCHEMA = {
    "list_date": pl.Date,
    "player_id": pl.Int64,
    "rating": pl.Int64,
    "games": pl.Int64,
    "total_games": pl.Int64,
    "k": pl.Int64,
    "change": pl.Int64,
    "flags": pl.Utf8,
    "ever_2400": pl.Boolean,
    "birth_year": pl.Int64,
    "source": pl.Utf8,
}
CHANGE_SCHEMA = {
    "list_date": pl.Date,
    "tournament_id": pl.Int64,
    "game_id": pl.Int64,
    "player_id": pl.Int64,
    "opponent_id": pl.Int64,
    "ro": pl.Int64,
    "rc": pl.Int64,
    "d_raw": pl.Int64,
    "d_used": pl.Int64,
    "pd_x100": pl.Int64,
    "score_x100": pl.Int64,
    "wpd_x100": pl.Int64,
    "k": pl.Int64,
    "counted": pl.Boolean,
    "reason": pl.Utf8,
    "tc_assumed": pl.Boolean,
}
TR_SCHEMA = {
    "list_date": pl.Date,
    "tournament_id": pl.Int64,
    "player_id": pl.Int64,
    "rules_version": pl.Utf8,
    "ro": pl.Int64,
    "n": pl.Int64,
    "score_x100": pl.Int64,
    "ra": pl.Int64,
    "we_x100": pl.Int64,
    "wwe_x100": pl.Int64,
    "k": pl.Int64,
    "change_x100": pl.Int64,
    "rp": pl.Int64,
    "unrated": pl.Boolean,
    "ru_provisional": pl.Int64,
}
DISC_SCHEMA = {
    "list_date": pl.Date,
    "tournament_id": pl.Int64,
    "player_id": pl.Int64,
    "file_rating": pl.Int64,
    "list_rating": pl.Int64,
    "file_id": pl.Int64,
}


def _concat(frames: list[pl.DataFrame], schema: dict[str, pl.DataType]) -> pl.DataFrame:
    frames = [f for f in frames if f.height]
    if not frames:
        return pl.DataFrame(schema=schema)
    return pl.concat([f.select(list(schema)).cast(schema) for f in frames])


def _x100_to_decimal(expr: pl.Expr, precision: int, scale: int) -> pl.Expr:
    """Integer hundredths → Decimal(precision, scale), exactly (decimal × 0.01, no float)."""
    cent = pl.lit("0.01").cast(pl.Decimal(4, 2))
    return (expr.cast(pl.Decimal(18, 2)) * cent).cast(pl.Decimal(precision, scale))


def to_contract(result: EngineResult) -> EngineResult:
    """The engine's frames with the store's decimal columns.

    The engine keeps PD, W − PD, scores and sums in integer hundredths (``*_x100``); the
    store contract has ``pd``, ``score``, ``w_minus_pd`` (rating_changes) and ``score``,
    ``we``, ``w_we`` (tournament_ratings) as DECIMAL.  Converted exactly (no float).
    A game's values fit 4 digits; the per-tournament sums take 18 (`elopipe.store.schema`: a
    file's longest event has millions of rounds, 1,001 already overflow 5 digits).
    """
    ch = result.rating_changes
    ch = ch.with_columns(
        _x100_to_decimal(pl.col("pd_x100"), 4, 2).alias("pd"),
        _x100_to_decimal(pl.col("score_x100"), 4, 2).cast(pl.Decimal(2, 1)).alias("score"),
        _x100_to_decimal(pl.col("wpd_x100"), 4, 2).alias("w_minus_pd"),
    ).drop("pd_x100", "score_x100", "wpd_x100")
    tr = result.tournament_ratings
    tr = tr.with_columns(
        _x100_to_decimal(pl.col("score_x100"), 18, 2).cast(pl.Decimal(18, 1)).alias("score"),
        _x100_to_decimal(pl.col("we_x100"), 18, 2).alias("we"),
        _x100_to_decimal(pl.col("wwe_x100"), 18, 2).alias("w_we"),
    ).drop("score_x100", "we_x100", "wwe_x100")
    return EngineResult(
        rating_lists=result.rating_lists,
        rating_changes=ch,
        tournament_ratings=tr,
        rating_discrepancies=result.rating_discrepancies,
        skips=result.skips,
        list_dates=result.list_dates,
    )


def _state_from_official(state: pl.DataFrame, off: pl.DataFrame) -> pl.DataFrame:
    """Players of an official list override the state (rating, K, birth year)."""
    if state.height == 0:
        # one row per player and list: store_io.load_official_lists guarantees it
        return (
            off.select(
                "player_id",
                "rating",
                pl.lit(None, pl.Int64).alias("total_games"),
                ((pl.col("rating").fill_null(0) >= 2400) | pl.col("ever_2400").fill_null(False)).alias("ever_2400"),
                (pl.col("rating").fill_null(0) >= 2300).alias("ever_2300"),
                "birth_year",
                # FIDE's 'i'/'wi' flag: inactive on the imported list (B.02 7.2.2)
                pl.when(pl.col("flag").str.contains("i").fill_null(False))
                .then(None)
                .otherwise(pl.col("list_date"))
                .alias("last_active"),
                pl.lit(None, pl.Date).alias("pool_from"),
                "k",
                pl.when(pl.col("rating").is_not_null()).then(pl.col("list_date")).alias("first_rated"),
            )
            .rename({"k": "k_official"})
            .cast(_STATE_SCHEMA)
        )
    o = off.select(
        "player_id",
        pl.col("rating").alias("o_rating"),
        pl.col("k").alias("o_k"),
        pl.col("birth_year").alias("o_by"),
        pl.col("list_date").alias("o_date"),
        pl.col("flag").str.contains("i").fill_null(False).alias("o_inactive"),
        pl.col("ever_2400").fill_null(False).alias("o_ever_2400"),
    ).unique("player_id", keep="first")
    s = state.join(o, on="player_id", how="full", coalesce=True)
    listed = pl.col("o_date").is_not_null()
    return s.select(
        "player_id",
        pl.when(listed).then(pl.col("o_rating")).otherwise(pl.col("rating")).alias("rating"),
        "total_games",
        (
            pl.col("ever_2400").fill_null(False)
            | (pl.col("o_rating").fill_null(0) >= 2400)
            | pl.col("o_ever_2400").fill_null(False)
        ).alias("ever_2400"),
        (pl.col("ever_2300").fill_null(False) | (pl.col("o_rating").fill_null(0) >= 2300)).alias("ever_2300"),
        pl.coalesce("o_by", "birth_year").alias("birth_year"),
        pl.when(pl.col("o_inactive").fill_null(False))
        .then(pl.col("last_active"))
        .otherwise(pl.coalesce("last_active", "o_date"))
        .alias("last_active"),
        "pool_from",
        pl.when(listed).then(pl.col("o_k")).otherwise(pl.col("k_official")).alias("k_official"),
        pl.coalesce("first_rated", pl.when(pl.col("o_rating").is_not_null()).then(pl.col("o_date"))).alias(
            "first_rated"
        ),
    ).cast(_STATE_SCHEMA)


# a discrepancy row as the engine finds it, and its name in `DISC_SCHEMA`
_DISC_COLS = {
    "in_force": "list_date",
    "tournament_id": "tournament_id",
    "player_id": "player_id",
    "file_rating": "file_rating",
    "store_rating": "list_rating",
    "file_id": "file_id",
}


def _plain_discrepancies(
    sides: pl.DataFrame, file_ratings: pl.DataFrame, kv: IdLookup, latest_dates: list[dt.date], plain: pl.Expr
) -> pl.DataFrame:
    """Plain (event, player) pairs (see `_one_period`) whose file rating differs from their
    rating on the list in force (the current one): columns of `_DISC_COLS`."""
    schema = {"in_force": pl.Date, "tournament_id": pl.Int64, "player_id": pl.Int64}
    schema |= {"file_rating": pl.Int64, "store_rating": pl.Int64, "file_id": pl.Int64}
    if file_ratings.height == 0 or not latest_dates:
        return _empty(schema)
    tids = sides.get_column("tournament_id").unique()
    fr = kv.attach(
        file_ratings.filter(pl.col("tournament_id").is_in(tids) & pl.col("file_rating").is_not_null()),
        "player_id",
        {"store_rating": "r_cur"},
    ).filter(pl.col("store_rating").is_not_null() & (pl.col("store_rating") != pl.col("file_rating")))
    if fr.height == 0:
        return _empty(schema)
    # the pairs that played in the period, with their event's list in force
    pairs = sides.filter(plain.fill_null(False) & pl.col("tp_key").is_in(fr.get_column("tp_key")))
    pairs = pairs.select("tp_key", "in_force").unique(subset="tp_key")
    return fr.join(pairs, on="tp_key", how="inner").select(list(schema)).cast(schema)


def _ratings_in_force(keys: pl.DataFrame, lists: _Lists) -> pl.DataFrame:
    """keys(player_id, in_force, r_cur, ...) + store_rating from the list in force.

    ``r_cur`` is the player's rating on the latest list (the state at the start of the
    period); it is used instead of joining that whole list when it is the one in force.
    A player bootstrapped for a list b ≤ the start, in a period after the stored list in
    force L (L < boot period, or no list at all), was not known when L was computed: their
    rating in force is the bootstrapped one (see `_Lists`).
    """
    parts = []
    latest = lists.dates[-1] if lists.dates else None
    boots = lists.boots
    for (d,), k in keys.partition_by("in_force", as_dict=True).items():
        lst = lists.in_force(d)
        if lst is None:
            k = k.with_columns(pl.lit(None, pl.Int64).alias("store_rating"))
        elif lst is lists.by_date[latest]:
            k = k.with_columns(pl.col("r_cur").alias("store_rating"))
        else:
            k = k.join(lst.rename({"rating": "store_rating"}), on="player_id", how="left")
        if boots.height:
            l_date = lists.in_force_date(d)
            b = boots.filter(pl.col("boot_date") <= d)
            if l_date is not None:
                b = b.filter(pl.col("boot_period") > l_date)
            if b.height:
                k = (
                    k.join(b.select("player_id", "boot_rating"), on="player_id", how="left")
                    .with_columns(pl.coalesce("store_rating", "boot_rating").alias("store_rating"))
                    .drop("boot_rating")
                )
        parts.append(k)
    return pl.concat(parts)


# list rows, rating changes, tournament rows, discrepancies of one period
_PeriodFrames = tuple[pl.DataFrame, pl.DataFrame | None, pl.DataFrame | None, pl.DataFrame | None]


def _one_period(
    t: dt.date,
    prev_list: dt.date | None,
    sides_t: pl.DataFrame | None,
    state: pl.DataFrame,
    lists: _Lists,
    pool: pl.DataFrame,
    prep: Prepared,
    params: FideParams,
    off_t: pl.DataFrame | None,
    std_hist: pl.DataFrame | None,
) -> tuple[
    pl.DataFrame, pl.DataFrame, tuple[pl.DataFrame, pl.DataFrame | None, pl.DataFrame | None, pl.DataFrame | None]
]:
    """Rating period ending with list `t` (FIDE B.02 8): rate its games, pool the unrated
    players' games and publish their Ru, then the new state and list `t`.

    Returns (state after `t`, the pool, (list rows, rating changes, tournament rows,
    discrepancies)); the last three are None when the period has no game."""
    list_rules = _version_of(t, params)
    prev_date = prev_list or get_scheme("fide").previous_list(t)
    changes_t = tr_t = disc_t = None
    upd_parts: list[pl.DataFrame] = []
    pool_new = None
    if sides_t is not None and sides_t.height:
        rated = _rate_games(t, prev_date, sides_t, state, lists, prep, params, std_hist)
        changes_t, tr_t, disc_t, state = rated.changes, rated.tournaments, rated.discrepancies, rated.state
        upd_parts += rated.updates
        # unrated players pool their games against rated opponents (7.1.4)
        pool_new = rated.pooled
        pool = pl.concat([pool, pool_new.cast(_POOL_SCHEMA)])
        upd_parts.append(pool_new.group_by("player_id").agg(pl.len().cast(pl.Int64).alias("pool_games_t")))
    if pool.height:
        published, pool_rows_t, tr_unrated = _initial_ratings(t, state, pool, pool_new, prep, params, list_rules)
        upd_parts += [published, pool_rows_t]
        if tr_unrated is not None:
            tr_t = pl.concat([tr_t, tr_unrated.select(tr_t.columns)]) if tr_t is not None else tr_unrated
    if tr_t is not None:
        tr_t = tr_t.select(pl.lit(t).alias("list_date"), *_TR_COLUMNS)
    new_state, lists_t = _close_list(t, state, _updates(upd_parts), params, list_rules)
    if off_t is not None and off_t.height:
        new_state, lists_t = _apply_official(t, new_state, lists_t, off_t)
    lists.put(t, lists_t)
    return _by_player(new_state), pool, (lists_t, changes_t, tr_t, disc_t)


_TR_COLUMNS = (
    "tournament_id", "player_id", "rules_version", "ro", "n", "score_x100", "ra", "we_x100", "wwe_x100", "k",
    "change_x100", "rp", "unrated", "ru_provisional",
)  # fmt: skip


@dataclass
class _RatedGames:
    """What the rated games of one period give: rows for the store, the players' updates (joined
    into the state by `_updates`), the games pooled by unrated players, and the state with the
    period's new players, file birth years and bootstraps."""

    changes: pl.DataFrame
    tournaments: pl.DataFrame
    discrepancies: pl.DataFrame
    updates: list[pl.DataFrame]
    pooled: pl.DataFrame
    state: pl.DataFrame


def _rate_games(
    t: dt.date,
    prev_date: dt.date,
    sides_t: pl.DataFrame,
    state: pl.DataFrame,
    lists: _Lists,
    prep: Prepared,
    params: FideParams,
    std_hist: pl.DataFrame | None,
) -> _RatedGames:
    """The games of the period: Ro and Rc in force, D, PD and W − PD per game, K and the change
    per player (B.02 7.1.3, 8.3.1–8.3.4)."""
    period_players, known = _state_at_start(sides_t, state, prep)
    # K belongs to the period (read from list t - 1), so its rules are those in force on that
    # list's date, whatever the versions of the period's events
    k_rules = _version_of(prev_date, params)
    k_base, with_birth = _k_base(k_rules, prev_date, prep)
    # per-player values come by gathers (`IdLookup`), not joins: ~250k sides a FIDE month
    kv = IdLookup(
        with_birth(known).select("player_id", pl.col("rating").alias("r_cur"), "first_rated", k_base.alias("k_base"))
    )
    # Ro (list in force) and R_prev are the current rating for most sides; the others are
    # replaced below (`exc`)
    sides_r = kv.attach(sides_t, "player_id", {"ro_if": "r_cur", "r_prev": "r_cur"})
    sides_r = kv.attach(sides_r, "opponent_id", {"rc": "r_cur"})
    ev, disc_t = _in_force(sides_t, sides_r, kv, lists, prep, std_hist)
    known, boot_rows = _bootstrap(ev, known)
    lists.add_boots(t, boot_rows)
    updates = [
        boot_rows.select("player_id", pl.lit(True).alias("boot"))
        if boot_rows.height
        else pl.DataFrame(schema={"player_id": pl.Int64, "boot": pl.Boolean})
    ]
    k_of = kv  # K before the cap, by player
    if boot_rows.height:
        # R_prev is the rating after bootstrapping, which may also set the 2400/2300 marks:
        # K from the updated state
        k_of = IdLookup(with_birth(known).select("player_id", "rating", k_base.alias("k_base")))
        sides_r = k_of.attach(sides_r.drop("r_prev"), "player_id", {"r_prev": "rating"})
    # the (event, player) pairs whose rating in force is not the current one (an older list in
    # force, a bootstrap): every other side keeps the current rating
    exc = ev.filter(pl.col("r_if").ne_missing(pl.col("r_cur"))).select("tp_key", "r_if")
    if exc.height:
        for key, out in (("tp_key", "ro_if"), ("to_key", "rc")):
            x = exc.select(pl.col("tp_key").alias(key), pl.col("r_if").alias("__x"), pl.lit(True).alias("__in"))
            sides_r = (
                sides_r.join(x, on=key, how="left", maintain_order="left")
                .with_columns(pl.when(pl.col("__in")).then(pl.col("__x")).otherwise(pl.col(out)).alias(out))
                .drop("__x", "__in")
            )
    event_versions = sides_t.get_column("version").unique().to_list()
    versions = [v for v in event_versions if v is not None]
    s = _sides_plan(sides_r.lazy(), params, versions).collect(engine=_ENGINE)
    per_event, n_per_player = _period_sums(s, period_players, k_of, k_rules)
    updates.append(n_per_player)
    changes_t, tr_t = _period_rows(s, per_event, n_per_player, event_versions, prep)
    # the state rows that changed (new players, file birth years, bootstrap) replace theirs
    changed = known.filter(pl.col("__changed")).drop("__changed")
    if changed.height:
        state = _by_player(pl.concat([state.join(changed.select("player_id"), on="player_id", how="anti"), changed]))
    pooled = s.filter(pl.col("reason") == "pooled_unrated").select(list(_POOL_SCHEMA))
    return _RatedGames(changes_t, tr_t, disc_t, updates, pooled, state)


def _state_at_start(sides_t: pl.DataFrame, state: pl.DataFrame, prep: Prepared) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the period's players, sorted; their state at the start of the period with a `__changed`
    column): one left join, so players new to the store get an all-null state row; a birth year
    from the files fills in where the store has none."""
    period_players = _by_player(sides_t.select(pl.col("player_id").unique().sort()))
    known = (
        period_players.join(state, on="player_id", how="left", coalesce=False)
        # the right key is null for players the state did not know
        .with_columns(pl.col("player_id_right").is_null().alias("__changed"))
        .select(*_STATE_SCHEMA, "__changed")
    )
    no_by = known.filter(pl.col("birth_year").is_null())
    if no_by.height:
        filled = (
            no_by.drop("birth_year")
            .join(prep.birth_years, on="player_id", how="left")
            .with_columns((pl.col("__changed") | pl.col("birth_year").is_not_null()).alias("__changed"))
            .select(*_STATE_SCHEMA, "__changed")
        )
        known = pl.concat([known.filter(pl.col("birth_year").is_not_null()), filled])
    return period_players, known.cast(_STATE_SCHEMA)


def _k_base(
    k_rules: fide.RuleSet, prev_date: dt.date, prep: Prepared
) -> tuple[pl.Expr, Callable[[pl.DataFrame], pl.DataFrame]]:
    """K before the 700 cap, as an expression over a state row (FIDE B.02 8.3.3): a fixed K
    where the rules give one; the official list's K; 10 once 2400 was reached (with 30 games
    under V2009); 40 for a junior never at 2300; the new player's K under 30 games; else the low
    K. Returns (the expression, the function that adds the `__bd` birth dates it may read)."""
    # junior (8.3.3): list year − birth year ≤ 18; V2017's "until the 18th birthday" is checked
    # against the birth date where the store has one (`fide.is_junior`)
    age = pl.lit(prev_date.year) - pl.col("birth_year")
    junior = (age <= 18) & (age >= 0)
    bd = prep.birth_dates
    by_date = None
    if k_rules.junior_rule == "birthday" and bd is not None and bd.height:
        by_date = IdLookup(bd.select("player_id", pl.col("birth_date").alias("__bd")))
        junior = (
            pl.when(pl.col("__bd").is_not_null())
            # born after the list: a typo, not a junior
            .then((pl.col("__bd") <= pl.lit(prev_date)) & (pl.lit(prev_date) < pl.col("__bd").dt.offset_by("18y")))
            .otherwise(junior)
        )

    def with_birth(frame: pl.DataFrame) -> pl.DataFrame:
        return by_date.attach(frame, "player_id", {"__bd": "__bd"}) if by_date is not None else frame

    few_games = pl.col("total_games").is_not_null() & (pl.col("total_games") < 30)
    k_base = (
        pl.when(pl.lit(k_rules.k_fixed is not None))
        .then(pl.lit(k_rules.k_fixed, pl.Int64))
        .when(pl.col("k_official").is_not_null())
        .then(pl.col("k_official"))
        .when(pl.col("ever_2400").fill_null(False) & ~(pl.lit(k_rules.k10_needs_30) & few_games))
        .then(10)
        .when(pl.lit(k_rules.k_junior) & junior.fill_null(False) & ~pl.col("ever_2300").fill_null(False))
        .then(40)
        .when(few_games)
        .then(k_rules.k_new)
        .otherwise(k_rules.k_low)
        .cast(pl.Int64)
    )
    return k_base, with_birth


def _in_force(
    sides_t: pl.DataFrame,
    sides_r: pl.DataFrame,
    kv: IdLookup,
    lists: _Lists,
    prep: Prepared,
    std_hist: pl.DataFrame | None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rating in force at each event's start (B.02 7.1.3) of the (event, player) pairs that
    need a look in the lists, and the file ratings that disagree with the store.

    Returns (pairs: tp_key, tournament_id, player_id, in_force, version, r_cur, first_rated,
    k_base, store_rating, file_rating, file_id, boot_rating, r_if; discrepancies in the
    `rating_discrepancies` columns)."""
    # An (event, player) pair is plain when the list in force at the event's start is the
    # latest list and the player is rated on it: their rating in force is then the current one,
    # there is nothing to bootstrap, and the only check left is the rating written in the file.
    latest = lists.by_date[lists.dates[-1]] if lists.dates else None
    in_force_dates = sides_t.get_column("in_force").drop_nulls().unique().to_list()
    latest_dates = [d for d in in_force_dates if latest is not None and lists.in_force(d) is latest]
    plain = pl.col("in_force").is_in(latest_dates) & pl.col("r_prev").is_not_null()
    keys = (
        sides_r.filter(~plain.fill_null(False))
        .select("tp_key", "tournament_id", "player_id", "in_force", "version")
        .unique(subset="tp_key")
    )
    disc_plain = _plain_discrepancies(sides_r, prep.file_ratings, kv, latest_dates, plain)
    ev = kv.attach(keys, "player_id", {"r_cur": "r_cur", "first_rated": "first_rated", "k_base": "k_base"})
    ev = _ratings_in_force(ev, lists) if ev.height else ev.with_columns(pl.lit(None, pl.Int64).alias("store_rating"))
    if prep.file_ratings.height:
        ev = ev.join(prep.file_ratings.select("tp_key", "file_rating", "file_id"), on="tp_key", how="left")
    else:
        # no rating written in the files (e.g. PGN without Elo tags): nothing to join
        ev = ev.with_columns(pl.lit(None, pl.Int64).alias("file_rating"), pl.lit(None, pl.Int64).alias("file_id"))
    never_before = pl.col("first_rated").is_null() | (pl.col("first_rated") > pl.col("in_force"))
    ev = ev.with_columns(
        pl.when(pl.col("store_rating").is_null() & never_before).then(pl.col("file_rating")).alias("boot_rating")
    )
    if std_hist is not None:
        # R&B 7.2.1 (from March 2024): an unrated rapid/blitz player with a standard rating at
        # the start of the event is treated as rated at that rating
        std = _asof_rating(ev.select("player_id", "in_force").unique(), std_hist, "in_force", "std_rating")
        ev = ev.join(std, on=["player_id", "in_force"], how="left").with_columns(
            pl.when(pl.col("store_rating").is_null() & never_before & pl.col("version").is_in(["V2024", "V2024A"]))
            .then(pl.coalesce("boot_rating", "std_rating"))
            .otherwise(pl.col("boot_rating"))
            .alias("boot_rating")
        )
    ev = ev.with_columns(pl.coalesce("store_rating", "boot_rating").alias("r_if"))
    disagree = ev.filter(
        pl.col("file_rating").is_not_null()
        & pl.col("boot_rating").is_null()
        & (pl.col("store_rating").is_null() | (pl.col("store_rating") != pl.col("file_rating")))
        & (pl.col("store_rating").is_not_null() | ~never_before)
    ).select(list(_DISC_COLS))
    disc_t = pl.concat([disagree, disc_plain]).rename(_DISC_COLS).sort("tournament_id", "player_id")
    return ev, disc_t


def _bootstrap(ev: pl.DataFrame, known: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Players the store never rated take the rating written in this period's files as their
    rating on the list in force (the earliest such event's). Returns (the period's state with
    the bootstraps, rows: player_id, boot_rating, boot_date)."""
    boot_rows = (
        ev.filter(pl.col("boot_rating").is_not_null())
        .sort("player_id", "in_force", "boot_rating")
        .group_by("player_id", maintain_order=True)
        .agg(pl.col("boot_rating").first(), pl.col("in_force").first().alias("boot_date"))
        .join(
            known.filter(pl.col("rating").is_null() & pl.col("first_rated").is_null()).select("player_id"),
            on="player_id",
            how="semi",
        )
    )
    if not boot_rows.height:
        return known, boot_rows
    booted = pl.col("boot_rating").is_not_null()
    known = (
        known.join(boot_rows, on="player_id", how="left")
        .with_columns(
            pl.coalesce("rating", "boot_rating").alias("rating"),
            pl.when(booted)
            .then(pl.col("ever_2400").fill_null(False) | (pl.col("boot_rating") >= 2400))
            .otherwise(pl.col("ever_2400"))
            .alias("ever_2400"),
            pl.when(booted)
            .then(pl.col("ever_2300").fill_null(False) | (pl.col("boot_rating") >= 2300))
            .otherwise(pl.col("ever_2300"))
            .alias("ever_2300"),
            pl.coalesce("last_active", "boot_date").alias("last_active"),
            pl.coalesce("first_rated", "boot_date").alias("first_rated"),
        )
        .with_columns((pl.col("__changed") | booted).alias("__changed"))
        .drop("boot_rating", "boot_date")
    )
    return known, boot_rows


def _period_sums(
    s: pl.DataFrame, period_players: pl.DataFrame, k_of: IdLookup, k_rules: fide.RuleSet
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per (event, rated player): Ro, N, ΣW, ΣRc, ΣPD and Σ(W − PD) of the counted games, in
    hundredths; per player: N, K after the 700 cap (K × N ≤ 700, B.02 8.3.3) and the change
    K × Σ(W − PD), rounded once, halves away from zero (8.3.4).

    Returns (per event: tournament_id, player_id, ro, n, score_x100, sum_rc, we_x100,
    wwe_x100; per player: player_id, n, k, change)."""
    per_event = (
        s.lazy()
        .filter(pl.col("counted"))
        .group_by("tp_key")
        .agg(
            pl.col("ro").first().alias("ro"),
            pl.len().cast(pl.Int64).alias("n"),
            pl.col("score_x100").sum().alias("score_x100"),
            pl.col("rc").sum().alias("sum_rc"),
            pl.col("pd_x100").sum().alias("we_x100"),
        )
        .with_columns(
            (pl.col("tp_key") // (1 << 32)).alias("tournament_id"),
            (pl.col("tp_key") % (1 << 32)).alias("player_id"),
            # Σ(W − PD) = ΣW − ΣPD, exact in hundredths
            (pl.col("score_x100") - pl.col("we_x100")).alias("wwe_x100"),
        )
        .drop("tp_key")
        .collect(engine=_ENGINE)
    )
    sums = per_event.group_by("player_id").agg(pl.col("n").sum(), pl.col("wwe_x100").sum().alias("sum_x100"))
    # in player order (the period's players are sorted): the update joins the state by merge
    n_per_player = IdLookup(sums).attach(period_players, "player_id", {"n": "n", "sum_x100": "sum_x100"})
    n_per_player = k_of.attach(n_per_player.filter(pl.col("n").is_not_null()), "player_id", {"k_base": "k_base"})
    n_per_player = (
        n_per_player.with_columns(
            pl.when(pl.lit(k_rules.cap_700) & (pl.col("k_base") * pl.col("n") > 700))
            .then(700 // pl.col("n"))
            .otherwise(pl.col("k_base"))
            .alias("k")
        )
        .with_columns(round_x100_expr(pl.col("k") * pl.col("sum_x100")).alias("change"))
        .select("player_id", "n", "k", "change")
    )
    return per_event, n_per_player


def _period_rows(
    s: pl.DataFrame,
    per_event: pl.DataFrame,
    n_per_player: pl.DataFrame,
    event_versions: list[str | None],
    prep: Prepared,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The period's rows of `rating_changes` (one per side, with the player's final K on counted
    games) and of `tournament_ratings` for rated players: Ra (mean Rc), p, Rp = Ra + dp (8.1.1,
    table 8.1.1), K × Σ(W − We) unrounded (`change_x100`)."""
    k_final = IdLookup(n_per_player.select("player_id", "k"))
    sk = k_final.attach(s, "player_id", {"k": "k"}).lazy()
    changes_plan = sk.select(
        "list_date", "tournament_id", "game_id", "player_id", "opponent_id", "ro", "rc", "d_raw", "d_used",
        "pd_x100", "score_x100", "wpd_x100", pl.when(pl.col("counted")).then(pl.col("k")).alias("k"), "counted",
        "reason", "tc_assumed",
    )  # fmt: skip
    tr_plan = k_final.attach(per_event, "player_id", {"k": "k"}).lazy()
    if len(event_versions) == 1 and event_versions[0] is not None:
        # one rules version for the period's events (the usual case): a literal, no join
        tr_plan = tr_plan.with_columns(pl.lit(event_versions[0], pl.Utf8).alias("rules_version"))
    else:
        tr_plan = tr_plan.join(
            prep.tournaments.lazy().select(
                pl.col("tournament_id").cast(pl.Int64), pl.col("version").alias("rules_version")
            ),
            on="tournament_id",
            how="left",
        )
    tr_plan = tr_plan.with_columns(
        div_round_expr(pl.col("sum_rc"), pl.col("n")).alias("ra"),
        div_round_expr(pl.col("score_x100"), pl.col("n")).alias("p_x100"),
        (pl.col("k") * pl.col("wwe_x100")).alias("change_x100"),
        pl.lit(False).alias("unrated"),
        pl.lit(None, pl.Int64).alias("ru_provisional"),
    ).with_columns((pl.col("ra") + dp_expr(pl.col("p_x100"))).alias("rp"))
    changes_t, tr_t = pl.collect_all([changes_plan, tr_plan], engine=_ENGINE)
    return changes_t, tr_t


_UPDATE_SCHEMA = {
    "player_id": pl.Int64,
    "n": pl.Int64,
    "k": pl.Int64,
    "change": pl.Int64,
    "ru": pl.Int64,
    "pool_n": pl.Int64,
    "pool_games": pl.Int64,
    "pool_games_t": pl.Int64,
    "boot": pl.Boolean,
}


def _updates(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """The period's per-player updates (`_UPDATE_SCHEMA`) in one frame, sorted by player: one
    full join of the parts on player_id."""
    upd = None
    for part in parts:
        if part.height == 0:
            continue
        upd = part if upd is None else upd.join(part, on="player_id", how="full", coalesce=True)
    if upd is None:
        upd = _empty(_UPDATE_SCHEMA)
    return _by_player(
        upd.with_columns([pl.lit(None, dt_).alias(c) for c, dt_ in _UPDATE_SCHEMA.items() if c not in upd.columns])
        .select(list(_UPDATE_SCHEMA))
        .cast(_UPDATE_SCHEMA)
    )


def _close_list(
    t: dt.date, state: pl.DataFrame, upd: pl.DataFrame, params: FideParams, list_rules: fide.RuleSet
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The new state and list `t`: one join of the period's updates into the state. The new
    rating is Ru for a first rating, else R + change; on 1 March 2024 the one-off adjustment;
    below the floor the player is delisted (7.2.1); flags per `_list_flags`.

    Returns (state in `_STATE_SCHEMA`, list rows in `LIST_SCHEMA` order less `rating_exact`)."""
    st = state.lazy().join(upd.lazy(), on="player_id", how="left")
    was_rated = pl.col("rating").is_not_null()
    new_rating = (
        pl.when(pl.col("ru").is_not_null())
        .then(pl.col("ru"))
        .when(was_rated)
        .then(pl.col("rating") + pl.col("change").fill_null(0))
    )
    compressed = t == fide.COMPRESSION_LIST and params.rules in (None, "V2024")
    if compressed:
        # FIDE B.02 (2024), one-off adjustment of 1 March 2024: R + 0.4 x (2000 - R) < 2000
        st = st.with_columns(new_rating.alias("__pre"))
        nr = pl.col("__pre")
        # the points added are shown in the list row's flags ('adj2024:+N'); `change` stays the
        # K-based change of the period, so rating = previous + change + N
        adj = pl.when(nr < 2000).then(div_round_expr(2 * (2000 - nr), pl.lit(5)))
        new_rating = nr + adj.fill_null(0)
    else:
        adj = pl.lit(None, pl.Int64)
    st = st.with_columns(new_rating.alias("new_rating"), was_rated.alias("was_rated"), adj.alias("adj2024"))
    st = st.with_columns((pl.col("new_rating") < list_rules.floor).fill_null(False).alias("delisted")).with_columns(
        pl.when(pl.col("delisted")).then(None).otherwise(pl.col("new_rating")).alias("new_rating")
    )
    active_now = (pl.col("n").fill_null(0) > 0) | pl.col("ru").is_not_null()
    st = st.with_columns(
        pl.col("rating").alias("old_rating"),
        pl.col("new_rating").alias("rating"),
        pl.when(pl.col("ru").is_not_null())
        .then(pl.col("pool_n"))
        .otherwise(pl.col("total_games") + pl.col("n").fill_null(0))
        .alias("total_games"),
        (pl.col("ever_2400").fill_null(False) | (pl.col("new_rating").fill_null(0) >= 2400)).alias("ever_2400"),
        (pl.col("ever_2300").fill_null(False) | (pl.col("new_rating").fill_null(0) >= 2300)).alias("ever_2300"),
        pl.when(active_now).then(pl.lit(t)).otherwise(pl.col("last_active")).alias("last_active"),
        pl.when(pl.col("delisted"))
        .then(pl.lit(t + dt.timedelta(days=1)))
        .otherwise(pl.col("pool_from"))
        .alias("pool_from"),
        pl.lit(None, pl.Int64).alias("k_official"),
        pl.coalesce("first_rated", pl.when(pl.col("new_rating").is_not_null()).then(pl.lit(t))).alias("first_rated"),
    )
    st = st.collect(engine=_ENGINE).lazy()  # shared by the state and the list below
    new_state, lists_t = pl.collect_all(
        [st.select([pl.col(c).cast(d) for c, d in _STATE_SCHEMA.items()]), _list_plan(t, st, compressed)],
        engine=_ENGINE,
    )
    return new_state, lists_t


def _list_plan(t: dt.date, st: pl.LazyFrame, compressed: bool) -> pl.LazyFrame:
    """List `t`'s rows from the closed state: rated players, players with pooled games, and the
    delisted. Flags: 'i' inactive, no rated game in the last 12 months (7.2.2); 'new' first
    rating; 'delisted' fell below the floor; 'pool' unrated with pooled games; 'adj2024:+N'."""
    delisted = pl.col("delisted").fill_null(False)
    inactive = pl.col("last_active").is_null() | (pl.col("last_active") <= pl.lit(add_months(t, -12)))
    flags = _flags_expr(
        [
            ("i", pl.col("rating").is_not_null() & inactive),
            ("new", pl.col("ru").is_not_null()),
            ("delisted", delisted),
            ("pool", pl.col("rating").is_null() & ~delisted),
        ],
        pl.lit("adj2024:+") + pl.col("adj2024").cast(pl.Utf8) if compressed else None,
    )
    return st.filter(pl.col("rating").is_not_null() | pl.col("pool_games").is_not_null() | delisted).select(
        pl.lit(t).alias("list_date"),
        "player_id",
        "rating",
        pl.coalesce(
            pl.when(pl.col("ru").is_null()).then(pl.col("n")),
            pl.col("pool_games_t"),
            pl.lit(0, pl.Int64),
        ).alias("games"),
        pl.when(pl.col("rating").is_not_null() | delisted)
        .then(pl.col("total_games"))
        .otherwise(pl.col("pool_games"))
        .alias("total_games"),
        pl.when(pl.col("ru").is_null()).then(pl.col("k")).alias("k"),
        pl.when(pl.col("ru").is_null() & pl.col("was_rated").fill_null(False))
        .then(pl.col("change").fill_null(0))
        .alias("change"),
        flags.alias("flags"),
        "ever_2400",
        "birth_year",
        pl.when(pl.col("boot").fill_null(False))
        .then(pl.lit("bootstrap"))
        .otherwise(pl.lit("computed"))
        .alias("source"),
    )


def _apply_official(
    t: dt.date, new_state: pl.DataFrame, lists_t: pl.DataFrame, off_t: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """An imported official list for `t` is what FIDE published: it wins for its players, in the
    state and in list `t` (source 'imported')."""
    new_state = _state_from_official(new_state, off_t)
    o = off_t.unique("player_id", keep="first").select(
        "player_id", pl.col("rating").alias("o_rating"), pl.lit(True).alias("imp")
    )
    lists_t = (
        lists_t.join(o, on="player_id", how="full", coalesce=True)
        .join(
            new_state.select("player_id", pl.col("ever_2400").alias("o_e"), pl.col("birth_year").alias("o_by")),
            on="player_id",
            how="left",
        )
        .with_columns(
            pl.when(pl.col("imp")).then(pl.col("o_rating")).otherwise(pl.col("rating")).alias("rating"),
            pl.coalesce("games", pl.lit(0, pl.Int64)).alias("games"),
            pl.coalesce("list_date", pl.lit(t)).alias("list_date"),
            pl.when(pl.col("imp")).then(pl.lit("imported")).otherwise(pl.col("source")).alias("source"),
            pl.col("o_e").alias("ever_2400"),
            pl.col("o_by").alias("birth_year"),
        )
        .select(list(LIST_SCHEMA))
    )
    return new_state, lists_t


def _flags_expr(marks: list[tuple[str, pl.Expr]], extra: pl.Expr | None) -> pl.Expr:
    """A list row's flags: the names of the true `marks`, in order, joined by ',' (null if none).

    `extra` (a string, null where absent) is appended last.  The marks are folded into a
    bit mask mapped to its string: building strings row by row for the whole list (about
    500k rows, nearly all without a flag) cost several times more.
    """
    mask = pl.sum_horizontal([cond.fill_null(False).cast(pl.UInt8) * (1 << bit) for bit, (_, cond) in enumerate(marks)])
    names = {
        m: ",".join(name for bit, (name, _) in enumerate(marks) if m >> bit & 1) or None for m in range(1 << len(marks))
    }
    flags = mask.replace_strict(names, return_dtype=pl.Utf8)
    if extra is None:
        return flags
    return (
        pl.when(extra.is_not_null())
        .then(pl.concat_str(flags, extra, separator=",", ignore_nulls=True))
        .otherwise(flags)
    )


def _switch_on_version(groups: dict[Any, list[str]], value: Callable[[Any], pl.Expr], default: pl.Expr) -> pl.Expr:
    """`value(key)` for the sides whose ``version`` is in ``groups[key]``.

    A period's events nearly always share one key: the expression is then `value(key)` itself,
    with no per-row test of the version."""
    if len(groups) <= 1:
        return value(next(iter(groups))) if groups else default
    expr = pl.when(pl.lit(False)).then(None)
    for key in sorted(groups, key=repr):
        expr = expr.when(pl.col("version").is_in(groups[key])).then(value(key))
    return expr


def _per_version(params: FideParams, versions: list[str], value: Callable[[fide.RuleSet], object]) -> pl.Expr:
    """A rule's value for each side's ``version``, as literals (no join with the rules)."""
    rules = _rules_by_version(params)
    groups: dict[Any, list[str]] = {}
    for v in sorted(versions):
        groups.setdefault(value(rules[v]), []).append(v)
    return _switch_on_version(groups, pl.lit, pl.lit(None))


def _sides_plan(sides: pl.LazyFrame, params: FideParams, versions: list[str]) -> pl.LazyFrame:
    """Per player-side: Ro, Rc, why not counted, D, D after the 400-point rule, PD, W − PD.

    `sides` carries the player's rating in force (ro_if) and current rating (r_prev), K
    before the 700 cap (k_base) and the opponent's rating in force (rc); `versions` are the
    rule versions of its events.
    """
    # 8.2.4: a player rated since (late report) plays at their current rating
    s = sides.with_columns(pl.coalesce("ro_if", "r_prev").alias("ro"))
    top = pl.max_horizontal(pl.col("ro").fill_null(0), pl.col("rc").fill_null(0))
    t120 = _per_version(params, versions, lambda r: r.time_thresholds[0])
    t90 = _per_version(params, versions, lambda r: r.time_thresholds[1])
    minimum = pl.when(top >= t120).then(120).when(top >= t90).then(90).otherwise(60)
    too_fast = (
        pl.lit(params.check_time_minimum and params.system == "fide")
        & pl.col("tc_minutes").is_not_null()
        & (pl.col("tc_minutes") < minimum)
    )
    rb600 = (
        pl.lit(params.system != "fide")
        & (pl.col("eff_start") >= fide.RB_600_FROM)
        & pl.col("ro_if").is_not_null()
        & pl.col("rc").is_not_null()
        & ((pl.col("ro_if") - pl.col("rc")).abs() >= 600)
        & ((pl.col("ro_if") > 2600) | (pl.col("rc") > 2600))
    )
    reason = (
        pl.when(pl.col("reason").is_not_null())
        .then(pl.col("reason"))
        .when(too_fast)
        .then(pl.lit("below_time_minimum"))
        .when(rb600)
        .then(pl.lit("rb_600_points"))
        .when(pl.col("r_prev").is_null() & pl.col("rc").is_not_null())
        .then(pl.lit("pooled_unrated"))
        .when(pl.col("r_prev").is_null())
        .then(pl.lit("both_unrated"))
        .when(pl.col("rc").is_null())
        .then(pl.lit("unrated_opponent"))
    )
    s = s.with_columns(reason.alias("reason")).with_columns(
        pl.col("reason").is_null().alias("counted"),
        (pl.col("ro") - pl.col("rc")).alias("d_raw"),
    )
    rules = _rules_by_version(params)
    if any(rules[v].cap_mode == "one_upgrade" for v in versions):
        # V2022 8.3.1: one upgrade per event, the largest D > 400 of the player's games
        up = (
            # ties on D broken by the round, so the capped game does not depend on row order
            pl.when(pl.col("counted") & (pl.col("d_raw") > 400))
            .then(pl.col("d_raw") * 10_000 - pl.col("round").fill_null(0).clip(0, 9_999))
            .rank("ordinal", descending=True)
            .over("tp_key")
        )
    else:
        up = pl.lit(None, pl.UInt32)
    d = pl.col("d_raw")
    capped = d.clip(-400, 400)
    cap_lower = _per_version(params, versions, lambda r: r.v2022_cap_lower)
    by_mode = {
        "all": capped,
        "none": d,
        "all_below_2650": pl.when(pl.col("ro") >= 2650).then(d).otherwise(capped),
        # V2022 8.3.1: the largest D > 400 of the event is capped once
        "one_upgrade": pl.when(d > 400)
        .then(pl.when(pl.col("__up") == 1).then(400).otherwise(d))
        .when(d < -400)
        .then(pl.when(cap_lower).then(-400).otherwise(d))
        .otherwise(d),
    }
    modes: dict[Any, list[str]] = {}
    for v in sorted(versions):
        modes.setdefault(rules[v].cap_mode, []).append(v)
    d_used = _switch_on_version(modes, by_mode.__getitem__, d)
    return (
        s.with_columns(up.alias("__up"))
        .with_columns(d_used.alias("d_used"))
        .with_columns(pd_x100_expr(pl.col("d_used")).alias("pd_x100"))
        .with_columns((pl.col("score_x100") - pl.col("pd_x100")).alias("wpd_x100"))
    )


def _initial_ratings(
    t: dt.date,
    state: pl.DataFrame,
    pool: pl.DataFrame,
    pool_new: pl.DataFrame | None,
    prep: Prepared,
    params: FideParams,
    list_rules: fide.RuleSet,
):
    """Ru of the unrated players with pooled games (B.02 7.1.4, 8.2).

    Returns (published: player_id, ru, pool_n — those with new games this period, N ≥ 5
    and Ru ≥ floor; pool rows: player_id, pool_games for every pooling player;
    per-tournament rows of this period's unrated players, or None).
    """
    active = (
        pool_new.select("player_id").unique() if pool_new is not None else pl.DataFrame(schema={"player_id": pl.Int64})
    )
    unrated = state.filter(pl.col("rating").is_null()).select("player_id", "pool_from")
    since = pool.join(unrated, on="player_id", how="inner").filter(
        pl.col("pool_from").is_null() | (pl.col("list_date") >= pl.col("pool_from"))
    )
    # first event(s): the earliest start among the events pooled since the player became
    # (or last became) unrated; a zero score there is disregarded (8.2.1)
    all_ev = since.group_by("player_id", "tournament_id").agg(
        pl.col("eff_start").first(), pl.col("score_x100").sum().alias("ev_score")
    )
    first_min = _version_of(t, params).first_event_min_x100
    zero_first = (
        all_ev.filter(pl.col("eff_start") == pl.col("eff_start").min().over("player_id"))
        .filter(pl.col("ev_score").sum().over("player_id") < first_min)
        .select("player_id", "tournament_id")
    )
    # results of consecutive periods of at most 26 months are pooled (7.1.4)
    p = since.filter(pl.col("list_date") >= add_months(t, -25)).join(
        zero_first, on=["player_id", "tournament_id"], how="anti"
    )
    agg = (
        p.group_by("player_id")
        .agg(
            pl.len().cast(pl.Int64).alias("N"),
            pl.col("score_x100").sum().alias("W"),
            pl.col("rc").sum().alias("total"),
            pl.col("eff_start").max().alias("last_start"),
        )
        .with_columns(version_expr("last_start", params.rules).alias("version"))
        .join(_rules_frame(params).select("version", "initial_rule", "ru_max"), on="version", how="left")
    )
    n, w, tot = pl.col("N"), pl.col("W"), pl.col("total")
    old = (
        pl.when(w > 50 * n)
        .then(div_round_expr(100 * tot + 40 * (w - 50 * n) * n, 100 * n))
        .when(w == 50 * n)
        .then(div_round_expr(tot, n))
        .otherwise(div_round_expr(tot + dp_expr(div_round_expr(w, n)) * n, n))
    )
    nn = n + 2
    new = div_round_expr(tot + 3600 + dp_expr(div_round_expr(w + 100, nn)) * nn, nn)
    ru = (
        pl.when(pl.col("initial_rule") == "unconfirmed")
        .then(pl.lit(None, pl.Int64))  # before 2014: no Ru under a rule that did not apply
        .when(pl.col("initial_rule") == "old")
        .then(old)
        .otherwise(new)
    )
    ru = pl.when(pl.col("ru_max").is_not_null()).then(pl.min_horizontal(ru, pl.col("ru_max"))).otherwise(ru)
    agg = agg.with_columns(ru.alias("ru"))
    published = (
        agg.join(active, on="player_id", how="semi")
        # before 2014 the rule is not confirmed (`fide` module docstring): nobody enters the list
        .filter((n >= 5) & (pl.col("ru") >= list_rules.floor) & (pl.col("initial_rule") != "unconfirmed"))
        .select("player_id", "ru", pl.col("N").alias("pool_n"))
    )
    pool_rows = agg.select("player_id", pl.col("N").alias("pool_games"))
    tr_unrated = None
    if pool_new is not None and pool_new.height:
        tr_unrated = (
            pool_new.join(prep.tournaments.select("tournament_id", "version"), on="tournament_id", how="left")
            .group_by("tournament_id", "player_id")
            .agg(
                pl.col("version").first().alias("rules_version"),
                pl.len().cast(pl.Int64).alias("n"),
                pl.col("score_x100").sum().alias("score_x100"),
                pl.col("rc").sum().alias("sum_rc"),
            )
            .with_columns(
                div_round_expr(pl.col("sum_rc"), pl.col("n")).alias("ra"),
                div_round_expr(pl.col("score_x100"), pl.col("n")).alias("p_x100"),
            )
            .with_columns(
                (pl.col("ra") + dp_expr(pl.col("p_x100"))).alias("rp"),
                pl.lit(True).alias("unrated"),
                pl.lit(None, pl.Int64).alias("ro"),
                pl.lit(None, pl.Int64).alias("we_x100"),
                pl.lit(None, pl.Int64).alias("wwe_x100"),
                pl.lit(None, pl.Int64).alias("k"),
                pl.lit(None, pl.Int64).alias("change_x100"),
            )
            .join(
                agg.select("player_id", pl.col("ru").alias("ru_provisional")),
                on="player_id",
                how="left",
            )
        )
    return published, pool_rows, tr_unrated
