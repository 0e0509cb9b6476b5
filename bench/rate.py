"""Benchmark: one FIDE-sized month rated by the Polars engine vs a per-game Python loop.

Synthetic data: a 500,000-player official base list (ratings 1400-2850, K 10/20/40, birth
years), 125,000 games in 2,500 events of one month (October 2025; all events start and end
in the month, use the October list and are rated on the November list).  Every player of a
game is rated, every game is played.

Timed, in the same run:
* engine: `fide.prepare.prepare` + `fide.engine.run_periods` on in-memory frames (what `elopipe rate`
  does between reading and writing the store);
* baseline: `fide.reference.rate_month_python`, a straightforward loop over the games that
  produces the same month (per-side changes, per-event sums, the full new list).
Both results are compared player by player.  Goals: engine ≤ 3 s, ratio ≥ 20x.  Wall seconds and
CPU seconds of this process (`time.process_time`: every Polars thread counts) are both given, the
ratio by each; on a shared machine compare CPU seconds.

Run: ``.venv/bin/python bench/rate.py [--players N] [--games N] [--repeat N]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from elopipe.rating.fide.engine import run_periods  # noqa: E402
from elopipe.rating.fide.params import EngineInputs, FideParams  # noqa: E402
from elopipe.rating.fide.prepare import prepare  # noqa: E402
from elopipe.rating.fide.reference import rate_month_python  # noqa: E402
from elopipe.rating.periods import get_scheme  # noqa: E402

BASE = dt.date(2025, 10, 1)
RATED_ON = dt.date(2025, 11, 1)


def synth(n_players: int, n_games: int, seed: int = 7) -> EngineInputs:
    rng = np.random.default_rng(seed)
    pid = np.arange(1, n_players + 1, dtype=np.int64)
    rating = np.clip(rng.normal(1750, 280, n_players), 1400, 2850).astype(np.int64)
    k = np.where(rating >= 2400, 10, rng.choice([20, 20, 20, 40], n_players)).astype(np.int64)
    by = rng.integers(1950, 2018, n_players).astype(np.int64)
    official = pl.DataFrame(
        {
            "list_date": pl.Series([BASE] * n_players, dtype=pl.Date),
            "player_id": pid,
            "rating": rating,
            "games": np.zeros(n_players, dtype=np.int64),
            "k": k,
            "birth_year": by,
            "flag": pl.Series([None] * n_players, dtype=pl.Utf8),
            "sex": pl.Series([None] * n_players, dtype=pl.Utf8),
            "rating_flag": pl.Series([None] * n_players, dtype=pl.Utf8),
            # as store_io.load_official_lists: the list's 2400 mark (K 10 for ever)
            "ever_2400": k == 10,
        }
    )
    n_events = 2500
    per_event = n_games // n_events
    start_list = [
        dt.date.fromisoformat(str(d))
        for d in np.datetime64(BASE) + rng.integers(0, 20, n_events).astype("timedelta64[D]")
    ]
    tids = np.arange(1, n_events + 1, dtype=np.int64)
    tournaments = (
        pl.DataFrame(
            {
                "tournament_id": tids,
                "name": [f"E{i}" for i in tids],
                "file_id": tids,
                "start_date": pl.Series(start_list, dtype=pl.Date),
            }
        )
        .with_columns(
            (pl.col("start_date") + pl.duration(days=6)).alias("end_date"),
            pl.lit(None, pl.Date).alias("first_game"),
            pl.lit(None, pl.Date).alias("last_game"),
            pl.lit("90 minutes + 30 seconds per move").alias("time_control"),
            pl.lit("standard").alias("rate_class"),
            pl.lit(False).alias("is_team"),
            pl.lit(per_event, pl.Int64).alias("n_games"),
            pl.lit("file").alias("date_source"),
        )
        .with_columns(pl.col("end_date").alias("eff_end"), pl.col("start_date").alias("eff_start"))
    )
    # each event draws its players from the base list; white != black
    white = rng.integers(1, n_players + 1, n_games).astype(np.int64)
    black = rng.integers(1, n_players, n_games).astype(np.int64)
    black = np.where(black >= white, black + 1, black)
    res = rng.choice([0.0, 0.5, 1.0], n_games, p=[0.35, 0.3, 0.35])
    tid = np.repeat(tids, per_event)[:n_games]
    games = pl.DataFrame(
        {
            "game_id": np.arange(1, n_games + 1, dtype=np.int64),
            "tournament_id": tid,
            "white_id": white,
            "black_id": black,
            "white_score": res,
            "black_score": 1.0 - res,
        }
    ).with_columns(
        pl.lit("x").alias("result"),
        pl.lit(True).alias("played"),
        pl.lit(False).alias("result_conflict"),  # `store_io.load_games`' columns
        pl.lit(None, pl.Utf8).alias("unplayed_code"),
        pl.lit(None, pl.Date).alias("game_date"),
        pl.lit(None, pl.Date).alias("game_day"),
        pl.lit(None, pl.Int64).alias("round"),
        pl.lit(None, pl.Int64).alias("ply_count"),
        pl.lit(None, pl.Boolean).alias("has_moves"),
        pl.lit(None, pl.Utf8).alias("time_control"),
        pl.lit(None, pl.Utf8).alias("variant"),
        pl.lit(None, pl.Int64).alias("white_rating_in_file"),
        pl.lit(None, pl.Int64).alias("black_rating_in_file"),
        pl.col("tournament_id").alias("file_id"),
        pl.lit(None, pl.Int64).alias("line"),
    )
    tp = pl.DataFrame(
        schema={
            "tournament_id": pl.Int64,
            "player_id": pl.Int64,
            "start_rank": pl.Int64,
            "rating_in_file": pl.Int64,
            "fide_id_in_file": pl.Int64,
            "birth_year": pl.Int64,
            "sex": pl.Utf8,
            "federation": pl.Utf8,
            "title": pl.Utf8,
            "file_id": pl.Int64,
            "line": pl.Int64,
        }
    )
    players = pl.DataFrame({"player_id": pid, "birth_year": by})
    return EngineInputs(games=games, tournaments=tournaments, tournament_players=tp, players=players, official=official)


def engine(inputs: EngineInputs) -> pl.DataFrame:
    fp = FideParams()
    prep = prepare(inputs, fp, get_scheme("fide"))
    res = run_periods(prep, fp)
    return res.rating_lists.filter(pl.col("list_date") == RATED_ON)


def baseline(inputs: EngineInputs) -> list[tuple]:
    off = inputs.official
    ratings = dict(zip(off["player_id"].to_list(), off["rating"].to_list(), strict=True))
    ks = dict(zip(off["player_id"].to_list(), off["k"].to_list(), strict=True))
    starts = dict(
        zip(
            inputs.tournaments["tournament_id"].to_list(),
            inputs.tournaments["start_date"].to_list(),
            strict=True,
        )
    )
    g = inputs.games
    rows = zip(
        g["game_id"].to_list(),
        g["tournament_id"].to_list(),
        g["white_id"].to_list(),
        g["black_id"].to_list(),
        g["white_score"].to_list(),
        strict=True,
    )
    games = ((gid, t, w, b, int(ws * 100), starts[t]) for gid, t, w, b, ws in rows)
    _changes, _events, new_list = rate_month_python(games, ratings, ks)
    return new_list


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=500_000)
    ap.add_argument("--games", type=int, default=125_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} "
        "(timings are comparable within one run only)"
    )
    t0 = time.perf_counter()
    inputs = synth(args.players, args.games)
    print(
        f"synthetic month: {args.players:,} players on the base list, {args.games:,} games "
        f"({time.perf_counter() - t0:.2f} s to generate)"
    )

    engine(inputs)  # warm-up (imports, table caches)
    times, cpus = [], []
    for _ in range(args.repeat):
        t, c = time.perf_counter(), time.process_time()
        lst = engine(inputs)
        times.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    t_engine, c_engine = min(times), min(cpus)

    t, c = time.perf_counter(), time.process_time()
    ref = baseline(inputs)
    t_python, c_python = time.perf_counter() - t, time.process_time() - c

    got = sorted(lst.select("player_id", "rating", "games", "k", "change").iter_rows())
    want = sorted(ref)
    agree = got == want
    n_played = sum(1 for r in ref if r[2])
    print(f"players with games: {n_played:,}; list rows: {lst.height:,}")
    print(f"engine (Polars, best of {args.repeat}): {t_engine:.3f} s, {c_engine:.3f} CPU-s  [goal <= 3 s]")
    print(f"baseline (per-game pure Python):  {t_python:.3f} s, {c_python:.3f} CPU-s")
    print(f"ratio: {t_python / t_engine:.1f}x  [goal >= 20x], by CPU {c_python / c_engine:.1f}x")
    print(f"results identical: {agree}")
    if not agree:
        diff = [(a, b) for a, b in zip(got, want, strict=False) if a != b][:5]
        print("first differences (engine, baseline):", diff)
        sys.exit(1)


if __name__ == "__main__":
    main()
