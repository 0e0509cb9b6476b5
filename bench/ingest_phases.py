"""Where the CPU of one ingest goes: the CPU seconds of each step of `ingest_paths`.

Ingests one file or folder (by default the PGN bench file of ``bench/ingest.py``, built there)
once, into a fresh store or into a copy of ``--store`` (the original is never opened), with the
steps below wrapped to add up the process's CPU seconds (every thread's: Polars' and DuckDB's,
and the reader's background threads while the step runs) spent inside each. Steps nest
(``consolidate`` holds ``same_game_pairs``; ``load_batch`` holds ``_load`` and the batch's
COMMIT), so the column does not add up to the total; "other" is the total less the parse and
the load.

Usage: ``.venv/bin/python bench/ingest_phases.py [PATH] [--cache DIR] [--store STORE]``. A FIDE
month of TRF over the months before it (issue 27, item 5): PATH
``bench/_data/federation/scale1_seed1_v3/m04``, STORE a store of months 1-3 (``bench/federation.py
--keep``).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import DATA, build_input  # noqa: E402

STEPS = {
    "elopipe.ingest.execution": ["parse_source"],
    "elopipe.read.trf.reader": ["read_trf"],
    "elopipe.read.game_frame": ["build_frames"],
    "elopipe.ingest.loader": ["load_batch", "_load"],
    "elopipe.ingest.ledger": ["plan"],
    "elopipe.ingest.segments": ["_resolve_segment", "_insert_games"],
    "elopipe.store.write": ["insert"],
    "elopipe.identity.consolidate": ["consolidate"],
    "elopipe.identity.same_game": ["same_game_pairs"],
    "elopipe.identity.dedup": ["relink_tournaments"],
    "elopipe.identity.events": ["join_events"],
    "elopipe.identity.decisions": ["refresh_display_names", "merge_into"],
    "elopipe.identity.facts": ["refresh_player_facts"],
}


def _wrap(spent: Counter[str], module: str, name: str) -> None:
    mod = importlib.import_module(module)
    fn: Callable[..., Any] = getattr(mod, name)

    @functools.wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[name] += time.process_time() - start

    setattr(mod, name, timed)
    # the modules that imported it by name call their own reference
    for other in list(sys.modules.values()):
        if getattr(other, "__name__", "").startswith("elopipe.") and getattr(other, name, None) is fn:
            setattr(other, name, timed)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", type=Path, help="a file or folder (default: the bench file of bench/ingest.py)")
    ap.add_argument("--cache", type=Path, default=DATA, help="folder of bench/ingest.py's built input")
    ap.add_argument("--store", type=Path, help="ingest into a copy of this store (default: a new store)")
    args = ap.parse_args()
    path = args.file or build_input(100_000, args.cache)[0]
    import elopipe.read.trf.reader  # noqa: F401  # what the ingest imports, before the clock starts
    from elopipe.ingest.driver import ingest_paths

    spent: Counter[str] = Counter()
    for module, names in STEPS.items():
        for name in names:
            _wrap(spent, module, name)
    with tempfile.TemporaryDirectory(prefix="elopipe-bench-") as tmp:
        db = Path(tmp) / "bench.duckdb"
        if args.store is not None:
            shutil.copy(args.store, db)
        start = time.process_time()
        summary = ingest_paths([path], db)
        total = time.process_time() - start
    print(f"{path.name}: {summary.games:,} games, {total:.2f} CPU-s, {summary.games / total:,.0f} games/CPU-s")
    other = total - spent["parse_source"] - spent["load_batch"]
    for name, cpu in [*spent.most_common(), ("other (open, schema, driver)", other)]:
        print(f"{cpu:8.2f}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
