"""Benchmark: cross-source dedup of one batch at federation scale (issue 13, item 3).

Synthetic store, written straight into the tables dedup reads (no parsing, no identity): per
month 750 Swiss events of 8-300 players and 5-11 rounds (about 125,000 games), players drawn from
regional pools of a 200,000-player federation (600 active players per region) so the same
two players meet in several events, a
fifth of the events under generic names ("Open", "Weekend Open", ...) with overlapping dates.
Every event is distinct: no two hold the same event, so every link is a false one.

Timed (CPU seconds of this process, wall in brackets):
* `relink_all` over the earlier months (the store the batch arrives in);
* `relink_tournaments` of a batch of the last month's tournaments (default: the last 100), in a
  store of 1 month and of `--months` months: the cost must follow the batch, not the store;
* the same for the whole last month as one batch.
Printed with the candidate pairs (tournaments sharing a pairing) and the links made (goal: 0).

Run: ``.venv/bin/python bench/dedup_relink.py [--months 3] [--batch 100]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from elopipe.identity import dedup  # noqa: E402
from elopipe.read.names import (  # noqa: E402
    event_key,  # noqa: E402
)
from elopipe.store.schema import ensure_schema  # noqa: E402

EVENTS_PER_MONTH = 750
POOL, REGIONS, ACTIVE = 200_000, 20, 600  # ACTIVE: players of a region who play this season
GENERIC = ["Open", "Weekend Open", "Club Championship", "Spring Open", "Rapidplay Open", "Congress"]


def _word(n: int) -> str:
    """A distinct made-up place name per number (event keys drop digits)."""
    letters = ""
    while True:
        n, k = divmod(n, 26)
        letters += "bcdfghjklmnpqrstvwxz"[k % 20] + "aeiouy"[k % 6]
        if n == 0:
            return letters.capitalize() + "ville"


def _month(rng: np.random.Generator, month: int, first_tid: int, first_gid: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One month's tournaments and games, ids from `first_tid` / `first_gid`."""
    base = dt.date(2025, 1, 1) + dt.timedelta(days=31 * month)
    t_rows: dict[str, list] = {k: [] for k in ("tournament_id", "name", "first_day", "last_day")}
    g_cols: dict[str, list[np.ndarray]] = {k: [] for k in ("tournament_id", "round", "white_id", "black_id", "res")}
    for i in range(EVENTS_PER_MONTH):
        tid = first_tid + i
        n = int(np.clip(rng.lognormal(3.4, 0.6), 8, 300)) // 2 * 2
        rounds = int(rng.integers(5, 12))
        start = base + dt.timedelta(days=int(rng.integers(0, 28)))
        generic = rng.random() < 0.2
        t_rows["tournament_id"].append(tid)
        name = f"{GENERIC[int(rng.integers(len(GENERIC)))]} 2025" if generic else f"{_word(tid)} Cup 2025"
        t_rows["name"].append(name)
        t_rows["first_day"].append(start)
        t_rows["last_day"].append(start + dt.timedelta(days=int(rng.integers(1, 8))))
        region = int(rng.integers(REGIONS)) * (POOL // REGIONS)
        players = region + rng.choice(ACTIVE, size=min(n, ACTIVE), replace=False)
        for r in range(1, rounds + 1):
            order = rng.permutation(players)
            g_cols["tournament_id"].append(np.full(n // 2, tid))
            g_cols["round"].append(np.full(n // 2, r))
            g_cols["white_id"].append(order[0::2])
            g_cols["black_id"].append(order[1::2])
            g_cols["res"].append(rng.integers(0, 3, n // 2))
    t = pl.DataFrame(t_rows).with_columns(
        pl.col("tournament_id").cast(pl.Int32),
        pl.col("tournament_id").alias("file_id"),
        pl.lit("trf").alias("source_format"),
        pl.col("name").map_elements(event_key, return_dtype=pl.Utf8).alias("event_key"),
        pl.col("first_day").alias("start_date"),
        pl.col("last_day").alias("end_date"),
        pl.lit("standard").alias("rate_class"),
    )
    g = pl.DataFrame({k: np.concatenate(v) for k, v in g_cols.items()})
    g = g.with_columns(
        (pl.int_range(pl.len()) + first_gid).alias("game_id"),
        pl.col("tournament_id").cast(pl.Int32),
        pl.col("tournament_id").cast(pl.Int32).alias("file_id"),
        pl.int_range(pl.len()).over("tournament_id").alias("game_index"),
        pl.col("round").cast(pl.Utf8).alias("round_label"),
        pl.col("res").replace_strict({0: "1-0", 1: "0-1", 2: "1/2-1/2"}, return_dtype=pl.Utf8).alias("result"),
        pl.lit(True).alias("played"),
        pl.lit("none").alias("date_precision"),
    ).drop("res")
    return t, g


def _add(con: duckdb.DuckDBPyConnection, t: pl.DataFrame, g: pl.DataFrame) -> None:
    con.register("_t", t)
    con.register("_g", g)
    con.execute("INSERT INTO tournaments BY NAME SELECT * FROM _t")
    con.execute("INSERT INTO games BY NAME SELECT * FROM _g")
    con.unregister("_t")
    con.unregister("_g")


def _timed(label: str, fn) -> object:
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    print(f"{label:<58} {time.process_time() - c0:7.2f} CPU-s  [{time.perf_counter() - w0:6.2f} s wall]")
    return out


def _batch_run(months: int, batch: int, whole_month: bool) -> None:
    rng = np.random.default_rng(13)
    data = []
    tid, gid = 1, 1
    for m in range(months):
        t, g = _month(rng, m, tid, gid)
        data.append((t, g))
        tid, gid = tid + t.height, gid + g.height
    con = duckdb.connect()
    ensure_schema(con)
    for t, g in data[:-1]:
        _add(con, t, g)
    last_t, last_g = data[-1]
    n_batch = last_t.height if whole_month else batch
    early_t = last_t.head(last_t.height - n_batch)
    _add(con, early_t, last_g.filter(pl.col("tournament_id").is_in(early_t["tournament_id"].to_list())))
    n_games = con.execute("SELECT count(*) FROM games").fetchone()[0]
    _timed(f"relink_all, store of {n_games:,} games", lambda: dedup.relink_all(con))
    new_t = last_t.tail(n_batch)
    new_g = last_g.filter(pl.col("tournament_id").is_in(new_t["tournament_id"].to_list()))
    _add(con, new_t, new_g)
    tids = set(new_t["tournament_id"].to_list())
    group = dedup.related_tournaments(con, tids)
    clusters = _timed(
        f"relink_tournaments: {n_batch} new ({new_g.height:,} games), {months} month(s)",
        lambda: dedup.relink_tournaments(con, tids),
    )
    cands = con.execute(
        """
        SELECT count(DISTINCT (a.tournament_id, b.tournament_id)) FROM games a JOIN games b
          ON a.white_id = b.white_id AND a.black_id = b.black_id AND a.round = b.round
         AND a.tournament_id < b.tournament_id
        JOIN tournaments ta ON ta.tournament_id = a.tournament_id
        JOIN tournaments tb ON tb.tournament_id = b.tournament_id
        WHERE ta.first_day <= tb.last_day + 3 AND tb.first_day <= ta.last_day + 3
        """
    ).fetchone()[0]
    links = con.execute("SELECT count(*) FROM game_sources WHERE role <> 'canonical'").fetchone()[0]
    print(
        f"  group re-linked: {len(group)} tournaments; store-wide date-compatible pairs sharing a pairing: {cands};"
        f" clusters: {clusters}; rows hidden as duplicates: {links}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--months", type=int, default=3)
    ap.add_argument("--batch", type=int, default=100)
    args = ap.parse_args()
    for months in sorted({1, args.months}):
        _batch_run(months, args.batch, whole_month=False)
    _batch_run(args.months, args.batch, whole_month=True)


if __name__ == "__main__":
    main()
