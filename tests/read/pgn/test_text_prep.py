"""`text_prep.needs_fixes` (literal searches, and the glued-tag regex only on the tag sections a
literal prefilter keeps) finds exactly what the whole-text regexes it replaced found; and the
value rules' memo (`values.memoized_rules`) gives the rules' own results."""

import random
import re

import polars as pl
import pytest

from elopipe.read.pgn.text_prep import needs_fixes
from elopipe.read.pgn.values import VALUE_RULES, memoized_rules

# the patterns `needs_fixes` searched for, one regex each, before the literal searches
_PATTERNS = (
    "\ufeff",
    r"(?:^|\n)%",
    r"(?:^|\n)[ \t]+\[",  # any number of blanks: one only lost a game indented by two (hostile test)
    r'(?:1-0|0-1|1/2-1/2|\*)[ \t]*\[[A-Za-z][A-Za-z0-9_]*[ \t]*"',
)


def _by_regex(headers: list[str], movetexts: list[str]) -> bool:
    return any(re.search(p, s) for p in _PATTERNS for s in headers + movetexts)


def _columns(headers: list[str], movetexts: list[str]) -> tuple[pl.Series, pl.Series]:
    return pl.Series(headers, dtype=pl.String), pl.Series(movetexts, dtype=pl.String)


@pytest.mark.parametrize(
    ("header", "movetext", "expected"),
    [
        ('[Event "x"]\n', "1. e4 e5 1-0\n", False),
        ('[Event "x"]\n', "\ufeff1. e4 1-0", True),
        ('[Event "x"]\n', "%comment\n1. e4 1-0", True),
        ('[Event "x"]\n', "1. e4\n% escape\n1-0", True),
        ('[Event "x"]\n', "1. e4 % not at a line start 1-0", False),
        (' [Event "x"]\n', "1. e4 1-0", True),
        ('  [Event "x"]\n', "1. e4 1-0", True),
        ('[Event "x"]\n', '1. e4 1-0\n\t [Event "y"]\n', True),
        ('[Event "x"]\n\t[Site "y"]\n', "1. e4 1-0", True),
        ('[Event "x"]\n', '1. e4 1-0 [Event "y"]\n', True),
        ('[Event "x"] 1-0 [Site "y"]\n', "1. e4 1-0", True),
        ('[Event "x"]\n[Result "1/2-1/2"]\n', "1. e4 1/2-1/2\t[Round", False),
        ('[Event "a [b] 1-0 [c d"]\n', "1. e4 1-0", False),
        ('[Event "a *[Site "]\n', "1. e4 1-0", True),
    ],
)
def test_needs_fixes_cases(header: str, movetext: str, expected: bool) -> None:
    assert _by_regex([header], [movetext]) is expected
    assert needs_fixes(_columns([header], [movetext])) is expected


def test_needs_fixes_matches_the_regexes_on_random_texts() -> None:
    rng = random.Random(27)
    alphabet = ["[", "]", "Event", "E", " ", "\t", "\n", '"', "1-0", "0-1", "1/2-1/2", "*", "%", "\ufeff"]
    alphabet += ["a", "0", "2"]
    for _ in range(3000):
        texts = [
            ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))) for _ in range(rng.randint(1, 3))]
            for _ in range(2)
        ]
        assert needs_fixes(_columns(*texts)) is _by_regex(*texts), texts


def test_memoized_rules_give_the_rules_results() -> None:
    memo = memoized_rules(VALUE_RULES)
    values = ["2024.01.05", "2024.??.??", "", "?", "3.1", "12", "2750", "0", "abc", "1503014", " 999999999 "]
    for name, rule in VALUE_RULES.items():
        for v in values + values:  # the second time from the cache
            assert memo[name](v) == rule(v), (name, v)
