"""Benchmark: peak memory of ``elopipe ingest`` on large files (issue 12, item 8).

Builds three inputs in ``bench/_data/memory/`` (git-ignored, cached):

- a ~139 MB PGN and a ~417 MB PGN: the real files of ``../shared/data/pgn`` concatenated (as
  ``bench/ingest.py`` does: decoded, written as UTF-8 with LF line ends) as many times as needed;
- a gzip bomb: a small ``.pgn.gz`` that holds ~510 MB of PGN (one real tournament repeated),
  under the default size cap of 512 MiB (``ELOPIPE_MAX_FILE_BYTES``);
- gzips of real games (issue 26, item 6), whose decompressed size only the stream tells: ``gz``,
  ~120 MB of the shared files concatenated (under the 128 MiB read whole, ``ELOPIPE_STREAM_BYTES``)
  as a ``.pgn.gz`` of about 37 MB; ``gz-results``, ~120 MB of the same games without their moves
  (a results export: three times the games a byte) as a ``.pgn.gz`` of about 11 MB.

Each is ingested into a fresh store by an ``elopipe ingest`` subprocess; the peak memory is the
maximum resident set size of that subprocess (``resource.getrusage(RUSAGE_CHILDREN)``, read in a
fresh helper process per measurement, since the figure is a maximum over all waited-for children).
It prints the peak, the ratio peak / decompressed size, the wall time and the ingest's summary.

Usage: ``.venv/bin/python bench/memory.py [--only 139mb,417mb,bomb,gz,gz-results]``. To measure another
checkout with the same environment: ``PYTHONPATH=/path/to/checkout .venv/bin/python bench/memory.py``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shared_data import shared_data  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "_data" / "memory"
# `elopipe` as the console script runs it, importable from PYTHONPATH (to measure another checkout)
ELOPIPE = [sys.executable, "-c", "from elopipe.cli.main import main; main()"]
MB = 1_000_000
BOMB_UNIT = "fide_candidates_2022_madrid_spain.pgn"  # 16 KB: repeats inside gzip's 32 KB window


def _concat_unit() -> bytes:
    from elopipe.read.textio import decode_bytes

    texts = []
    for p in sorted(p for p in shared_data("pgn").iterdir() if p.suffix.lower() == ".pgn"):
        texts.append(decode_bytes(p.read_bytes()).text.lstrip("\ufeff").strip("\n") + "\n\n")
    return "".join(texts).encode("utf-8")


def build_pgn(target_mb: int) -> Path:
    """A PGN of about `target_mb` MB: the shared files concatenated, repeated."""
    path = DATA / f"concat_{target_mb}mb.pgn"
    if not path.exists():
        unit = _concat_unit()
        DATA.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as fh:
            for _ in range(max(1, round(target_mb * MB / len(unit)))):
                fh.write(unit)
    return path


def build_bomb(target_mb: int = 510) -> Path:
    """A .pgn.gz holding about `target_mb` MB of PGN (under the default 512 MiB cap)."""
    path = DATA / f"bomb_{target_mb}mb.pgn.gz"
    if not path.exists():
        from elopipe.read.textio import decode_bytes

        unit = decode_bytes(shared_data("pgn", BOMB_UNIT).read_bytes()).text.strip("\n").encode("utf-8") + b"\n\n"
        DATA.mkdir(parents=True, exist_ok=True)
        with gzip.open(path, "wb", compresslevel=9) as fh:
            for _ in range(target_mb * MB // len(unit)):
                fh.write(unit)
    return path


def build_gz(target_mb: int = 120, results_only: bool = False) -> Path:
    """`build_pgn(target_mb)` gzipped; with `results_only`, about `target_mb` MB of its games
    with the result in place of the moves, gzipped."""
    path = DATA / (f"results_{target_mb}mb.pgn.gz" if results_only else f"concat_{target_mb}mb.pgn.gz")
    if path.exists():
        return path
    if not results_only:
        with build_pgn(target_mb).open("rb") as src, gzip.open(path, "wb", compresslevel=9) as dst:
            while block := src.read(1 << 24):
                dst.write(block)
        return path
    games = []
    for game in re.split(rb"\n(?=\[Event )", _concat_unit()):
        tags = [line for line in game.splitlines() if line.startswith(b"[")]
        result = next((t.split(b'"')[1] for t in tags if t.startswith(b"[Result ")), b"*")
        games.append(b"\n".join(tags) + b"\n\n" + result + b"\n\n")
    unit = b"".join(games)
    with gzip.open(path, "wb", compresslevel=9) as fh:
        for _ in range(max(1, round(target_mb * MB / len(unit)))):
            fh.write(unit)
    return path


def measure(path: Path) -> dict:
    """Run ``elopipe ingest`` on `path` in a fresh store; its peak RSS (bytes), seconds, summary."""
    with tempfile.TemporaryDirectory(prefix="elopipe-mem-") as tmp:
        t0 = time.perf_counter()
        proc = subprocess.run(
            [*ELOPIPE, "ingest", "--quiet", str(path), "--db", str(Path(tmp) / "m.duckdb")],
            cwd=tmp,
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # kilobytes on Linux
    return {"peak": peak, "seconds": elapsed, "rc": proc.returncode, "out": (proc.stdout + proc.stderr).strip()}


def _decompressed_size(path: Path) -> int:
    if path.suffix == ".gz":
        n = 0
        with gzip.open(path, "rb") as fh:
            while block := fh.read(1 << 24):
                n += len(block)
        return n
    return path.stat().st_size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--only", default="139mb,417mb,bomb,gz,gz-results", help="comma-separated: 139mb, 417mb, bomb, gz, gz-results"
    )
    ap.add_argument("--measure", help=argparse.SUPPRESS)  # internal: one measurement, in a fresh process
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.measure))))
        return 0
    builders = {
        "139mb": lambda: build_pgn(139),
        "417mb": lambda: build_pgn(417),
        "bomb": build_bomb,
        "gz": build_gz,
        "gz-results": lambda: build_gz(results_only=True),
    }
    print(f"{'input':32} {'on disk MB':>10} {'read MB':>8} {'peak MB':>8} {'peak/read':>9} {'wall s':>7}  result")
    for name in args.only.split(","):
        path = builders[name]()
        size = _decompressed_size(path)
        run = subprocess.run([sys.executable, __file__, "--measure", str(path)], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"{path.name:32} measurement failed: {run.stderr.strip()[-500:]}")
            continue
        m = json.loads(run.stdout)
        last = m["out"].splitlines()[-1] if m["out"] else f"exit {m['rc']}"
        print(
            f"{path.name:32} {path.stat().st_size / MB:10.1f} {size / MB:8.1f} {m['peak'] / MB:8.0f} "
            f"{m['peak'] / size:9.2f} {m['seconds']:7.1f}  {last}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
