"""Progress lines of long work off a terminal (`publish fide [####----] 30/168 lists, ...`), and the
keep-alive line of a step quiet for a while (`publish: fide (still working, 0m 05s)`,
`elopipe.cli.commands.live_status`): status lines, not summaries; tests that count a command's
lines leave them out."""

import re
from pathlib import Path

_BAR = re.compile(r"\[[#-]+\] \d[\d,]*/\d[\d,]* ")
_KEEP_ALIVE = re.compile(r"still working(, | \()\d+m \d\ds\)$")


def is_progress(line: str) -> bool:
    """Whether `line` is a progress line (a text bar with its count) or a keep-alive line."""
    return _BAR.search(line) is not None or _KEEP_ALIVE.search(line) is not None


def rated_store(folder: Path) -> Path:
    """A store in `folder` of two real TRF events (Bunratty 2011, ../shared/data) rated under FIDE
    rules: enough lists and reports for a publish or `report --all` to show its progress."""
    from tests.helpers.ingested import rated
    from tests.helpers.paths import SHARED_DATA

    files = [
        SHARED_DATA / "trf" / "irl_bunratty_masters_2011_crlf.trf",
        SHARED_DATA / "trf" / "irl_bunratty_major_2011_crlf.trf",
    ]
    rated(folder / "s.duckdb", [files], "fide")
    return folder / "s.duckdb"
