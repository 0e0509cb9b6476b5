"""The FIDE rating engine in Polars: every monthly list from the games in the store.

Rules: `elopipe.rating.fide` (FIDE B.02, V2017/V2022/V2024/V2024A, and the rapid/blitz
chapter).  Periods: `elopipe.rating.periods` (FIDE lists on the 1st of the month; an event
is rated on the first list whose closing date, list date − 3 days, is on or after its end
date; it uses the list in force on its start date, B.02 7.1.3 and spec §3.1).

How one period (list t) is computed, with no per-game Python loop:

1. The player-sides of the period's games (two rows per game) are joined to the list in
   force at each tournament's start (as-of join on the history of computed, imported and
   bootstrapped lists).  A player with no rating in the store before a tournament takes the
   rating written in the file (TRF rating column, PGN WhiteElo/BlackElo) as their rating on
   that list ("bootstrap"); a player whose history is unknown counts as having ≥ 30 games.
   Disagreements between a file's rating and the store's list are recorded.
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
   the one-off adjustment; inactive = no rated game in the last 12 months (7.2.2, flag 'i').
7. An imported official list for t (``official_lists``) overrides the computed ratings of
   the players it lists (it is what FIDE published).

Output frames (`EngineResult`) follow the store contract of `elopipe.schema`:
``rating_lists``, ``rating_changes``, ``tournament_ratings``, ``rating_discrepancies``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import polars as pl

from elopipe.rating import fide
from elopipe.rating.periods import PeriodScheme, add_months, get_scheme
from elopipe.rating.rounding import div_round_expr, round_x100_expr
from elopipe.rating.tables import dp_expr, pd_x100_expr
from elopipe.rating.timecontrol import classify_games

SYSTEM_CLASS = {"fide": "standard", "fide-rapid": "rapid", "fide-blitz": "blitz"}


@dataclass(frozen=True)
class FideParams:
    """Options of a FIDE run.

    system: 'fide' | 'fide-rapid' | 'fide-blitz'.  rules: force 'V2017'|'V2022'|'V2024'
    (None = by date).  v2022_cap_lower: V2022 switch for the lower-rated side (see
    `elopipe.rating.fide`).  unknown_tc: rate class assumed when the time control is
    unknown (flagged ``tc_assumed``).  check_time_minimum: drop standard games below the
    version's minimum time for 60 moves (B.02 1.3).  rating_from: events starting before
    this date are not rated (skip reason 'before_rating_from'); the default is the first
    FIDE rating list (1971), so that historical games (e.g. 19th-century matches in PGN
    collections) do not create thousands of empty lists.
    """

    system: str = "fide"
    rules: str | None = None
    v2022_cap_lower: bool = False
    unknown_tc: str = "standard"
    check_time_minimum: bool = True
    rating_from: dt.date = dt.date(1971, 1, 1)

    def as_dict(self) -> dict[str, object]:
        return {
            "system": self.system,
            "rules": self.rules,
            "v2022_cap_lower": self.v2022_cap_lower,
            "unknown_tc": self.unknown_tc,
            "check_time_minimum": self.check_time_minimum,
            "rating_from": self.rating_from,
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


@dataclass
class EngineResult:
    """Contract frames for all computed lists (``system`` column not included)."""

    rating_lists: pl.DataFrame
    rating_changes: pl.DataFrame
    tournament_ratings: pl.DataFrame
    rating_discrepancies: pl.DataFrame
    skips: pl.DataFrame
    list_dates: list[dt.date] = field(default_factory=list)


# ---- versions as expressions ------------------------------------------------------


def _rules_frame(params: FideParams) -> pl.DataFrame:
    rows = []
    for name in ("V2017", "V2022", "V2024", "V2024A"):
        probe = {
            "V2017": dt.date(2020, 1, 1),
            "V2022": dt.date(2023, 1, 1),
            "V2024": dt.date(2024, 6, 1),
            "V2024A": dt.date(2025, 11, 1),
        }[name]
        rs = fide.rules_for_system(params.system, probe, None, params.v2022_cap_lower)
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
                "k_fixed": rs.k_fixed,
                "first_min": rs.first_event_min_x100,
                "junior_max_age": 17 if rs.junior_rule == "birthday" else 18,
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
    return (
        pl.when(d < fide.V2022_FROM)
        .then(pl.lit("V2017"))
        .when(d < fide.V2024_FROM)
        .then(pl.lit("V2022"))
        .when(d < fide.V2024A_FROM)
        .then(pl.lit("V2024"))
        .otherwise(pl.lit("V2024A"))
    )


def _version_of(d: dt.date, params: FideParams) -> fide.RuleSet:
    return fide.rules_for_system(params.system, d, params.rules, params.v2022_cap_lower)


# ---- preparation ---------------------------------------------------------------------


def prepare(inputs: EngineInputs, params: FideParams, scheme: PeriodScheme | None = None) -> Prepared:
    """Turn the store's frames into player-sides assigned to periods.

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

    too_old = games.filter(pl.col("eff_start") < params.rating_from)
    games = games.filter(pl.col("eff_start").is_null() | (pl.col("eff_start") >= params.rating_from))
    no_dates = games.filter(pl.col("list_date").is_null())
    other = games.filter(pl.col("list_date").is_not_null() & (pl.col("rate_class") != rate_class))
    skips = pl.concat(
        [
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

    g = games.filter(pl.col("list_date").is_not_null() & (pl.col("rate_class") == rate_class))
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
    g = g.with_columns(reason.alias("reason"))
    common = [
        "game_id",
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
    sides = pl.concat([white, black]).filter(pl.col("player_id").is_not_null())

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
        "file_rating",
        pl.coalesce("file_id", "t_file").alias("file_id"),
    )
    sides = sides.drop("game_file_rating")

    birth = pl.concat(
        [
            inputs.players.select("player_id", "birth_year"),
            tp.select("player_id", "birth_year"),
        ]
    ).filter(pl.col("birth_year").is_not_null())
    # players.birth_year first (resolved identity), else the latest year a file wrote
    birth_years = birth.group_by("player_id").agg(pl.col("birth_year").first().alias("birth_year"))

    periods = sides.get_column("list_date").unique().sort().to_list()
    list_dates: list[dt.date] = []
    if periods:
        list_dates = scheme.lists_between(periods[0], periods[-1])
    return Prepared(
        sides=sides.sort("list_date", "game_id", "player_id"),
        tournaments=tours,
        skips=skips,
        file_ratings=file_ratings,
        birth_years=birth_years,
        list_dates=list_dates,
        official=inputs.official,
        standard_lists=inputs.standard_lists,
    )


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

_HIST_SCHEMA = {"player_id": pl.Int64, "list_date": pl.Date, "rating": pl.Int64}


def _empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)


def _asof_rating(keys: pl.DataFrame, hist: pl.DataFrame, date_col: str, out: str) -> pl.DataFrame:
    """keys(player_id, `date_col`) + `out` = rating on the latest history list ≤ date.

    Also adds ``{out}_seen`` (Boolean): the player has a history row at or before the date.
    """
    if hist.height == 0:
        return keys.with_columns(pl.lit(None, pl.Int64).alias(out), pl.lit(False).alias(f"{out}_seen"))
    h = hist.select(
        "player_id",
        pl.col("list_date").alias(date_col),
        pl.col("rating").alias(out),
        pl.lit(True).alias(f"{out}_seen"),
    ).sort("player_id", date_col)
    res = (
        keys.sort("player_id", date_col)
        .join_asof(h, on=date_col, by="player_id", strategy="backward", check_sortedness=False)
        .with_columns(pl.col(f"{out}_seen").fill_null(False))
    )
    return res


def run_periods(
    prep: Prepared,
    params: FideParams,
    through: dt.date | None = None,
) -> EngineResult:
    """Compute every list of `prep.list_dates` (up to `through`) in order.

    Python iterates over periods only; each period is a handful of Polars joins and
    group-bys over its player-sides.
    """
    rules_df = _rules_frame(params)
    list_dates = [d for d in prep.list_dates if through is None or d <= through]
    sides_all = prep.sides.join(rules_df, on="version", how="left")
    official = prep.official
    state = _empty(_STATE_SCHEMA)
    hist = _empty(_HIST_SCHEMA)
    if list_dates and official.height:
        first = list_dates[0]
        before = official.filter(pl.col("list_date") < first)
        hist = before.select("player_id", "list_date", "rating")
        if before.height:
            last = before.filter(pl.col("list_date") == before.get_column("list_date").max())
            state = _state_from_official(state, last)
    std_hist = None
    if prep.standard_lists is not None and prep.standard_lists.height:
        std_hist = prep.standard_lists.select("player_id", "list_date", "rating")

    out_lists, out_changes, out_tr, out_disc = [], [], [], []
    pool = pl.DataFrame(
        schema={
            "player_id": pl.Int64,
            "list_date": pl.Date,
            "tournament_id": pl.Int64,
            "eff_start": pl.Date,
            "rc": pl.Int64,
            "score_x100": pl.Int64,
        }
    )
    sides_by_period = {k[0]: v for k, v in sides_all.partition_by("list_date", as_dict=True).items()}
    prev_list: dt.date | None = None
    for t in list_dates:
        sides_t = sides_by_period.get(t)
        off_t = official.filter(pl.col("list_date") == t) if official.height else None
        state, hist, pool, frames = _one_period(t, prev_list, sides_t, state, hist, pool, prep, params, off_t, std_hist)
        lists_t, changes_t, tr_t, disc_t = frames
        out_lists.append(lists_t)
        if changes_t is not None:
            out_changes.append(changes_t)
        if tr_t is not None:
            out_tr.append(tr_t)
        if disc_t is not None:
            out_disc.append(disc_t)
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
    "pd": pl.Decimal(4, 2),
    "score": pl.Decimal(2, 1),
    "w_minus_pd": pl.Decimal(4, 2),
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
    "score": pl.Decimal(5, 1),
    "ra": pl.Int64,
    "we": pl.Decimal(7, 2),
    "w_we": pl.Decimal(7, 2),
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
    """Integer hundredths → Decimal(precision, scale), exactly (through text, no float)."""
    a = expr.abs()
    text = (
        pl.when(expr < 0).then(pl.lit("-")).otherwise(pl.lit(""))
        + (a // 100).cast(pl.Utf8)
        + pl.lit(".")
        + (a % 100).cast(pl.Utf8).str.zfill(2)
    )
    return text.cast(pl.Decimal(precision, scale))


def _state_from_official(state: pl.DataFrame, off: pl.DataFrame) -> pl.DataFrame:
    """Players of an official list override the state (rating, K, birth year)."""
    o = off.select(
        "player_id",
        pl.col("rating").alias("o_rating"),
        pl.col("k").alias("o_k"),
        pl.col("birth_year").alias("o_by"),
        pl.col("list_date").alias("o_date"),
    ).unique("player_id", keep="first")
    s = state.join(o, on="player_id", how="full", coalesce=True)
    return s.select(
        "player_id",
        pl.when(pl.col("o_date").is_not_null()).then(pl.col("o_rating")).otherwise(pl.col("rating")).alias("rating"),
        "total_games",
        (pl.col("ever_2400").fill_null(False) | (pl.col("o_rating").fill_null(0) >= 2400)).alias("ever_2400"),
        (pl.col("ever_2300").fill_null(False) | (pl.col("o_rating").fill_null(0) >= 2300)).alias("ever_2300"),
        pl.coalesce("o_by", "birth_year").alias("birth_year"),
        pl.coalesce("last_active", "o_date").alias("last_active"),
        "pool_from",
        pl.when(pl.col("o_date").is_not_null()).then(pl.col("o_k")).otherwise(pl.col("k_official")).alias("k_official"),
        pl.coalesce("first_rated", pl.when(pl.col("o_rating").is_not_null()).then(pl.col("o_date"))).alias(
            "first_rated"
        ),
    ).cast(_STATE_SCHEMA)


def _one_period(
    t: dt.date,
    prev_list: dt.date | None,
    sides_t: pl.DataFrame | None,
    state: pl.DataFrame,
    hist: pl.DataFrame,
    pool: pl.DataFrame,
    prep: Prepared,
    params: FideParams,
    off_t: pl.DataFrame | None,
    std_hist: pl.DataFrame | None,
):
    list_rules = _version_of(t, params)
    prev_date = prev_list or get_scheme("fide").previous_list(t)
    changes_t = tr_t = disc_t = None
    n_per_player = None
    pool_new = None
    boot_players = pl.DataFrame(schema={"player_id": pl.Int64})

    if sides_t is not None and sides_t.height:
        # -- ratings in force at each event's start: store lists, else bootstrap from file --
        keys = sides_t.select("tournament_id", "player_id", "in_force", "version").unique()
        ev = _asof_rating(keys, hist, "in_force", "store_rating")
        first_rated = state.select("player_id", "first_rated")
        ev = ev.join(first_rated, on="player_id", how="left").join(
            prep.file_ratings.select("tournament_id", "player_id", "file_rating", "file_id"),
            on=["tournament_id", "player_id"],
            how="left",
        )
        never_before = pl.col("first_rated").is_null() | (pl.col("first_rated") > pl.col("in_force"))
        boot = pl.when(pl.col("store_rating").is_null() & never_before).then(pl.col("file_rating")).otherwise(None)
        ev = ev.with_columns(boot.alias("boot_rating"))
        if std_hist is not None:
            std = _asof_rating(ev.select("player_id", "in_force").unique(), std_hist, "in_force", "std_rating").select(
                "player_id", "in_force", "std_rating"
            )
            ev = ev.join(std, on=["player_id", "in_force"], how="left").with_columns(
                pl.when(pl.col("store_rating").is_null() & never_before & pl.col("version").is_in(["V2024", "V2024A"]))
                .then(pl.coalesce("boot_rating", "std_rating"))
                .otherwise(pl.col("boot_rating"))
                .alias("boot_rating")
            )
        ev = ev.with_columns(pl.coalesce("store_rating", "boot_rating").alias("r_if"))
        disc_t = ev.filter(
            pl.col("file_rating").is_not_null()
            & pl.col("boot_rating").is_null()
            & (pl.col("store_rating").is_null() | (pl.col("store_rating") != pl.col("file_rating")))
            & (pl.col("store_rating").is_not_null() | ~never_before)
        ).select(
            pl.col("in_force").alias("list_date"),
            "tournament_id",
            "player_id",
            "file_rating",
            pl.col("store_rating").alias("list_rating"),
            "file_id",
        )

        # -- bootstrap the state of never-rated players from this period's files ---------
        boot_rows = (
            ev.filter(pl.col("boot_rating").is_not_null())
            .sort("player_id", "in_force", "boot_rating")
            .group_by("player_id", maintain_order=True)
            .agg(pl.col("boot_rating").first(), pl.col("in_force").first().alias("boot_date"))
        )
        cur = state.select("player_id", "rating", "first_rated")
        boot_rows = boot_rows.join(cur, on="player_id", how="left").filter(
            pl.col("rating").is_null() & pl.col("first_rated").is_null()
        )
        boot_players = boot_rows.select("player_id")
        if boot_rows.height:
            add = boot_rows.select(
                "player_id",
                pl.col("boot_rating").alias("rating"),
                pl.lit(None, pl.Int64).alias("total_games"),
                (pl.col("boot_rating") >= 2400).alias("ever_2400"),
                (pl.col("boot_rating") >= 2300).alias("ever_2300"),
                pl.lit(None, pl.Int64).alias("birth_year"),
                pl.col("boot_date").alias("last_active"),
                pl.lit(None, pl.Date).alias("pool_from"),
                pl.lit(None, pl.Int64).alias("k_official"),
                pl.col("boot_date").alias("first_rated"),
            ).cast(_STATE_SCHEMA)
            state = pl.concat([state.join(add.select("player_id"), on="player_id", how="anti"), add])

        # -- every player of the period has a state row (unrated ones with a null rating) --
        seen = sides_t.select("player_id").unique().join(state, on="player_id", how="anti")
        if seen.height:
            state = pl.concat(
                [
                    state,
                    seen.with_columns(
                        *[pl.lit(None, dtype).alias(c) for c, dtype in _STATE_SCHEMA.items() if c != "player_id"]
                    ).cast(_STATE_SCHEMA),
                ]
            )

        # -- birth years from the files for players the state does not know yet ----------
        state = (
            state.join(prep.birth_years.rename({"birth_year": "f_by"}), on="player_id", how="left")
            .with_columns(pl.coalesce("birth_year", "f_by").alias("birth_year"))
            .drop("f_by")
        )

        # -- per side: Ro, Rc, D, PD -----------------------------------------------------
        own = ev.select("tournament_id", "player_id", pl.col("r_if").alias("ro_if"))
        opp = ev.select(
            "tournament_id",
            pl.col("player_id").alias("opponent_id"),
            pl.col("r_if").alias("rc"),
        )
        s = (
            sides_t.join(own, on=["tournament_id", "player_id"], how="left")
            .join(opp, on=["tournament_id", "opponent_id"], how="left")
            .join(state.select("player_id", pl.col("rating").alias("r_prev")), on="player_id", how="left")
        )
        s = s.with_columns(pl.coalesce("ro_if", "r_prev").alias("ro"))
        minimum = (
            pl.when(pl.max_horizontal(pl.col("ro").fill_null(0), pl.col("rc").fill_null(0)) >= pl.col("t120"))
            .then(120)
            .when(pl.max_horizontal(pl.col("ro").fill_null(0), pl.col("rc").fill_null(0)) >= pl.col("t90"))
            .then(90)
            .otherwise(60)
        )
        too_fast = (
            (pl.lit(params.check_time_minimum and params.system == "fide"))
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
            .otherwise(None)
        )
        s = s.with_columns(reason.alias("reason")).with_columns(
            pl.col("reason").is_null().alias("counted"),
            (pl.col("ro") - pl.col("rc")).alias("d_raw"),
        )
        # V2022: one upgrade per event, for the largest D > 400 of the player's counted games
        upgrade_rank = (
            pl.when(pl.col("counted") & (pl.col("d_raw") > 400))
            .then(pl.col("d_raw"))
            .otherwise(None)
            .rank("ordinal", descending=True)
            .over("tournament_id", "player_id")
        )
        capped = pl.col("d_raw").clip(-400, 400)
        d_used = (
            pl.when(pl.col("cap_mode") == "all")
            .then(capped)
            .when(pl.col("cap_mode") == "none")
            .then(pl.col("d_raw"))
            .when(pl.col("cap_mode") == "all_below_2650")
            .then(pl.when(pl.col("ro") >= 2650).then(pl.col("d_raw")).otherwise(capped))
            .when(pl.col("d_raw") > 400)
            .then(pl.when(pl.col("__up") == 1).then(400).otherwise(pl.col("d_raw")))
            .when(pl.col("d_raw") < -400)
            .then(pl.when(pl.col("cap_lower")).then(-400).otherwise(pl.col("d_raw")))
            .otherwise(pl.col("d_raw"))
        )
        s = s.with_columns(upgrade_rank.alias("__up")).with_columns(d_used.alias("d_used"))
        s = s.with_columns(pd_x100_expr(pl.col("d_used")).alias("pd_x100")).with_columns(
            (pl.col("score_x100") - pl.col("pd_x100")).alias("wpd_x100")
        )

        # -- K: state at the start of the period, then the 700 cap -----------------------
        counted = s.filter(pl.col("counted"))
        per_player = counted.group_by("player_id").agg(
            pl.len().cast(pl.Int64).alias("n"),
            pl.col("wpd_x100").sum().alias("sum_x100"),
            pl.col("k_fixed").first().alias("k_fixed"),
            pl.col("junior_max_age").first().alias("junior_max_age"),
        )
        per_player = per_player.join(state, on="player_id", how="left")
        junior = (pl.lit(prev_date.year) - pl.col("birth_year")) <= pl.col("junior_max_age")
        k_base = (
            pl.when(pl.col("k_fixed").is_not_null())
            .then(pl.col("k_fixed"))
            .when(pl.col("k_official").is_not_null())
            .then(pl.col("k_official"))
            .when(pl.col("ever_2400").fill_null(False))
            .then(10)
            .when(junior.fill_null(False) & ~pl.col("ever_2300").fill_null(False))
            .then(40)
            .when(pl.col("total_games").is_not_null() & (pl.col("total_games") < 30))
            .then(40)
            .otherwise(20)
        )
        per_player = (
            per_player.with_columns(k_base.cast(pl.Int64).alias("k_base"))
            .with_columns(
                pl.when(pl.col("k_base") * pl.col("n") > 700)
                .then(700 // pl.col("n"))
                .otherwise(pl.col("k_base"))
                .alias("k")
            )
            .with_columns(
                (pl.col("k") * pl.col("sum_x100")).alias("change_x100"),
            )
            .with_columns(round_x100_expr(pl.col("change_x100")).alias("change"))
        )
        n_per_player = per_player.select("player_id", "n", "k", "change")

        s = s.join(n_per_player.select("player_id", "k"), on="player_id", how="left")
        changes_t = s.select(
            "list_date",
            "tournament_id",
            "game_id",
            "player_id",
            "opponent_id",
            "ro",
            "rc",
            "d_raw",
            "d_used",
            _x100_to_decimal(pl.col("pd_x100"), 4, 2).alias("pd"),
            _x100_to_decimal(pl.col("score_x100"), 4, 2).cast(pl.Decimal(2, 1)).alias("score"),
            _x100_to_decimal(pl.col("wpd_x100"), 4, 2).alias("w_minus_pd"),
            pl.when(pl.col("counted")).then(pl.col("k")).alias("k"),
            "counted",
            "reason",
            "tc_assumed",
        )

        # -- per tournament (rated players) ----------------------------------------------
        tr_rated = (
            s.filter(pl.col("counted"))
            .group_by("tournament_id", "player_id")
            .agg(
                pl.col("version").first().alias("rules_version"),
                pl.col("ro").first().alias("ro"),
                pl.len().cast(pl.Int64).alias("n"),
                pl.col("score_x100").sum().alias("score_x100"),
                pl.col("rc").sum().alias("sum_rc"),
                pl.col("pd_x100").sum().alias("we_x100"),
                pl.col("wpd_x100").sum().alias("wwe_x100"),
                pl.col("k").first().alias("k"),
            )
            .with_columns(
                div_round_expr(pl.col("sum_rc"), pl.col("n")).alias("ra"),
                div_round_expr(pl.col("score_x100"), pl.col("n")).alias("p_x100"),
                (pl.col("k") * pl.col("wwe_x100")).alias("change_x100"),
                pl.lit(False).alias("unrated"),
                pl.lit(None, pl.Int64).alias("ru_provisional"),
            )
            .with_columns((pl.col("ra") + dp_expr(pl.col("p_x100"))).alias("rp"))
        )

        # -- unrated players: pool games against rated opponents ------------------------
        pool_new = s.filter(pl.col("reason") == "pooled_unrated").select(
            "player_id",
            "list_date",
            "tournament_id",
            "eff_start",
            "rc",
            "score_x100",
        )
        pool = pl.concat([pool, pool_new.cast(pool.schema)])
        tr_t = tr_rated
    # -- initial ratings ---------------------------------------------------------------
    published = pl.DataFrame(schema={"player_id": pl.Int64, "ru": pl.Int64, "pool_n": pl.Int64})
    pool_rows_t = None
    tr_unrated = None
    if pool.height:
        active = (
            pool_new.select("player_id").unique()
            if pool_new is not None
            else pl.DataFrame(schema={"player_id": pl.Int64})
        )
        unrated = state.filter(pl.col("rating").is_null()).select("player_id", "pool_from")
        # pooled results of consecutive periods of at most 26 months (B.02 7.1.4)
        window_from = add_months(t, -25)
        p = pool.join(unrated, on="player_id", how="inner").filter(
            (pl.col("list_date") >= window_from)
            & (pl.col("pool_from").is_null() | (pl.col("list_date") >= pl.col("pool_from")))
        )
        # first event(s): the earliest start among the pooled events since the player
        # became (or last became) unrated; a zero score there is disregarded (8.2.1)
        all_ev = (
            pool.join(unrated, on="player_id", how="inner")
            .filter(pl.col("pool_from").is_null() | (pl.col("list_date") >= pl.col("pool_from")))
            .group_by("player_id", "tournament_id")
            .agg(pl.col("eff_start").first(), pl.col("score_x100").sum().alias("ev_score"))
        )
        first_start = all_ev.group_by("player_id").agg(pl.col("eff_start").min().alias("first_start"))
        first_ev = all_ev.join(first_start, on="player_id").filter(pl.col("eff_start") == pl.col("first_start"))
        first_min = _version_of(t, params).first_event_min_x100
        zero_first = (
            first_ev.group_by("player_id")
            .agg(pl.col("ev_score").sum().alias("first_score"), pl.col("tournament_id"))
            .filter(pl.col("first_score") < first_min)
            .explode("tournament_id")
            .select("player_id", "tournament_id")
        )
        p = p.join(zero_first, on=["player_id", "tournament_id"], how="anti")
        agg = p.group_by("player_id").agg(
            pl.len().cast(pl.Int64).alias("N"),
            pl.col("score_x100").sum().alias("W"),
            pl.col("rc").sum().alias("total"),
            pl.col("eff_start").max().alias("last_start"),
        )
        agg = agg.with_columns(version_expr("last_start", params.rules).alias("version")).join(
            _rules_frame(params).select("version", "initial_rule", "ru_max"), on="version", how="left"
        )
        n = pl.col("N")
        w = pl.col("W")
        tot = pl.col("total")
        old = (
            pl.when(w > 50 * n)
            .then(div_round_expr(100 * tot + 40 * (w - 50 * n) * n, 100 * n))
            .when(w == 50 * n)
            .then(div_round_expr(tot, n))
            .otherwise(div_round_expr(tot + dp_expr(div_round_expr(w, n)) * n, n))
        )
        nn = n + 2
        new = div_round_expr(tot + 3600 + dp_expr(div_round_expr(w + 100, nn)) * nn, nn)
        ru = pl.when(pl.col("initial_rule") == "old").then(old).otherwise(new)
        ru = pl.when(pl.col("ru_max").is_not_null()).then(pl.min_horizontal(ru, pl.col("ru_max"))).otherwise(ru)
        agg = agg.with_columns(ru.alias("ru"))
        published = (
            agg.join(active, on="player_id", how="semi")
            .filter((n >= 5) & (pl.col("ru") >= list_rules.floor))
            .select("player_id", "ru", pl.col("N").alias("pool_n"))
        )
        pool_rows_t = agg.select("player_id", pl.col("N").alias("pool_n"), "ru")
    if pool_new is not None and pool_new.height and pool_rows_t is not None:
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
            .join(pool_rows_t.select("player_id", pl.col("ru").alias("ru_provisional")), on="player_id", how="left")
        )
        tr_t = pl.concat([tr_t, tr_unrated.select(tr_t.columns)]) if tr_t is not None else tr_unrated

    if tr_t is not None:
        tr_t = tr_t.with_columns(pl.lit(t).alias("list_date")).select(
            "list_date",
            "tournament_id",
            "player_id",
            "rules_version",
            "ro",
            "n",
            _x100_to_decimal(pl.col("score_x100"), 5, 2).cast(pl.Decimal(5, 1)).alias("score"),
            "ra",
            _x100_to_decimal(pl.col("we_x100"), 7, 2).alias("we"),
            _x100_to_decimal(pl.col("wwe_x100"), 7, 2).alias("w_we"),
            "k",
            "change_x100",
            "rp",
            "unrated",
            "ru_provisional",
        )

    # -- the new state -------------------------------------------------------------------
    st = state
    if n_per_player is not None:
        st = st.join(n_per_player, on="player_id", how="left")
    else:
        st = st.with_columns(
            pl.lit(None, pl.Int64).alias("n"),
            pl.lit(None, pl.Int64).alias("k"),
            pl.lit(None, pl.Int64).alias("change"),
        )
    st = st.join(published, on="player_id", how="full", coalesce=True)
    if pool_rows_t is not None:
        st = st.join(pool_rows_t.select("player_id", pl.col("pool_n").alias("pool_games")), on="player_id", how="left")
    else:
        st = st.with_columns(pl.lit(None, pl.Int64).alias("pool_games"))
    pool_games_t = (
        pool_new.group_by("player_id").agg(pl.len().cast(pl.Int64).alias("pool_games_t"))
        if pool_new is not None
        else pl.DataFrame(schema={"player_id": pl.Int64, "pool_games_t": pl.Int64})
    )
    st = st.join(pool_games_t, on="player_id", how="left")
    was_rated = pl.col("rating").is_not_null()
    new_rating = (
        pl.when(pl.col("ru").is_not_null())
        .then(pl.col("ru"))
        .when(was_rated)
        .then(pl.col("rating") + pl.col("change").fill_null(0))
        .otherwise(None)
    )
    st = st.with_columns(new_rating.alias("new_rating"), was_rated.alias("was_rated"))
    compressed = t == fide.COMPRESSION_LIST and params.rules in (None, "V2024")
    if compressed:
        inc = div_round_expr(2 * (2000 - pl.col("new_rating")), pl.lit(5))
        st = st.with_columns(
            pl.when(pl.col("new_rating") < 2000)
            .then(pl.col("new_rating") + inc)
            .otherwise(pl.col("new_rating"))
            .alias("new_rating")
        )
    below = pl.col("new_rating") < list_rules.floor
    st = st.with_columns(below.fill_null(False).alias("delisted"))
    st = st.with_columns(pl.when(pl.col("delisted")).then(None).otherwise(pl.col("new_rating")).alias("new_rating"))
    active_now = (pl.col("n").fill_null(0) > 0) | pl.col("ru").is_not_null()
    new_state = st.select(
        "player_id",
        pl.col("new_rating").alias("rating"),
        pl.when(pl.col("ru").is_not_null())
        .then(pl.col("pool_n"))
        .otherwise(pl.col("total_games") + pl.col("n").fill_null(0))
        .alias("total_games"),
        (pl.col("ever_2400").fill_null(False) | (pl.col("new_rating").fill_null(0) >= 2400)).alias("ever_2400"),
        (pl.col("ever_2300").fill_null(False) | (pl.col("new_rating").fill_null(0) >= 2300)).alias("ever_2300"),
        "birth_year",
        pl.when(active_now).then(pl.lit(t)).otherwise(pl.col("last_active")).alias("last_active"),
        pl.when(pl.col("delisted"))
        .then(pl.lit(t + dt.timedelta(days=1)))
        .otherwise(pl.col("pool_from"))
        .alias("pool_from"),
        pl.lit(None, pl.Int64).alias("k_official"),
        pl.coalesce("first_rated", pl.when(pl.col("new_rating").is_not_null()).then(pl.lit(t))).alias("first_rated"),
    ).cast(_STATE_SCHEMA)
    source_imported = pl.DataFrame(schema={"player_id": pl.Int64})
    if off_t is not None and off_t.height:
        new_state = _state_from_official(new_state, off_t)
        source_imported = off_t.select("player_id").unique()

    # -- the list t ------------------------------------------------------------------------
    meta = st.select(
        "player_id",
        "n",
        "k",
        "change",
        "ru",
        "delisted",
        "was_rated",
        "pool_games",
        "pool_games_t",
    )
    lst = new_state.join(meta, on="player_id", how="left")
    in_pool = pl.col("pool_games").is_not_null()
    lst = lst.filter(pl.col("rating").is_not_null() | in_pool | pl.col("delisted").fill_null(False))
    inactive = pl.col("last_active").is_null() | (pl.col("last_active") <= pl.lit(add_months(t, -12)))
    flags = (
        pl.concat_list(
            pl.when(pl.col("rating").is_not_null() & inactive).then(pl.lit("i")),
            pl.when(pl.col("ru").is_not_null()).then(pl.lit("new")),
            pl.when(pl.col("delisted").fill_null(False)).then(pl.lit("delisted")),
            pl.when(pl.col("rating").is_null() & ~pl.col("delisted").fill_null(False)).then(pl.lit("pool")),
            pl.when(pl.lit(compressed) & pl.col("was_rated").fill_null(False)).then(pl.lit("compressed")),
        )
        .list.drop_nulls()
        .list.join(",")
    )
    lst = lst.join(boot_players.with_columns(pl.lit(True).alias("boot")), on="player_id", how="left")
    lst = lst.join(source_imported.with_columns(pl.lit(True).alias("imp")), on="player_id", how="left")
    lists_t = lst.select(
        pl.lit(t).alias("list_date"),
        "player_id",
        "rating",
        pl.coalesce(
            pl.when(pl.col("ru").is_null()).then(pl.col("n")),
            pl.col("pool_games_t"),
            pl.lit(0, pl.Int64),
        ).alias("games"),
        pl.when(pl.col("rating").is_not_null() | pl.col("delisted").fill_null(False))
        .then(pl.col("total_games"))
        .otherwise(pl.col("pool_games"))
        .alias("total_games"),
        pl.when(pl.col("ru").is_null()).then(pl.col("k")).alias("k"),
        pl.when(pl.col("ru").is_null() & pl.col("was_rated").fill_null(False))
        .then(pl.col("change").fill_null(0))
        .alias("change"),
        pl.when(flags == "").then(None).otherwise(flags).alias("flags"),
        "ever_2400",
        "birth_year",
        pl.when(pl.col("imp").fill_null(False))
        .then(pl.lit("imported"))
        .when(pl.col("boot").fill_null(False))
        .then(pl.lit("bootstrap"))
        .otherwise(pl.lit("computed"))
        .alias("source"),
    ).sort("player_id")
    # the history keeps only rows that differ from the previous list: an as-of lookup
    # still finds every player's rating in force, and the history stays small
    prev_r = state.select("player_id", pl.col("rating").alias("__prev"), pl.lit(True).alias("__known"))
    changed = (
        lists_t.select("player_id", "list_date", "rating")
        .join(prev_r, on="player_id", how="left")
        .filter(pl.col("__known").is_null() | pl.col("rating").ne_missing(pl.col("__prev")))
    )
    hist = pl.concat([hist, changed.select(list(_HIST_SCHEMA)).cast(_HIST_SCHEMA)])
    return new_state, hist, pool, (lists_t, changes_t, tr_t, disc_t)
