"""Plausible ranges of the integer fields the readers hand to the loader.

The store keeps round, board, ply count, start rank and ratings as INTEGER (int32) and FIDE IDs
as BIGINT (elopipe.store.schema); a value outside these ranges is a typo or garbage in the file, and
an out-of-range int would make the whole file fail to store. The readers store NULL for such a
value and record a warning with the raw text (PGN and TRF alike).

- ROUND_MAX, BOARD_MAX: 9999. TRF writes start ranks and opponents in 4 columns (max 9999),
  and no tournament has come near 9999 rounds or boards.
- PLY_MAX: 10000 plies. The longest legal game under the 75-move rule is below 9000 plies
  (FIDE Laws 9.6.2); more is a merged or corrupt movetext.
- RATING_MIN..RATING_MAX: 100..3500 for a rating tag of a PGN (WhiteElo/BlackElo), which may
  carry national, online or engine ratings; 0 and blank mean unrated.
- FIDE_RATING_MIN..FIDE_RATING_MAX: 1000..3000 for the FIDE-rating column of a TRF `001` row.
  No FIDE rating floor was ever below 1000 (FIDE B.02: 1000 since 2024; 1200 before) and no
  rating has reached 2900; a value below 1000 there is a national rating (Irish files write
  `0951`), a value above 3000 a typo.
- BIRTH_YEAR_MIN..BIRTH_YEAR_MAX: 1850..2100 for a birth date or year; outside it (9999/12/31,
  0001) the value is a placeholder or a typo, and a year in the future would make a player a
  junior for the K rule (FIDE B.02 8.3.3).
- POINTS_MAX: 999.5 points: a score of 1000 or more points in one tournament is garbage (even
  3-1-0 scoring over 99 rounds stays below 300); `points_in_file` is stored as NULL then.

Implausible but storable: a value the store can hold but no real event has is kept, with a
warning when the file is read (the rating engines' types hold any sum a 512 MB file carries).

- EVENT_ROUNDS_PLAUSIBLE: 1000 rounds in one event (TRF round blocks or 142), and
  GAMES_PER_PLAYER_PLAUSIBLE: 1000 games of one player in one event (PGN). Over-the-board
  events play 5-20 rounds, a double round-robin of 30 players 58; the longest online arenas
  exported as TRF or PGN give a player a few hundred games. A thousand is beyond any event:
  a generated, merged or corrupt file, whose sums (1,001 points) once broke every later
  FIDE rating run.
"""

from __future__ import annotations

from decimal import Decimal

ROUND_MAX = 9999
BOARD_MAX = 9999
PLY_MAX = 10000
RATING_MIN, RATING_MAX = 100, 3500
FIDE_RATING_MIN, FIDE_RATING_MAX = 1000, 3000
POINTS_MAX = Decimal("999.5")
EVENT_ROUNDS_PLAUSIBLE = 1000
GAMES_PER_PLAYER_PLAUSIBLE = 1000
BIRTH_YEAR_MIN, BIRTH_YEAR_MAX = 1850, 2100


def in_range(value: int | None, low: int, high: int) -> bool:
    """True when `value` is None or low <= value <= high."""
    return value is None or low <= value <= high
