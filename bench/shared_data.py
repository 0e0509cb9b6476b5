"""Where the benchmarks read the project's shared data (real PGN and TRF files).

``../shared/data`` beside the checkout, as CI lays it out, or the folder ``ELOPIPE_SHARED_DATA``
names. A benchmark that needs it and does not find it stops with one line saying so (it raised
FileNotFoundError from deep inside its set-up).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def shared_data(*parts: str) -> Path:
    """The shared data folder, or a path under it (`parts`); exits with one line when it is not there."""
    base = Path(os.environ.get("ELOPIPE_SHARED_DATA") or ROOT.parent / "shared" / "data")
    path = base.joinpath(*parts)
    if not path.exists():
        sys.exit(
            f"{path} is not there: the benchmarks read the project's shared data, ../shared/data beside the"
            " checkout (or set ELOPIPE_SHARED_DATA to its folder)"
        )
    return path
