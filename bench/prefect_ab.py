"""Benchmark: Prefect's share of a warm `elopipe run`, two builds of elopipe interleaved.

On a shared machine one run's CPU seconds swing by a second or more with the load, so a change
to Prefect's share is measured back to back: each round runs the library alone (the baseline of
bench/prefect_overhead.py) and `elopipe run` with each variant, in a fresh store, alternating
the order between rounds. A variant is `NAME=COMMAND` (COMMAND: an `elopipe` executable; `NAME=`
alone: this checkout's), and `--env NAME:KEY=VALUE` sets a variable for one variant (a Prefect
setting, say). It prints each variant's median CPU seconds (the command and its children, the
temporary Prefect server included), its ratio to the baseline's median, and the median wall time.

To compare with an earlier commit, run that commit's code with this checkout's packages::

    git archive OLD elopipe flows | tar -x -C /tmp/old
    python3.11 -m venv /tmp/old-venv
    echo /tmp/old > /tmp/old-venv/lib/python3.11/site-packages/00old.pth
    echo $PWD/.venv/lib/python3.11/site-packages > /tmp/old-venv/lib/python3.11/site-packages/zz.pth
    printf '#!/bin/sh\\nexec /tmp/old-venv/bin/python -m elopipe.cli.main "$@"\\n' > /tmp/old-elopipe
    chmod +x /tmp/old-elopipe
    .venv/bin/python bench/prefect_ab.py --rounds 6 before=/tmp/old-elopipe after=

Usage: ``.venv/bin/python bench/prefect_ab.py [--rounds N] [--path PATH]... NAME=[COMMAND]...``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from prefect_overhead import BASELINE, ELOPIPE, ROOT  # noqa: E402


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(CPU seconds of the command and its children, wall seconds)."""
    cpu, start = _cpu(), time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        sys.exit(f"{cmd[:2]} failed ({proc.returncode}):\n{(proc.stdout + proc.stderr)[-3000:]}")
    return _cpu() - cpu, time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variants", nargs="+", help="NAME=COMMAND, or NAME= for this checkout's elopipe")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--path", action="append", help="a file or folder to run on (default: sample_pgn/)")
    ap.add_argument("--env", action="append", default=[], help="NAME:KEY=VALUE, for one variant")
    args = ap.parse_args()
    commands = {name: cmd or ELOPIPE for name, _, cmd in (v.partition("=") for v in args.variants)}
    extra: dict[str, dict[str, str]] = {name: {} for name in commands}
    for spec in args.env:
        name, _, kv = spec.partition(":")
        key, _, value = kv.partition("=")
        extra[name][key] = value
    paths = [str(Path(p).resolve()) for p in args.path or [ROOT / "sample_pgn"]]

    with tempfile.TemporaryDirectory(prefix="elopipe-bench-prefect-ab-") as tmp:
        work = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "PREFECT_PROFILE")}
        env["PREFECT_HOME"] = str(work / "prefect-home")
        # a warm home: the first run creates Prefect's database (not measured), and writes the
        # byte code a user's first run leaves, even where PYTHONDONTWRITEBYTECODE is set: the
        # modules beartype rewrites at import (py-key-value's, in the server) are cached under
        # their own tag, which no install compiles; without it every server start rewrites them
        # (about 0.1-0.2 CPU-s of each round)
        warm = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
        _timed([ELOPIPE, "run", *paths[:1], "--db", str(work / "w.duckdb"), "--out", str(work / "w")], warm, work)
        cpu: dict[str, list[float]] = {name: [] for name in ["baseline", *commands]}
        wall: dict[str, list[float]] = {name: [] for name in cpu}
        for r in range(args.rounds):
            order = ["baseline", *commands] if r % 2 == 0 else [*reversed(commands), "baseline"]
            for name in order:
                db, out = work / f"{r}-{name}.duckdb", work / f"{r}-{name}"
                if name == "baseline":
                    c, w = _timed([sys.executable, "-c", BASELINE, str(db), str(out), *paths], env, ROOT)
                else:
                    cmd = [commands[name], "run", *paths, "--db", str(db), "--out", str(out)]
                    c, w = _timed(cmd, {**env, **extra[name]}, work)
                cpu[name].append(c)
                wall[name].append(w)
                print(f"round {r} {name:12} {c:6.2f} CPU s {w:6.1f} s  load {os.getloadavg()[0]:.1f}", flush=True)
                shutil.rmtree(out, ignore_errors=True)
        base = statistics.median(cpu["baseline"])
        for name in cpu:
            median = statistics.median(cpu[name])
            print(
                f"{name:12} median {median:6.2f} CPU s, {median / base:.2f}x the baseline's CPU, "
                f"{median - base:+.2f} CPU s; median wall {statistics.median(wall[name]):5.1f} s"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
