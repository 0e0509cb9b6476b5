"""Benchmark: how close to python-chess ``read_headers`` a PGN ingest can come (issue 27, item 5).

Issue 27 asks for a PGN ingest at >= 1.0x ``chess.pgn.read_headers`` by CPU. This bench measures a
**floor**: the least work any ingest of the file has to do, written as cheaply as Polars and DuckDB
allow, on the file of `bench/ingest.py` (the real PGNs of ``../shared/data/pgn``, concatenated to
100,000 games or more). In each round, interleaved, it times (CPU seconds of this process, every
thread, and of the children it waited for):

- **baseline**: ``chess.pgn.read_headers`` over the file (as `bench/ingest.py`);
- **floor parse**: read and decode the bytes; split the games at ``\\n\\n[``; split each into its
  tag section and movetext; extract 9 tags (one regex pass each); drop comments, variations, NAGs,
  move numbers and results from the movetext in one regex pass; sha1 of what is left. It checks
  nothing: no fault class of the PGN spec is detected, no line numbers are kept, nested variations
  are not removed, names are not normalised. Whatever reads the file for a store costs at least
  this;
- **floor load**: that frame (112k rows: 9 tags, hash) inserted into a fresh DuckDB file and
  committed. No identity, no same-game check, no tournament: the store's least cost;
- **elopipe ingest**: `elopipe.ingest.driver.ingest_paths` into a fresh store, as `bench/ingest.py`.

It prints each median and its ratio to the baseline by CPU (baseline CPU / its CPU: 1.0x or more
meets the goal). The floor's ratio is the best any ingest can reach here.

Usage: ``.venv/bin/python bench/pgn_floor.py [--rounds K] [--cache DIR]``.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import duckdb
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import DATA, _cpu, build_input, time_baseline, time_ingest  # noqa: E402

TAGS = ("Event", "Site", "Date", "Round", "White", "Black", "Result", "WhiteElo", "BlackElo")
# one pass: comments, one level of variations, NAGs, move numbers, results, runs of spaces
_NOISE = r"\{[^}]*\}|\([^()]*\)|\$\d+|\d+\.+|1-0|0-1|1/2-1/2|\*|\s+"


def floor_parse(path: Path) -> pl.DataFrame:
    """The floor parse (module docstring): one row per game, the `TAGS` (String) and `hash`
    (sha1 hex String, null without moves)."""
    games = path.read_bytes().decode("utf-8").split("\n\n[")
    frame = (
        pl.DataFrame({"g": games})
        .select(pl.col.g.str.split_exact("\n\n", 1).alias("p"))
        .unnest("p")
        .rename({"field_0": "h", "field_1": "m"})
        .select(
            *(pl.col.h.str.extract(f'{t} "([^"]*)"', 1).alias(t) for t in TAGS),
            pl.col.m.str.replace_all(_NOISE, " ").str.strip_chars().alias("m"),
        )
    )
    sha1 = hashlib.sha1
    hashes = [sha1(m.encode()).hexdigest() if m else None for m in frame.get_column("m").to_list()]
    return frame.drop("m").with_columns(pl.Series("hash", hashes, dtype=pl.String))


def floor_load(frame: pl.DataFrame, db: Path) -> None:
    """`frame` into table ``games`` of a new DuckDB file `db`, in one committed transaction."""
    con = duckdb.connect(str(db))
    try:
        con.execute("BEGIN")
        con.execute("CREATE TABLE games AS SELECT * FROM frame")
        con.execute("COMMIT")
    finally:
        con.close()


def _timed(fn: Callable[[], object]) -> float:
    gc.collect()  # each run starts without the previous runs' garbage
    c0 = _cpu()
    fn()
    return _cpu() - c0


def _round(path: Path, spent: dict[str, list[float]]) -> None:
    spent["baseline"].append(time_baseline(path)[2])
    parsed: list[pl.DataFrame] = []
    spent["floor parse"].append(_timed(lambda: parsed.append(floor_parse(path))))
    with tempfile.TemporaryDirectory(prefix="elopipe-floor-") as tmp:
        spent["floor load"].append(_timed(lambda: floor_load(parsed[0], Path(tmp) / "f.duckdb")))
    spent["floor parse + load"].append(spent["floor parse"][-1] + spent["floor load"][-1])
    spent["elopipe ingest"].append(time_ingest(path)[2])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds, medians printed (default 3)")
    ap.add_argument("--cache", type=Path, default=DATA, help="folder of the built input (as bench/ingest.py)")
    args = ap.parse_args()
    path, games = build_input(100_000, args.cache)
    import elopipe.ingest.driver  # noqa: F401  (imported before the clocks start)

    spent: dict[str, list[float]] = {
        k: [] for k in ("baseline", "floor parse", "floor load", "floor parse + load", "elopipe ingest")
    }
    for _ in range(max(1, args.rounds)):
        _round(path, spent)
    load = os.getloadavg()[0]
    print(f"input: {path.name}, {games:,} games; {args.rounds} rounds, load average {load:.1f} at the end")
    base = statistics.median(spent["baseline"])
    print(f"{'measurement':22} {'cpu s (median)':>15} {'games/cpu-s':>12} {'vs baseline':>12}")
    for label, runs in spent.items():
        cpu = statistics.median(runs)
        print(f"{label:22} {cpu:15.2f} {games / cpu:12,.0f} {base / cpu:11.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
