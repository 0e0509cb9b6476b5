"""Where the tests find the repository, its samples and the shared data (`../shared` beside the repo)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLE_PGN = REPO / "sample_pgn"
SHARED_DATA = REPO.parent / "shared" / "data"
GOLDEN = REPO / "tests" / "golden"
