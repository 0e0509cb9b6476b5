"""Cross-source game deduplication: one canonical game per game played, every source row kept.

The same game reaches the store from several files: the TRF and the PGN of one event, two PGN
exports with different headers, a broadcast file updated during the event, a partial TRF and the
final one. `relink_tournaments` finds them and writes `game_sources`; the `canonical_games` view
(what the rating engines read) then hides every source row that is not its cluster's canonical row.

**Sources of one event: decided per pair of tournaments, on evidence, never on names.** Two
tournaments A and B are sources of one event when all of these hold (`_one_event`):

* their dates are compatible: the days of play overlap within `identity.DATE_SLACK_DAYS`, or are
  unknown and the event keys are equal (`identity.same_event`);
* their rates of play do not contradict: two known, different rate classes are two events (a
  rapid and a blitz event of one day) unless the event keys are equal (one event's sources may
  disagree on the class: a TRF '90+30' read as rapid);
* they hold games in common: the same White, Black and main round ("common" games, counted as
  distinct (white, black, round) keys, so a file holding an export twice counts each game once),
  two at least unless one side holds a single game (a 2-game event sharing one pairing with an
  open is two events);
* at least half of the common games both sides decided agree: 2 x agree >= decided, where a
  common game is decided when both sides have a final result (or equal moves), and agrees when
  both have the same final result or equal movetext hashes. A corrected result still links
  (``;result_differs``); a game still ``*`` on one side neither agrees nor disagrees. (A known
  limit: two round-robins of the same four players on consecutive days have the same Berger
  pairings, and half their results can agree by chance; they are then taken as one event.);
* the common games are a large share of the smaller side: 2 x common >= min(games of A, games of
  B), counting the games with both players identified and a round (as distinct keys).

Why: two sources of one event hold the same pairings, and the smaller one is mostly contained in
the other: two exports of the event, a partial TRF (after round 3) and the final one, a broadcast
PGN of the top boards and the official TRF. Two events can share a pairing by chance (the same
two players meet in round 1 of two weekend opens with the same colours and result; "Selvenven
Championship" 1-8 January and "Linnikvik Championship" 9-14 January pair them in round 2), but
one pairing out of dozens of games is never most of either, so no real game is dropped. Names
are no evidence: `identity.event_key` drops numbers and months, so unrelated events share
generic keys ("open", "weekend open"), while one event's files may carry different names.

**Equal moves are evidence on their own**: identical movetexts of the same two players are no
coincidence of pairing. Rows with equal movetext hashes of at least `SHORT_PLIES` plies link when
their tournaments' dates and rates are compatible, one event or not. Shorter equal movetexts (a
quick draw, a no-show after one move: the same two players can repeat them in another event)
link only between sources of one event.

Two rows are the same game when (rule names as written to ``game_sources.match_rule``):

* their tournaments' dates and rates are compatible (above), the two rows have the same White and
  Black after identity resolution, and day-precise game dates at most one day apart;
* ``round_players``: the same main round, tournaments one event; ``+hash`` when both have moves
  and the movetext hashes are equal (then one event is not needed, unless the moves are short).
  Different hashes veto the match unless one side is an unfinished broadcast game (result ``*``,
  moves still growing: ``+broadcast``) or both have the same result and number of plies (the
  same moves written differently, e.g. an over-disambiguated ``Ngf3``: ``+plies``);
* a round missing on one side (or both): ``hash_players`` (equal movetext hash, as above) only;
* two rows of one tournament (one file): ``same_file_hash``, same round and equal movetext hashes.

Canonical row of a cluster (precedence, independent of ingestion order): a final result before
``*``; then the TRF (the official record of results) before PGN; then the row of the fuller source
(the tournament with more games in its file: a full event export before a partial one, so one
event's games stay in one tournament); then the row with moves, the most plies; then the movetext
hash, round label, the game's index in its file, the event's name and start date, the result.
``game_sources.role``: 'canonical' (has result and moves, or nothing better exists), 'result'
(canonical without moves: its result counts), 'moves' (the row that supplies the moves of such a
game), 'duplicate' (every other row). A source whose final result disagrees with the canonical one
gets ``;result_differs`` in its match_rule.

Limits, by design: evidence needs rounds, so a source without rounds links by equal moves only
(two round-less exports of one event count a short game twice); and a source too small to tell
(one game) links when that game agrees and stays apart when it disagrees, whatever its name.

Cost: a batch's tournaments are paired with the tournaments near them (`identity.near_tournaments`,
kept to those whose days of play are compatible) by joining their games on (white, black, round)
and on equal moves, with the evidence counted per pair in one grouped query; the games are joined
through the tournament pairs whose days allow one event (`identity.near_pairs`: a join on the
event key and a range join on the days), within the batch too, so one file of a club's weekly
events, the same players every week, costs what its events do, not their square; only the batch, the
pairs found to be one event (or to share moves) and the tournaments already linked to these are
re-linked, and only the class pairs those allow are compared row by row: the cost follows the
batch and its neighbours, not the store.

Errors: none raised on data; SQL errors propagate (the loader rolls back the file).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

import duckdb
import polars as pl

from elopipe.identity.nearby import (
    DATE_SLACK_DAYS,
    NEAR_PAIRS_SQL,
    dates_overlap,
    near_pairs,
    near_tournaments,
    same_event,
    tournament_spans,
)
from elopipe.store import write
from elopipe.store.frames import registered, to_polars

# Equal movetexts shorter than this (plies) are no evidence on their own (module docstring).
SHORT_PLIES = 20

Span = tuple[str, dt.date | None, dt.date | None]  # `identity.tournament_spans`: (event key, first day, last day)


@dataclass
class _G:
    game_id: int
    tournament_id: int
    file_id: int
    fmt: str
    round: int | None
    white_id: int | None
    black_id: int | None
    result: str
    movetext_hash: str | None
    ply_count: int | None
    game_date: dt.date | None
    day_precise: bool
    round_label: str | None
    game_index: int | None
    event_games: int = 0  # games of its tournament in its file: the fuller source of an event wins
    event_name: str | None = None
    event_start: dt.date | None = None
    rate_class: str | None = None


def relink_all(con: duckdb.DuckDBPyConnection) -> int:
    """Rebuild `game_sources` for the whole store (after a manual merge or split). Returns the
    number of clusters of two or more rows."""
    tids = {r[0] for r in con.execute("SELECT tournament_id FROM tournaments").fetchall()}
    con.execute("DELETE FROM game_sources")
    return _relink(con, tids) if tids else 0


def relink_tournaments(con: duckdb.DuckDBPyConnection, tids: Iterable[int]) -> int:
    """Re-link the games of these tournaments (a batch just loaded, or the tournaments of merged
    players) and of every tournament related to them (`related_tournaments`). Returns the number
    of clusters of two or more rows."""
    batch = set(tids)
    if not batch:
        return 0
    group, verdicts = _related_verdicts(con, batch)
    # the verdicts of the pairs inside the batch are among those `_related_verdicts` took: when the group
    # is the batch (no partner, no link: a month of new events), the re-link need not ask again
    if group == batch:
        return _relink(con, group, {pair: v for pair, v in verdicts.items() if pair[0] in group and pair[1] in group})
    return _relink(con, group)


def related_tournaments(con: duckdb.DuckDBPyConnection, tids: Iterable[int]) -> set[int]:
    """The tournaments `relink_tournaments(con, tids)` re-links: these, every tournament that is a
    source of one event with one of them or shares equal moves with one (module docstring), and,
    repeatedly, every tournament already linked to one of those (its links are rewritten too)."""
    batch = set(tids)
    return _related_verdicts(con, batch)[0] if batch else set()


def relink_group(con: duckdb.DuckDBPyConnection, tids: Iterable[int]) -> int:
    """Re-link the games of exactly these tournaments (see `related_tournaments`). Returns the
    number of clusters of two or more rows."""
    group = set(tids)
    return _relink(con, group) if group else 0


# `identity.near_tournaments` narrowed to the tournaments whose days of play allow one event with
# one of the batch (`_compatible` without the rates): a namesake of another month or year is no
# candidate, so the games joined do not grow with the store's history.
_SLACK = f"INTERVAL {DATE_SLACK_DAYS} DAY"
_OVERLAP = f"n.first_day <= b.last_day + {_SLACK} AND b.first_day <= n.last_day + {_SLACK}"
_DATED_NEAR_SQL = f"""
WITH b AS (SELECT event_key, first_day, last_day FROM tournaments WHERE tournament_id IN (SELECT UNNEST($tids))),
n AS (SELECT tournament_id, event_key, first_day, last_day FROM tournaments
      WHERE tournament_id IN (SELECT UNNEST($near)))
SELECT n.tournament_id FROM n JOIN b ON n.event_key = b.event_key AND b.event_key <> ''
WHERE n.first_day IS NULL OR b.first_day IS NULL OR ({_OVERLAP})
UNION
SELECT n.tournament_id FROM n JOIN b ON {_OVERLAP}
"""


def _related_verdicts(con: duckdb.DuckDBPyConnection, tids: set[int]) -> tuple[set[int], dict[tuple[int, int], str]]:
    """(`related_tournaments`: the batch, its partners by `_pair_verdicts` among the tournaments
    near it, and the closure of the existing links of all these (`linked_tournaments`); the
    verdicts of the batch's tournaments against those near it, every pair inside the batch
    included)."""
    near = near_tournaments(con, tids)
    dated = {r[0] for r in con.execute(_DATED_NEAR_SQL, {"tids": sorted(tids), "near": sorted(near)}).fetchall()}
    partners = _pair_verdicts(con, tids, dated | tids)
    # the group's rows lose their links before re-linking: a tournament linked to one of them
    # (a third source of the event, a link left by a replaced file) is re-linked too
    return linked_tournaments(con, set(tids) | {t for pair in partners for t in pair}), partners


def linked_tournaments(con: duckdb.DuckDBPyConnection, tids: Iterable[int]) -> set[int]:
    """These tournaments and, repeatedly, every tournament whose games `game_sources` links to
    one of theirs (an event's few sources). Queried from these tournaments' games, never from
    all of `game_sources`. A loader that deletes a file's rows can take this set first and
    re-link it with its batch: the other sources of the deleted games lose their links too."""
    group = set(tids)
    frontier = set(group)
    while frontier:
        linked = {
            r[0]
            for r in con.execute(
                """
                WITH mine AS (SELECT game_id FROM games WHERE tournament_id IN (SELECT UNNEST(?))),
                ends AS (  -- the other end of every link of these games, either way
                    SELECT s.source_game_id AS other FROM game_sources s JOIN mine ON s.game_id = mine.game_id
                    UNION SELECT s.game_id FROM game_sources s JOIN mine ON s.source_game_id = mine.game_id
                )
                SELECT DISTINCT g.tournament_id FROM ends JOIN games g ON g.game_id = ends.other
                """,
                [sorted(frontier)],
            ).fetchall()
        }
        frontier = linked - group
        group |= frontier
    return group


# Per pair of tournaments (lower id first) of `left` x `right` that share a pairing or moves: the
# evidence of `_one_event`, as distinct (white, black, round) keys, and whether they share equal
# movetexts of at least SHORT_PLIES plies that `_match` could link (same round, or one missing).
# Only the pairs whose days allow one event (`identity.NEAR_PAIRS_SQL`) are joined: the others
# fail `_compatible`, and a club's players meet again every week of the year.
_PAIRS_SQL = f"""
WITH np AS ({NEAR_PAIRS_SQL}),
l AS (SELECT DISTINCT tournament_id, white_id, black_id, round, result, movetext_hash, ply_count FROM games
           WHERE tournament_id IN (SELECT UNNEST($left)) AND white_id IS NOT NULL AND black_id IS NOT NULL),
r AS (SELECT DISTINCT tournament_id, white_id, black_id, round, result, movetext_hash, ply_count FROM games
      WHERE tournament_id IN (SELECT UNNEST($right)) AND white_id IS NOT NULL AND black_id IS NOT NULL),
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
sizes AS (  -- from the rows read above: another read of games would scan the store
    SELECT tournament_id, count(DISTINCT (white_id, black_id, round)) AS n
    FROM (SELECT * FROM l UNION ALL SELECT * FROM r) WHERE round IS NOT NULL GROUP BY 1
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
r AS (SELECT DISTINCT tournament_id, white_id, black_id FROM games
      WHERE tournament_id IN (SELECT UNNEST($right)) AND white_id IS NOT NULL AND black_id IS NOT NULL)
SELECT EXISTS (SELECT 1 FROM l JOIN r USING (white_id, black_id) WHERE l.tournament_id <> r.tournament_id)
"""


def _pair_verdicts(con: duckdb.DuckDBPyConnection, left: set[int], right: set[int]) -> dict[tuple[int, int], str]:
    """{(lower id, higher id): 'event' | 'moves'} for the pairs of a tournament of `left` and one of
    `right` that are sources of one event (`_one_event`), or else share equal movetexts of at
    least `SHORT_PLIES` plies with compatible dates and rates. Evidence counted in one grouped
    join of the two sides' games; the Python loop is over the pairs sharing a game only."""
    if len(left | right) < 2 or not left or not right:
        return {}  # a pair is two tournaments (`NEAR_PAIRS_SQL`)
    params = {"left": sorted(left), "right": sorted(right)}
    if not con.execute(_ANY_COMMON_SQL, params).fetchall()[0][0]:
        return {}
    rows = con.execute(_PAIRS_SQL, {**params, "short": SHORT_PLIES}).fetchall()
    out: dict[tuple[int, int], str] = {}
    for ta, tb, common, agree, decided, n_a, n_b, moves, *rest in rows:
        span_a, span_b = (rest[0] or "", rest[1], rest[2]), (rest[4] or "", rest[5], rest[6])
        if not _compatible(span_a, span_b, rest[3], rest[7]):
            continue
        if _one_event(common, agree, decided, n_a, n_b):
            out[(ta, tb)] = "event"
        elif moves:
            out[(ta, tb)] = "moves"
    return out


def _one_event(common: int, agree: int, decided: int, games_a: int, games_b: int) -> bool:
    """Whether two date- and rate-compatible tournaments are sources of one event, from their
    evidence (module docstring): games in common (two at least, unless one side has a single
    game), at least half of the decided ones agreeing, and a large share of the smaller side
    (2 x common >= min(games of A, games of B))."""
    smaller = min(games_a, games_b)
    return common >= max(1, min(2, smaller)) and 2 * agree >= decided and 2 * common >= smaller


def _compatible(a: Span, b: Span, rate_a: str | None, rate_b: str | None) -> bool:
    """Dates and rates of play allow two tournaments to hold one game: days overlapping within
    the slack (or unknown, same event key), and no two known, different rate classes unless the
    keys are equal (one event's sources may disagree on the class: a TRF time control misread)."""
    one_key = same_event(a, b)
    if not one_key and rate_a and rate_b and rate_a != rate_b:
        return False
    return one_key or bool(dates_overlap(a[1], a[2], b[1], b[2]))


def _short(g: _G) -> bool:
    # an unknown length is not proof of a long game
    return g.ply_count is None or g.ply_count < SHORT_PLIES


def _match(a: _G, b: _G, spans: dict[int, Span], events: set[tuple[int, int]]) -> str | None:
    """The rule by which two rows (same players) are one game, or None (module docstring).

    `events`: the pairs of tournaments (lower id first) that are sources of one event
    (`_one_event`); without it only equal moves, of at least `SHORT_PLIES` plies, link rows."""
    both_moves = a.movetext_hash is not None and b.movetext_hash is not None
    same_hash = both_moves and a.movetext_hash == b.movetext_hash
    if a.tournament_id == b.tournament_id:
        return "same_file_hash" if same_hash and a.round == b.round else None
    sa, sb = spans.get(a.tournament_id), spans.get(b.tournament_id)
    if sa is None or sb is None or not _compatible(sa, sb, a.rate_class, b.rate_class):
        return None
    if a.day_precise and b.day_precise and a.game_date and b.game_date:
        if abs((a.game_date - b.game_date).days) > 1:
            return None
    one_event = (min(a.tournament_id, b.tournament_id), max(a.tournament_id, b.tournament_id)) in events
    if not one_event and not (same_hash and not _short(a) and not _short(b)):
        return None
    if a.round is None or b.round is None:
        return "hash_players" if same_hash else None
    if a.round != b.round:
        return None
    if both_moves and not same_hash:
        if "*" in (a.result, b.result):
            return "round_players+broadcast"
        # same length and result: the SAN is written differently ('Ngf3' for 'Nf3'), same game
        if a.result == b.result and a.ply_count and a.ply_count == b.ply_count:
            return "round_players+plies"
        return None
    return "round_players+hash" if same_hash else "round_players"


def _precedence(g: _G) -> tuple[bool, bool, int, bool, int, str, str, int, str, dt.date, str, int]:
    # only content decides (the loader links before the file's ledger row exists, and ids
    # depend on ingestion order): the event's name and start date, then the result, settle rows
    # equal on the rest (two sources of one event that disagree on a result)
    return (
        g.result == "*",
        g.fmt != "trf",
        -g.event_games,
        g.movetext_hash is None,
        -(g.ply_count or 0),
        g.movetext_hash or "",
        g.round_label or "",
        g.game_index if g.game_index is not None else 0,
        g.event_name or "",
        g.event_start or dt.date.min,
        g.result,
        g.game_id,
    )


# `_precedence` as a frame sort (the same keys in the same order)
_PRECEDENCE_SORT = [
    pl.col("result") == "*",
    pl.col("source_format") != "trf",
    -pl.col("event_games"),
    pl.col("movetext_hash").is_null(),
    -pl.col("ply_count").fill_null(0),
    pl.col("movetext_hash").fill_null(""),
    pl.col("round_label").fill_null(""),
    pl.col("game_index").fill_null(0),
    pl.col("event_name").fill_null(""),
    pl.col("event_start").fill_null(dt.date.min),
    pl.col("result"),
    pl.col("game_id"),
]

# Columns that decide `_match`: rows equal on these (a "class") match other rows alike.
_CLASS_KEY = [
    "white_id", "black_id", "tournament_id", "round", "movetext_hash", "result", "ply_count", "game_date",
    "day_precise", "rate_class",
]  # fmt: skip


def _load_frame(con: duckdb.DuckDBPyConnection, tids: set[int]) -> pl.DataFrame:
    # event_games: every game of the tournament, also those without both players
    frame = to_polars(
        con.sql(
            """
        WITH sel AS (SELECT UNNEST(?) AS tournament_id),
        n AS (SELECT tournament_id, count(*) AS event_games FROM games
              WHERE tournament_id IN (SELECT tournament_id FROM sel) GROUP BY 1)
        SELECT g.game_id, g.tournament_id, g.file_id, t.source_format, g.round, g.white_id, g.black_id,
               g.result, g.movetext_hash, g.ply_count, g.game_date, g.date_precision = 'day' AS day_precise,
               g.round_label, g.game_index, n.event_games,
               t.name AS event_name, t.start_date AS event_start, t.rate_class
        FROM games g JOIN tournaments t USING (tournament_id) JOIN n USING (tournament_id)
        WHERE g.tournament_id IN (SELECT tournament_id FROM sel) AND g.white_id IS NOT NULL
          AND g.black_id IS NOT NULL
        """,
            params=[sorted(tids)],
        )
    )
    return frame


def _relink(con: duckdb.DuckDBPyConnection, tids: set[int], verdicts: dict[tuple[int, int], str] | None = None) -> int:
    """Rebuild the `game_sources` rows of the games of `tids` (see the module docstring).
    `verdicts`: `_pair_verdicts(con, tids, tids)` when the caller has them already.

    Rows are grouped into classes (equal on `_CLASS_KEY`, so `_match` gives the same answer for
    any row of a class); only the class pairs that can match (same players and round in
    tournaments of one event, or equal moves) are compared with `_match`, and the canonical row,
    roles and rules of each cluster are computed on the frame."""
    df = _load_frame(con, tids)
    if df.height and con.execute("SELECT EXISTS (SELECT 1 FROM game_sources)").fetchall()[0][0]:
        # the ids as a registered frame, not a list parameter (a large file's list costs more to
        # pass than the delete); nothing to delete in a store without links
        with registered(con, "_relink_ids", df.select("game_id")):
            con.execute(
                "DELETE FROM game_sources WHERE game_id IN (SELECT game_id FROM _relink_ids)"
                " OR source_game_id IN (SELECT game_id FROM _relink_ids)"
            )
    if df.is_empty():
        return 0
    if verdicts is None:
        verdicts = _pair_verdicts(con, tids, tids)
    events = {pair for pair, verdict in verdicts.items() if verdict == "event"}
    spans = tournament_spans(con, tids)
    df = df.with_row_index("pos")
    classes = df.group_by(_CLASS_KEY, maintain_order=True).agg(pl.col("pos"), pl.len().alias("n"))
    classes = classes.with_row_index("cls")
    # the tournament pairs serve only games with moves: a batch of TRF files has none
    has_moves = bool(classes["movetext_hash"].is_not_null().any())
    near = near_pairs(con, tids, tids) if has_moves else pl.DataFrame(schema={"ta": pl.Int64, "tb": pl.Int64})
    cands = _candidate_pairs(classes, events, near)
    # one class of several rows with moves: rows of one tournament and round with the same moves
    repeated = classes.filter((pl.col("n") > 1) & pl.col("movetext_hash").is_not_null())["cls"].to_list()
    reps = _reps(classes, {c for pair in cands for c in pair} | set(repeated))
    comp = _components([(a, b) for a, b in cands if _match(reps[a], reps[b], spans, events)], repeated)
    if not comp:
        return 0
    rows = (
        classes.select("cls", "pos")
        .join(pl.DataFrame({"cls": list(comp), "comp": list(comp.values())}, schema=_COMP_SCHEMA), on="cls")
        .explode("pos")
    )
    g = df.join(rows, on="pos")
    return _write_links(con, g, reps, spans, events)


_COMP_SCHEMA = {"cls": pl.UInt32, "comp": pl.UInt32}


def _candidate_pairs(classes: pl.DataFrame, events: set[tuple[int, int]], near: pl.DataFrame) -> list[tuple[int, int]]:
    """Class pairs (lower class first) that `_match` can link, found by joins: the same players
    and round in two tournaments of one event, or equal moves of the same players in one round or
    with a round missing on one side, in one tournament or in two `near` (`identity.near_pairs`:
    columns ta, tb; `_match` rejects two tournaments whose days allow no one event). Every other
    pair is no match. Joined through the tournament pairs, so the pairs grow with the games of
    tournaments near each other, not with the square of a batch whose players recur."""
    c = classes.select("cls", "tournament_id", "white_id", "black_id", "round", "movetext_hash").with_columns(
        pl.col("tournament_id").cast(pl.Int64)
    )
    ev = pl.DataFrame(
        {"ta": [a for a, _ in events], "tb": [b for _, b in events]}, schema={"ta": pl.Int64, "tb": pl.Int64}
    )
    rounded = c.filter(pl.col("round").is_not_null())
    by_event = _across(rounded, ev, ["white_id", "black_id", "round"])
    hashed = c.filter(pl.col("movetext_hash").is_not_null())
    hash_key = ["white_id", "black_id", "movetext_hash"]
    one_round = pl.col("round").is_null() | pl.col("round_b").is_null() | (pl.col("round") == pl.col("round_b"))
    by_hash = pl.concat(
        [
            hashed.join(hashed, on=["tournament_id", *hash_key], suffix="_b")
            .filter(pl.col("cls") < pl.col("cls_b"))
            .filter(one_round)
            .select("cls", "cls_b"),
            _across(hashed, near.select("ta", "tb"), hash_key, one_round),
        ]
    )
    pairs = pl.concat([by_event, by_hash]).unique()
    return list(zip(pairs["cls"].to_list(), pairs["cls_b"].to_list(), strict=True))


def _across(c: pl.DataFrame, tpairs: pl.DataFrame, on: list[str], keep: pl.Expr | None = None) -> pl.DataFrame:
    """Class pairs (cls < cls_b) equal on `on` between the two tournaments of a row of `tpairs`
    (ta, tb: Int64): the classes of ta joined to the pairs, then to the classes of tb."""
    left = c.join(tpairs, left_on="tournament_id", right_on="ta")
    right = c.rename({col: f"{col}_b" for col in c.columns if col not in on})
    j = left.join(right, left_on=["tb", *on], right_on=["tournament_id_b", *on])
    if keep is not None:
        j = j.filter(keep)
    return j.select(pl.min_horizontal("cls", "cls_b").alias("cls"), pl.max_horizontal("cls", "cls_b").alias("cls_b"))


def _reps(classes: pl.DataFrame, wanted: set[int]) -> dict[int, _G]:
    """A `_G` standing for each wanted class (the `_CLASS_KEY` columns; the rest is not read by
    `_match`)."""
    sel = classes.filter(pl.col("cls").is_in(sorted(wanted)))
    cols = ("cls", "tournament_id", "round", "white_id", "black_id", "result", "movetext_hash", "ply_count",
            "game_date", "day_precise", "rate_class")  # fmt: skip
    # column lists zipped: a named dict per row costs more than the rest of the loop
    return {
        c: _G(0, tid, 0, "", rnd, white, black, result, mh, plies, day, precise, None, None, rate_class=rc)
        for c, tid, rnd, white, black, result, mh, plies, day, precise, rc in zip(
            *(sel[col].to_list() for col in cols), strict=True
        )
    }


def _components(matched: list[tuple[int, int]], repeated: list[int]) -> dict[int, int]:
    """{class: cluster id (its lowest class)} of the classes linked by `matched`, and of each
    `repeated` class (several rows of one game) even when it matches no other class."""
    parent: dict[int, int] = {c: c for c in repeated}

    def find(x: int) -> int:
        root = parent.setdefault(x, x)
        while parent[root] != root:
            root = parent[root]
        while x != root:
            parent[x], x = root, parent[x]
        return root

    for a, b in matched:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {c: find(c) for c in parent}


def _write_links(
    con: duckdb.DuckDBPyConnection,
    g: pl.DataFrame,
    reps: dict[int, _G],
    spans: dict[int, Span],
    events: set[tuple[int, int]],
) -> int:
    """Insert the `game_sources` rows of the clustered rows `g` (columns of `_load_frame`, plus
    `pos`, `cls`, `comp`): canonical row by `_precedence`, roles, rules. Returns the clusters."""
    g = g.with_columns(pl.col("pos").min().over("comp").alias("first")).sort([pl.col("first"), *_PRECEDENCE_SORT])
    rank = pl.int_range(pl.len()).over("comp")
    g = g.with_columns(rank.alias("rank")).with_columns(
        pl.col("game_id").first().over("comp").alias("canon_id"),
        pl.col("cls").first().over("comp").alias("canon_cls"),
        pl.col("result").first().over("comp").alias("canon_result"),
        pl.col("movetext_hash").first().over("comp").is_null().alias("canon_no_moves"),
        pl.when((pl.col("rank") > 0) & pl.col("movetext_hash").is_not_null())
        .then(pl.col("rank"))
        .otherwise(None)
        .min()
        .over("comp")
        .alias("mover_rank"),
    )
    has_mover = pl.col("canon_no_moves") & pl.col("mover_rank").is_not_null()
    pairs = g.filter(pl.col("rank") > 0).select("canon_cls", "cls").unique()
    pair_rule = pairs.with_columns(
        pl.Series("rule", [_match(reps[a], reps[b], spans, events) for a, b in pairs.iter_rows()], dtype=pl.Utf8)
    )
    g = g.join(pair_rule, on=["canon_cls", "cls"], how="left", maintain_order="left").with_columns(
        pl.when(pl.col("rank") == 0).then(pl.lit("canonical")).otherwise(pl.col("rule")).alias("rule")
    )
    missing = g.filter(pl.col("rule").is_null())
    if missing.height:
        # no direct match with the canonical row: the rule of the first row in precedence order
        # that matches this one directly
        members: dict[int, list[tuple[int, int]]] = {}
        for comp, game_id, cls in (
            g.filter(pl.col("comp").is_in(missing["comp"].unique().to_list()))
            .select("comp", "game_id", "cls")
            .iter_rows()
        ):
            members.setdefault(comp, []).append((game_id, cls))
        fixed: dict[int, str] = {}
        for comp, game_id, cls in missing.select("comp", "game_id", "cls").iter_rows():
            fixed[game_id] = next(
                (
                    r
                    for o_id, o_cls in members[comp]
                    if o_id != game_id and (r := _match(reps[o_cls], reps[cls], spans, events))
                ),
                "cluster",
            )
        g = g.with_columns(pl.col("rule").fill_null(pl.col("game_id").replace_strict(fixed, default=None)))
    rules = pl.col("rule")
    differs = (
        (pl.col("rank") > 0)
        & (pl.col("result") != "*")
        & (pl.col("canon_result") != "*")
        & (pl.col("result") != pl.col("canon_result"))
    )
    out = g.select(
        pl.col("canon_id").cast(pl.Int64).alias("game_id"),
        pl.col("game_id").cast(pl.Int64).alias("source_game_id"),
        pl.col("file_id").cast(pl.Int64),
        pl.when(differs).then(rules + ";result_differs").otherwise(rules).alias("match_rule"),
        pl.when(pl.col("rank") == 0)
        .then(pl.when(has_mover).then(pl.lit("result")).otherwise(pl.lit("canonical")))
        .when(has_mover & (pl.col("rank") == pl.col("mover_rank")))
        .then(pl.lit("moves"))
        .otherwise(pl.lit("duplicate"))
        .alias("role"),
    )
    write.insert(con, "game_sources", out)
    return g["comp"].n_unique()
