"""Progress lines of long work off a terminal (`publish fide [####----] 30/168 lists, ...`), and the
keep-alive line of a step quiet for a while (`publish: fide (still working, 0m 05s)`,
`elopipe.cli.commands.live_status`): status lines, not summaries; tests that count a command's
lines leave them out."""

import re

_BAR = re.compile(r"\[[#-]+\] \d[\d,]*/\d[\d,]* ")
_KEEP_ALIVE = re.compile(r"still working(, | \()\d+m \d\ds\)$")


def is_progress(line: str) -> bool:
    """Whether `line` is a progress line (a text bar with its count) or a keep-alive line."""
    return _BAR.search(line) is not None or _KEEP_ALIVE.search(line) is not None
