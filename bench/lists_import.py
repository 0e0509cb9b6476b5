"""Benchmark: importing a FIDE-sized official list (issue 7).

Generates a synthetic combined list in FIDE's fixed-width layout (``players_list_foa.txt``:
1.9M lines by default, about 40 % with a standard, rapid or blitz rating, like the real file)
into ``bench/_data/`` (git-ignored), then times `elopipe.official.list_import.import_list` into a fresh
DuckDB store. A baseline in the same run: DuckDB reading the same file as raw lines (the I/O
floor), so the printed ratio does not depend on the machine.

Usage: ``.venv/bin/python bench/lists_import.py [--rows N] [--keep]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np

from elopipe.official.list_import import import_list
from elopipe.store.connect import open_writer

DATA = Path(__file__).resolve().parent / "_data"

# (label, width) of FIDE's combined TXT; the header labels start each column
FIDE_FOA_LAYOUT = [
    ("ID Number", 15),
    ("Name", 61),
    ("Fed", 4),
    ("Sex", 4),
    ("Tit", 5),
    ("WTit", 5),
    ("OTit", 15),
    ("FOA", 4),
    ("SRtng", 6),
    ("SGm", 4),
    ("SK", 3),
    ("RRtng", 6),
    ("RGm", 4),
    ("Rk", 3),
    ("BRtng", 6),
    ("BGm", 4),
    ("BK", 3),
    ("B-day", 6),
    ("Flag", 4),
]


def fixed_width(values: list[str], layout: list[tuple[str, int]] = FIDE_FOA_LAYOUT) -> str:
    """One line of FIDE's fixed-width layout (values left-aligned in their column)."""
    return "".join(v.ljust(w)[:w] for v, (_, w) in zip(values, layout, strict=True)).rstrip()


def generate(path: Path, rows: int, seed: int = 7) -> None:
    """Write a synthetic combined FIDE list of `rows` players (vectorised with NumPy)."""
    rng = np.random.default_rng(seed)
    ids = np.arange(1_000_000, 1_000_000 + rows)
    feds = np.array(["FRA", "GER", "ESP", "IND", "RUS", "USA", "POL", "ITA"])[rng.integers(0, 8, rows)]
    sex = np.where(rng.random(rows) < 0.15, "F", "M")
    has_s = rng.random(rows) < 0.27
    has_r = rng.random(rows) < 0.25
    has_b = rng.random(rows) < 0.23
    rs = np.where(has_s, rng.integers(1400, 2800, rows), 0)
    rr = np.where(has_r, rng.integers(1400, 2800, rows), 0)
    rb = np.where(has_b, rng.integers(1400, 2800, rows), 0)
    ks = np.where(rs >= 2400, 10, np.where(rng.random(rows) < 0.2, 40, 20))
    by = rng.integers(1940, 2018, rows)
    header = fixed_width([lab for lab, _ in FIDE_FOA_LAYOUT])
    with open(path, "w", encoding="latin-1", newline="\n") as fh:
        fh.write(header + "\n")
        for i in range(rows):
            vals = [
                str(ids[i]),
                f"Player{i % 99991}, Name{i % 7919}",
                str(feds[i]),
                str(sex[i]),
                "GM" if rs[i] > 2600 else "",
                "",
                "",
                "",
                str(rs[i]) if rs[i] else "",
                "0" if rs[i] else "",
                str(ks[i]) if rs[i] else "",
                str(rr[i]) if rr[i] else "",
                "0" if rr[i] else "",
                "20" if rr[i] else "",
                str(rb[i]) if rb[i] else "",
                "0" if rb[i] else "",
                "20" if rb[i] else "",
                str(by[i]),
                "i" if i % 3 == 0 else "",
            ]
            fh.write(fixed_width(vals) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_900_000)
    ap.add_argument("--keep", action="store_true", help="keep the generated file for the next run")
    args = ap.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    src = DATA / f"players_list_foa_{args.rows}.txt"
    if not src.exists():
        t0 = time.perf_counter()
        generate(src, args.rows)
        print(f"generated {src.name}: {args.rows:,} rows in {time.perf_counter() - t0:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        t0, c0 = time.perf_counter(), time.process_time()
        n = (
            duckdb.connect()
            .execute(
                f"SELECT count(*) FROM read_csv('{src}', columns={{'line': 'VARCHAR'}}, delim=chr(31),"
                " header=false, quote='', escape='', encoding='latin-1', auto_detect=false)"
            )
            .fetchall()[0][0]
        )
        base, base_cpu = time.perf_counter() - t0, time.process_time() - c0
        with open_writer(Path(tmp) / "bench.duckdb") as con:
            t0, c0 = time.perf_counter(), time.process_time()
            res = import_list(con, src, "fide", dt.date(2026, 11, 1))
            took, cpu = time.perf_counter() - t0, time.process_time() - c0
            # the next month's list: every player is known, only linking and rows
            t0, c0 = time.perf_counter(), time.process_time()
            import_list(con, src, "fide", dt.date(2026, 12, 1))
            took2, cpu2 = time.perf_counter() - t0, time.process_time() - c0
    print(f"baseline: read {n:,} raw lines in {base:.2f} s (CPU {base_cpu:.2f} s, all threads)")
    print(
        f"import_list: {sum(res.rows.values()):,} list rows {res.rows}, {res.players_created:,} players created"
        f" in {took:.2f} s, CPU {cpu:.2f} s ({took / base:.1f}x the raw read; {n / took:,.0f} lines/s)"
    )
    print(f"next list (players known): {took2:.2f} s, CPU {cpu2:.2f} s ({took2 / base:.1f}x the raw read)")
    if not args.keep:
        src.unlink()


if __name__ == "__main__":
    main()
