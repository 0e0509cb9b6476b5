"""Benchmark: incremental rating and the memory of a whole history (issue 27, items 1 and 2).

On the federation workload of ``bench/federation.py`` (generated and cached by
``bench/federation_data.py``; run ``bench/federation.py --generate-only --months N`` first), an
ingested store of `--months` months is built once and kept (``--work DIR``: ``ingested.duckdb``,
never rated, reused by later runs). Then, each step an ``elopipe`` subprocess measured as in
``bench/federation.py`` (CPU seconds of the process and its children, peak RSS):

- ``scratch``: ``rate --system S`` on a copy of the ingested store (no list stored yet);
- ``again``: ``rate --system S`` on that store, nothing new: goal <= 10 % of ``scratch``;
- ``new TRF``: ``ingest`` of one new 100-player TRF (dated after the last month), then
  ``rate --system S``: goal (ingest + rate) <= 25 % of ``scratch``.

Every ratio is against the ``scratch`` of the same run. With ``--compiled``, every step runs
elopipe's own modules from bytecode compiled beforehand, as an installed elopipe has them (and any
machine after elopipe's first start): the package the steps import is copied to
``WORK/bytecode/elopipe``, compiled there (`compileall`) and put first on their ``PYTHONPATH``; the
checkout is not written, and a ``WORK/bytecode`` the bench did not make is left alone (it stops).
Without it, on a machine that sets ``PYTHONDONTWRITEBYTECODE`` (as the
benchmark machine does) each process compiles elopipe's modules again, about 0.07 CPU-s of every
``ingest`` and ``rate``. The summary says which. With ``--scratch-only``, only the first
step runs (the memory comparison of 3, 6 and 12 months: peak RSS and CPU-s of a from-scratch
re-rate, extrapolated linearly in games to a 25M-game history); the kept ingested store is then
enough, the months' files need not be generated here, and the games counted are its played games.

Usage: ``.venv/bin/python bench/rate_incremental.py --work /tmp/x [--months 3] [--scale 1]
[--system fide] [--scratch-only] [--compiled]``. To measure another checkout with this environment, run it
with ``PYTHONPATH=/path/to/checkout`` from a directory outside this checkout (every subprocess
imports elopipe from there). Not a timed test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import federation as fed  # noqa: E402
import federation_data as fd  # noqa: E402

MB = 1_000_000
HISTORY_GAMES = 25_000_000


def _played_games(db: Path) -> int:
    """The played games of the store `db` (what the months' metadata count as games), read-only."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        return int(con.execute("SELECT count(*) FROM canonical_games WHERE played").fetchall()[0][0])


_STAMP = ".rate-incremental-bytecode"


def _compiled_copy(work: Path) -> Path:
    """Copy the elopipe package the steps import (this interpreter, this environment's
    PYTHONPATH, from `work`) to ``work/bytecode/elopipe`` and compile it there; returns the
    folder to put first on PYTHONPATH."""
    where = subprocess.run(
        [sys.executable, "-c", "import elopipe, os; print(os.path.dirname(elopipe.__file__))"],
        cwd=work, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    root = work / "bytecode"
    stamp = root / _STAMP
    if root.exists() or root.is_symlink():
        if not stamp.is_file() or root.is_symlink():
            raise SystemExit(f"{root} is not a copy this bench made (no {_STAMP} in it): use another --work")
        shutil.rmtree(root)  # the bench's own copy, made again from the checkout
    shutil.copytree(where, root / "elopipe", ignore=shutil.ignore_patterns("__pycache__"))
    stamp.write_text("made by bench/rate_incremental.py --compiled; removed and made again by its next run\n")
    if not compileall.compile_dir(root / "elopipe", quiet=1):
        raise SystemExit(f"could not compile {root / 'elopipe'}")
    return root


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True, help="folder of the kept ingested store")
    ap.add_argument("--months", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--system", default="fide")
    ap.add_argument("--scratch-only", action="store_true", help="only the from-scratch re-rate")
    ap.add_argument("--compiled", action="store_true", help="elopipe's modules run from compiled bytecode")
    args = ap.parse_args()
    work = fd.Workload(args.scale, args.seed)
    cli = [sys.executable, "-c", fd.CLI]
    args.work.mkdir(parents=True, exist_ok=True)
    tag = f"s{args.scale:g}_m{args.months}"
    ingested = args.work / f"ingested_{tag}.duckdb"
    # a kept ingested store is enough for --scratch-only: the months' files need not be here
    for m in range(1, args.months + 1):
        if work.month_meta(m) is None and not (args.scratch_only and ingested.exists()):
            ap.error(f"month {m} is not generated: run bench/federation.py --generate-only --months {args.months}")
    if not ingested.exists():
        part = args.work / f"ingesting_{tag}.duckdb"
        part.unlink(missing_ok=True)
        # the store of the most months already ingested, when there is one, and the months after it
        have = [
            m for m in range(args.months - 1, 0, -1) if (args.work / f"ingested_s{args.scale:g}_m{m}.duckdb").exists()
        ]
        if have:
            shutil.copyfile(args.work / f"ingested_s{args.scale:g}_m{have[0]}.duckdb", part)
        for m in range(have[0] + 1 if have else 1, args.months + 1):
            run = fed.measure(f"ingest month {m}", [*cli, "ingest", "-q", str(work.month_dir(m)), "--db", str(part)],
                              args.work)  # fmt: skip
            print(f"  ingest month {m}: {run.cpu:.1f} CPU-s; {run.last_line}", flush=True)
        part.rename(ingested)
    games = _played_games(ingested)
    bytecode = "compiled beforehand (--compiled)" if args.compiled else _bytecode_condition()
    if args.compiled:
        # every measured subprocess inherits it
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(_compiled_copy(args.work)), os.environ.get("PYTHONPATH")) if p
        )
    db = args.work / f"rated_{tag}_{args.system}.duckdb"
    shutil.copyfile(ingested, db)
    rate = [*cli, "rate", "--system", args.system, "--db", str(db)]
    load0 = fed._load()
    scratch = fed.measure("scratch", rate, args.work)
    runs = [scratch]
    if not args.scratch_only:
        runs.append(fed.measure("again (nothing new)", rate, args.work))
        extra = sorted(work.extra_dir(args.months).glob("*.trf"))
        if not extra:
            ap.error(f"no extra TRF in {work.extra_dir(args.months)}: run bench/federation.py --months {args.months}")
        runs.append(fed.measure("new TRF: ingest", [*cli, "ingest", "-q", str(extra[0]), "--db", str(db)], args.work))
        runs.append(fed.measure("new TRF: rate", rate, args.work))
    print(f"{args.months} months at scale {args.scale:g}: {games:,} played games; rate --system {args.system}")
    print(f"elopipe's bytecode: {bytecode}")
    print(f"{'step':24} {'wall s':>7} {'CPU s':>7} {'/ scratch':>9} {'RSS MB':>7} {'tree MB':>7} {'exit':>4}")
    for run in runs:
        print(
            f"{run.label:24} {run.wall:7.2f} {run.cpu:7.2f} {run.cpu / scratch.cpu:9.1%} "
            f"{run.maxrss / MB:7.0f} {run.tree_rss / MB:7.0f} {run.rc:4}"
        )
        if run.rc:
            print(run.out[-2000:])
    if not args.scratch_only:
        again, ing, new = runs[1:]
        print(f"nothing new / scratch (CPU): {again.cpu / scratch.cpu:.1%}  (goal <= 10%)")
        print(f"new TRF ingest + rate / scratch (CPU): {(ing.cpu + new.cpu) / scratch.cpu:.1%}  (goal <= 25%)")
    per_game = scratch.cpu / games
    rss = max(scratch.maxrss, scratch.tree_rss)
    print(f"scratch: {per_game * 1e6:.1f} CPU-µs and {rss / games:.0f} peak-RSS bytes per game; "
          f"{HISTORY_GAMES / 1e6:.0f}M games at this rate: {per_game * HISTORY_GAMES:.0f} CPU-s")  # fmt: skip
    print(f"load average {load0} at start, {fed._load()} at end")
    return 0


def _bytecode_condition() -> str:
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return "compiled again by every process (PYTHONDONTWRITEBYTECODE is set; see --compiled)"
    return "as found (Python writes __pycache__ on a first start; see --compiled)"


if __name__ == "__main__":
    raise SystemExit(main())
