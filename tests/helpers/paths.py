"""Where the tests find the repository, its samples and the shared data (`../shared` beside the repo)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLE_PGN = REPO / "sample_pgn"
# constructed files the tests need and the demo must not publish (see tests/data/SOURCES.md)
TEST_DATA = REPO / "tests" / "data"
# resolved: the store records a file by its real path, and ../shared may be a symbolic link
SHARED_DATA = (REPO.parent / "shared" / "data").resolve()
GOLDEN = REPO / "tests" / "golden"
