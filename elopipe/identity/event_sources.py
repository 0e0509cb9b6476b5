"""Which two tournaments are sources of one event, or share equal moves: the verdicts of `dedup`.

A pair of tournaments is asked once, on evidence, never on names (the rule and its reasons:
`elopipe.identity.dedup`'s docstring, "Sources of one event"): their days of play and rates of
play must allow one event (`compatible`), and their common games must be enough, agree enough
and be a large share of the smaller side (`one_event`). The evidence of every pair of a batch and
the tournaments near it is counted in one grouped query (`pair_verdicts`); `dedup` then links the
rows of the pairs found (`elopipe.identity.game_links`).

Errors: none raised on data; SQL errors propagate.
"""

from __future__ import annotations

import datetime as dt

import duckdb

from elopipe.identity.nearby import NEAR_PAIRS_SQL, dates_overlap, same_event

# Equal movetexts shorter than this (plies) are no evidence on their own (`elopipe.identity.dedup`'s docstring).
SHORT_PLIES = 20

# Equal movetexts of at least this many plies link two rows of one event, round and players whose
# dates differ by more than a day (a source writing the event's start or end day on every game:
# `game_links.event_dated`). Longer than `SHORT_PLIES`: a prepared repetition draw of 20-30 plies
# recurs between the same two players; 40 plies (20 moves each) out of book and identical is no
# coincidence.
EVENT_DATE_PLIES = 40

Span = tuple[str, dt.date | None, dt.date | None]  # `identity.tournament_spans`: (event key, first day, last day)


# Per pair of tournaments (lower id first) of `left` x `right` that share a pairing or moves: the
# evidence of `one_event`, as distinct (white, black, round) keys, and whether they share equal
# movetexts of at least SHORT_PLIES plies that `game_links.match_rule` could link (same round, or one missing).
# Only the pairs whose days allow one event (`identity.NEAR_PAIRS_SQL`) are joined: the others
# fail `compatible`, and a club's players meet again every week of the year.
_PAIRS_SQL = f"""
WITH np AS ({NEAR_PAIRS_SQL}),
l AS (SELECT DISTINCT tournament_id, white_id, black_id, round, result, movetext_hash, ply_count FROM games
           WHERE tournament_id IN (SELECT UNNEST($left)) AND white_id IS NOT NULL AND black_id IS NOT NULL),
-- the right side's tournaments that are on the left too (a batch against itself and the stored
-- tournaments near it) taken from `l`: their games read and made distinct once, not twice
r AS (SELECT * FROM l WHERE tournament_id IN (SELECT UNNEST($right))
      UNION ALL
      SELECT DISTINCT tournament_id, white_id, black_id, round, result, movetext_hash, ply_count FROM games
      WHERE tournament_id IN (SELECT UNNEST($right_only)) AND white_id IS NOT NULL AND black_id IS NOT NULL),
common AS (
    SELECT least(l.tournament_id, r.tournament_id) AS ta, greatest(l.tournament_id, r.tournament_id) AS tb,
           l.white_id, l.black_id, l.round,
           bool_or(COALESCE(l.movetext_hash = r.movetext_hash, FALSE)
                   OR (l.result = r.result AND l.result <> '*')) AS agree,
           bool_or(COALESCE(l.movetext_hash = r.movetext_hash, FALSE)
                   OR (l.result <> '*' AND r.result <> '*')) AS decided
    FROM l JOIN np ON np.ta = l.tournament_id
    JOIN r ON r.tournament_id = np.tb AND l.white_id = r.white_id AND l.black_id = r.black_id AND l.round = r.round
    GROUP BY ALL
),
evidence AS (
    SELECT ta, tb, count(*) AS common, count(*) FILTER (WHERE agree) AS agree,
           count(*) FILTER (WHERE decided) AS decided
    FROM common GROUP BY ALL
),
moves AS (
    SELECT DISTINCT least(l.tournament_id, r.tournament_id) AS ta, greatest(l.tournament_id, r.tournament_id) AS tb
    FROM l JOIN np ON np.ta = l.tournament_id
    JOIN r ON r.tournament_id = np.tb AND l.white_id = r.white_id AND l.black_id = r.black_id
     AND l.movetext_hash = r.movetext_hash
    WHERE l.ply_count >= $short AND r.ply_count >= $short
      AND (l.round IS NULL OR r.round IS NULL OR l.round = r.round)
),
pairs AS (
    SELECT ta, tb, COALESCE(e.common, 0) AS common, COALESCE(e.agree, 0) AS agree,
           COALESCE(e.decided, 0) AS decided, m.ta IS NOT NULL AS moves
    FROM evidence e FULL JOIN moves m USING (ta, tb)
),
-- from the rows read above (another read of games would scan the store), of the tournaments of
-- `pairs` only: a FIDE month's 138k rows counted for the few pairs that share a game cost 0.05 CPU-s
sizes AS (
    SELECT tournament_id, count(DISTINCT (white_id, black_id, round)) AS n
    FROM (SELECT * FROM l UNION ALL SELECT * FROM r WHERE tournament_id IN (SELECT UNNEST($right_only)))
    WHERE round IS NOT NULL AND tournament_id IN (SELECT ta FROM pairs UNION ALL SELECT tb FROM pairs)
    GROUP BY 1
)
SELECT p.ta, p.tb, p.common, p.agree, p.decided, COALESCE(sa.n, 0), COALESCE(sb.n, 0), p.moves,
       a.event_key, a.first_day, a.last_day, a.rate_class, b.event_key, b.first_day, b.last_day, b.rate_class
FROM pairs p
JOIN tournaments a ON a.tournament_id = p.ta JOIN tournaments b ON b.tournament_id = p.tb
LEFT JOIN sizes sa ON sa.tournament_id = p.ta LEFT JOIN sizes sb ON sb.tournament_id = p.tb
"""


# Whether `_PAIRS_SQL` can return a row: its evidence ('common' and 'moves') is games of two
# tournaments with the same white and black players. Read first, from the two sides' pairings only:
# a batch whose players met nobody again in the tournaments near it (a new event) skips the joins
# of `_PAIRS_SQL`, whose plan costs ~0.015 CPU-s even on no rows (issue 27).
_ANY_COMMON_SQL = """
WITH l AS (SELECT DISTINCT tournament_id, white_id, black_id FROM games
           WHERE tournament_id IN (SELECT UNNEST($left)) AND white_id IS NOT NULL AND black_id IS NOT NULL),
r AS (SELECT * FROM l WHERE tournament_id IN (SELECT UNNEST($right))  -- as `_PAIRS_SQL`'s
      UNION ALL
      SELECT DISTINCT tournament_id, white_id, black_id FROM games
      WHERE tournament_id IN (SELECT UNNEST($right_only)) AND white_id IS NOT NULL AND black_id IS NOT NULL)
SELECT EXISTS (SELECT 1 FROM l JOIN r USING (white_id, black_id) WHERE l.tournament_id <> r.tournament_id)
"""


def pair_verdicts(con: duckdb.DuckDBPyConnection, left: set[int], right: set[int]) -> dict[tuple[int, int], str]:
    """{(lower id, higher id): 'event' | 'moves'} for the pairs of a tournament of `left` and one of
    `right` that are sources of one event (`one_event`), or else share equal movetexts of at
    least `SHORT_PLIES` plies with compatible dates and rates. Evidence counted in one grouped
    join of the two sides' games; the Python loop is over the pairs sharing a game only."""
    if len(left | right) < 2 or not left or not right:
        return {}  # a pair is two tournaments (`NEAR_PAIRS_SQL`)
    params = {"left": sorted(left), "right": sorted(right), "right_only": sorted(right - left)}
    if not con.execute(_ANY_COMMON_SQL, params).fetchall()[0][0]:
        return {}
    rows = con.execute(_PAIRS_SQL, {**params, "short": SHORT_PLIES}).fetchall()
    out: dict[tuple[int, int], str] = {}
    for ta, tb, common, agree, decided, n_a, n_b, moves, *rest in rows:
        span_a, span_b = (rest[0] or "", rest[1], rest[2]), (rest[4] or "", rest[5], rest[6])
        if not compatible(span_a, span_b, rest[3], rest[7]):
            continue
        if one_event(common, agree, decided, n_a, n_b):
            out[(ta, tb)] = "event"
        elif moves:
            out[(ta, tb)] = "moves"
    return out


def one_event(common: int, agree: int, decided: int, games_a: int, games_b: int) -> bool:
    """Whether two date- and rate-compatible tournaments are sources of one event, from their
    evidence (`elopipe.identity.dedup`'s docstring): games in common (two at least, unless one side has a single
    game), at least half of the decided ones agreeing, and a large share of the smaller side
    (2 x common >= min(games of A, games of B))."""
    smaller = min(games_a, games_b)
    return common >= max(1, min(2, smaller)) and 2 * agree >= decided and 2 * common >= smaller


def compatible(a: Span, b: Span, rate_a: str | None, rate_b: str | None) -> bool:
    """Dates and rates of play allow two tournaments to hold one game: days overlapping within
    the slack (or unknown, same event key), and no two known, different rate classes unless the
    keys are equal (one event's sources may disagree on the class: a TRF time control misread)."""
    one_key = same_event(a, b)
    if not one_key and rate_a and rate_b and rate_a != rate_b:
        return False
    return one_key or bool(dates_overlap(a[1], a[2], b[1], b[2]))
