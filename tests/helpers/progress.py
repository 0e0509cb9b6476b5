"""Progress lines of long work off a terminal (`publish fide [####----] 30/168 lists, ...`): status
lines, not summaries; tests that count a command's lines leave them out."""

import re

_BAR = re.compile(r"\[[#-]+\] \d[\d,]*/\d[\d,]* ")


def is_progress(line: str) -> bool:
    """Whether `line` is a progress line (a text bar with its count)."""
    return _BAR.search(line) is not None
