"""Benchmark: a player page's rating chart, matplotlib's PNG against the SVG drawn from a template
(issue 27 item 3, "make charts cheap").

Opens a rated store read-only (`--db`, e.g. the store `bench/publish_run.py --keep` leaves, or
the 3-month federation store after `bench/publish_watch.py`), takes the players a publish draws
(`outputs.top_players` of the `--lists` latest lists of `--system`), reads each one's chart
series once (`history.player_series`), then draws every chart as PNG (matplotlib, Agg) and as SVG
(`chart_svg`), `--rounds` times each, interleaved. Reported per chart: CPU milliseconds (this
process's, `time.process_time`: the drawing holds Python's interpreter lock, so CPU is what one
core pays) and bytes, and the ratio SVG / PNG. The first PNG (matplotlib's import and font cache)
is drawn before the clock starts.

Usage: ``.venv/bin/python bench/publish_chart.py --db STORE [--system fide] [--lists 3] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import time

from elopipe.publish.charts import render_series
from elopipe.publish.history import player_series
from elopipe.publish.lists import list_dates
from elopipe.publish.outputs import top_players
from elopipe.store.connect import open_reader


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--system", default="fide")
    ap.add_argument("--lists", type=int, default=3, help="the players of this many latest lists")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with open_reader(args.db) as con:
        dates = list_dates(con, args.system)[-args.lists :]
        players = top_players(con, args.system, dates)
        series = [s for pid in players if (s := player_series(con, pid, args.system)) is not None]
    if not series:
        raise SystemExit(f"no chart to draw for {args.system} in {args.db}")
    render_series([series[0]], "warm-up", "png")
    cpu = {"png": 0.0, "svg": 0.0}
    size = {"png": 0, "svg": 0}
    for _ in range(args.rounds):
        for fmt in ("png", "svg"):
            start = time.process_time()
            for s in series:
                size[fmt] += len(render_series([s], "chart", fmt).data)
            cpu[fmt] += time.process_time() - start
    n = args.rounds * len(series)
    print(f"{len(series)} charts ({args.system}, {len(dates)} lists) x {args.rounds} rounds")
    print(f"{'format':<6} {'CPU-ms/chart':>13} {'KB/chart':>9}")
    for fmt in ("png", "svg"):
        print(f"{fmt:<6} {1000 * cpu[fmt] / n:>13.1f} {size[fmt] / n / 1024:>9.1f}")
    print(f"svg / png CPU: {cpu['svg'] / cpu['png']:.3f}")


if __name__ == "__main__":
    main()
