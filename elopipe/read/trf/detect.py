"""Is this text a TRF, and is this line a column ruler? (trf-format.md §2.) Read before any record."""

from __future__ import annotations

import re

from elopipe.read.trf.fields import digits

__all__ = ["has_capital_runs", "is_ruler_line", "looks_like_trf"]

_CAPITAL_RUN = re.compile(r"([A-Z])\1{3,}")
_RUN = re.compile(r"([A-Z0-9])\1{2,}")


def is_ruler_line(line: str, capital_runs: bool = True) -> bool:
    """True for the column rulers some writers put between records (trf-format.md §2).

    Caught: digit cycles ('0123456789...' which starts like tag 012, '123456...'), tens rulers
    ('         1         2 ...'), and letter rulers ('DDD SSSS sTTT NNNN...', 'AAA MMMM ...',
    'UUU MMMM GGGG 111 222 ...': three equal capitals then a blank). `capital_runs` False: the
    caller knows the line holds no run of four equal capitals (`has_capital_runs` of its file
    found none), and the search for them is skipped.
    """
    s = line.rstrip()
    if not s:
        return False
    if digits(s) and len(s) >= 10:
        return all(int(b) == (int(a) + 1) % 10 for a, b in zip(s, s[1:], strict=False))
    if s[0] == " ":
        tokens = s.split()
        if tokens and all(digits(t) for t in tokens):
            nums = [int(t) for t in tokens]
            return len(nums) >= 2 and all(b == a + 1 for a, b in zip(nums, nums[1:], strict=False))
    if len(s) >= 4 and s[0].isalpha() and s[0].isupper() and s[0] == s[1] == s[2] and s[3] == " ":
        return True
    # other letter rulers ('    SSSS sTTT NNNN...'): mostly runs of 3+ equal capitals or digits
    if capital_runs and _CAPITAL_RUN.search(s):
        in_runs = sum(len(m.group()) for m in _RUN.finditer(s))
        return in_runs >= 0.6 * len(s.replace(" ", ""))
    return False


def has_capital_runs(text: str) -> bool:
    """Whether `text` holds a run of four equal capitals, which no line break interrupts: when a
    file holds none, none of its lines does, with blanks for control characters or without its
    trailing tabs (`is_ruler_line(line, capital_runs=False)` for each)."""
    return _CAPITAL_RUN.search(text) is not None


def looks_like_trf(text: str) -> bool:
    """Content sniffing for `.txt` files: a `001` player row with a start rank in cols 5-8,
    or at least two TRF header records (012, 022, ..., XXR) at line starts.
    Pipe-separated Vega `.tdf` rows are not TRF."""
    headers = 0
    for line in text.lstrip("\ufeff").split("\n")[:5000]:
        rec = line[:4]
        if rec == "001 " and digits(line[4:8].strip()) and "|" not in line:
            return True
        if rec in ("012 ", "022 ", "032 ", "042 ", "052 ", "092 ", "102 ", "XXR ", "XXC "):
            headers += 1
            if headers >= 2:
                return True
    return False
