"""Benchmark: where a from-scratch ``rate --system fide`` spends its memory and CPU, by phase (issue 27, item 2).

Runs `elopipe.rating.run.rate` in this process on a copy of an ingested store (``--db``, never
written: the copy goes to ``--work``) and wraps the phases of `elopipe.rating.fide.run.rate_fide`:
``load_inputs`` (the store's frames), ``_compute`` (prepare + every period + the store's columns),
``period_digests``, ``_summarise``, ``_lists_that_differ``, ``result_tables.write_results``,
``save_skips``, ``save_rate_of_play`` and ``norms_store.refresh`` (the title norms); in a run in
windows of periods (`elopipe.rating.fide.windows`), ``store_io.load_games`` and
``load_tournament_players`` (a window's inputs), ``windows._compute`` (prepare + the window's
periods), ``checkpoint.save`` and ``resume.summary_from_store``; ``event_inputs.digests`` (the
events' digests, one pass over the games, where the checkout has it). For each phase (the calls of
a phase made once a window on one line): the resident set (VmRSS) before its first call and after its
last, the process's peak (VmHWM) after it and the CPU seconds of this process
(`time.process_time`) it took. The phase that raised the peak is the
one to bound; the last line gives the peak and CPU-s per game against the run's own total.

Tracemalloc sees no Polars or DuckDB buffer, hence /proc. The figures of `bench/rate_incremental.py
--scratch-only` (a subprocess, its peak RSS) are the ones to compare between checkouts; this one
says which phase makes them.

Usage: ``.venv/bin/python bench/rate_phases.py --db INGESTED.duckdb --work /tmp/x [--system fide]``.
Not a timed test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MB = 1024  # /proc gives kB


def _status() -> tuple[int, int]:
    """(VmRSS, VmHWM) of this process in MB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{os.getpid()}/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) // MB, int(fields["VmHWM"].split()[0]) // MB


def _wrap(module: Any, name: str, rows: list[tuple[str, int, int, int, float]]) -> None:
    func: Callable[..., Any] = getattr(module, name)

    @functools.wraps(func)
    def timed(*args: Any, **kwargs: Any) -> Any:
        before, c0 = _status()[0], time.process_time()
        out = func(*args, **kwargs)
        after, peak = _status()
        rows.append((f"{module.__name__.rsplit('.', 1)[-1]}.{name}", before, after, peak, time.process_time() - c0))
        return out

    setattr(module, name, timed)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, required=True, help="an ingested store (read, never written)")
    ap.add_argument("--work", type=Path, required=True, help="folder of the rated copy")
    ap.add_argument("--system", default="fide")
    args = ap.parse_args()

    from elopipe.rating import result_tables, store_io
    from elopipe.rating.fide import checkpoint, norms_store, resume
    from elopipe.rating.fide import run as fide_run
    from elopipe.rating.run import rate
    from elopipe.store.connect import open_writer

    rows: list[tuple[str, int, int, int, float]] = []
    for name in ("load_inputs", "_compute", "period_digests", "_summarise", "_lists_that_differ"):
        _wrap(fide_run, name, rows)
    for name in ("write_results", "save_skips", "save_rate_of_play"):
        _wrap(result_tables, name, rows)
    for name in ("load_games", "load_tournament_players"):
        _wrap(store_io, name, rows)
    _wrap(norms_store, "refresh", rows)
    _wrap(checkpoint, "save", rows)
    _wrap(resume, "plan", rows)
    try:  # the one pass over the games that digests each event (issue 27), in a checkout that has it
        from elopipe.rating import event_inputs
    except ImportError:
        pass
    else:
        _wrap(event_inputs, "digests", rows)
    try:  # a run in windows of periods (issue 27): its engine step, once a window
        from elopipe.rating.fide import windows
    except ImportError:  # a checkout before it
        pass
    else:
        _wrap(windows, "_compute", rows)
        _wrap(resume, "summary_from_store", rows)

    args.work.mkdir(parents=True, exist_ok=True)
    db = args.work / f"phases_{args.system}.duckdb"
    shutil.copyfile(args.db, db)
    start, c0 = _status()[0], time.process_time()
    with open_writer(db) as con:
        games = con.execute("SELECT count(*) FROM canonical_games").fetchall()[0][0]
        rate(con, args.system)
    cpu = time.process_time() - c0
    peak = _status()[1]
    print(f"rate --system {args.system} from scratch, {games:,} games; RSS at start {start} MB")
    print(f"{'phase (calls)':32} {'RSS before':>10} {'after':>7} {'peak':>7} {'CPU s':>7} {'CPU %':>6}")
    # a phase called once a window is one line: RSS before its first call, after its last
    phases: dict[str, list[Any]] = {}
    for label, before, after, top, secs in rows:
        seen = phases.setdefault(label, [0, before, after, top, 0.0])
        seen[0] += 1
        seen[2], seen[3], seen[4] = after, max(seen[3], top), seen[4] + secs
    for label, (calls, before, after, top, secs) in phases.items():
        print(f"{f'{label} ({calls})':32} {before:10} {after:7} {top:7} {secs:7.2f} {secs / cpu:6.1%}")
    print(f"whole: peak {peak} MB ({peak * 1024 * 1024 / max(games, 1):.0f} bytes per game), {cpu:.2f} CPU-s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
