"""Cross-source game deduplication: one canonical game per game played, every source row kept.

The same game reaches the store from several files: the TRF and the PGN of one event, two PGN
exports with different headers, a broadcast file updated during the event, a partial TRF and the
final one. `relink_tournaments` finds them and writes `game_sources`; the `canonical_games` view
(what the rating engines read) then hides every source row that is not its cluster's canonical row.

**Sources of one event: decided per pair of tournaments, on evidence, never on names.** Two
tournaments A and B are sources of one event when all of these hold (`event_sources.one_event`):

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
coincidence of pairing. Rows with equal movetext hashes of at least `event_sources.SHORT_PLIES` plies link when
their tournaments' dates and rates are compatible, one event or not. Shorter equal movetexts (a
quick draw, a no-show after one move: the same two players can repeat them in another event)
link only between sources of one event.

Two rows are the same game when (rule names as written to ``game_sources.match_rule``):

* their tournaments' dates and rates are compatible (above), the two rows have the same White and
  Black after identity resolution, and day-precise game dates at most one day apart, or further
  apart when one source writes the event's start or end day on every game (many PGN databases
  do): equal movetext hashes of at least `event_sources.EVENT_DATE_PLIES` plies, the same main
  round and round labels that do not conflict (below), one event key, and the date of one row a
  day of play of the other's tournament (``round_players+hash+event_date``; `game_links.event_dated`). A shorter game (a
  repetition draw recurs between the same players, in another event of the same name and days)
  is no proof on its own; it is one game when the two tournaments are sources of one event
  (above) and at least one of their long games links by that rule, the proof that the two row
  sets are one event from two sources: the same White, Black, main round, round label, movetext
  hash (never a null one) and result, one row's date a day of play of the other's tournament,
  and one to one, each row the only one of that key in its tournament (a knockout's two games of
  one round between the same players, or a game written twice, link none and count as before)
  (``round_players+hash+event_date+short``; `short_dated_pairs`, `game_links.event_dated_short`);
* ``round_players``: the same main round, tournaments one event; and, for this rule and every
  rule that needs a round on both sides (``+event_date`` and its ``+short`` too), no two different
  round labels (`game_links.labels_conflict`: a knockout's '1.3' and '1.5', the same White, may
  repeat one draw or one result; two sources of the round hold both games, and no rule may pair
  one's '1.3' with the other's '1.5'). Zero padding is spelling ('01' is '1'); a sub-part on one
  side only ('3' and a broadcast's or database's round.board '3.1') is no conflict, except for
  ``+event_date+short`` (a short draw written '1' could be any game of a knockout round);
  ``+hash`` when both have moves
  and the movetext hashes are equal (then one event is not needed, unless the moves are short).
  Different hashes veto the match unless one side is an unfinished broadcast game (result ``*``,
  moves still growing: ``+broadcast``) or a copy cut short (its file's last game, with moves and
  no termination marker: a download that stopped, taken by `watch` after --incomplete-wait) or
  both have the same result and number of plies (the
  same moves written differently, e.g. an over-disambiguated ``Ngf3``: ``+plies``);
* a round missing on one side (or both): ``hash_players`` (equal movetext hash, as above) only;
* two rows of one tournament (one file): ``same_file_hash``, same round (and round label, when both
  give one: a knockout's '3.1' and its tiebreak '3.3' may repeat one draw, same colours) and equal
  movetext hashes.

Canonical row of a cluster (precedence, independent of ingestion order): a final result before
``*``; then the TRF (the official record of results) before PGN; then the row of the fuller source
(the tournament with more games in its file: a full event export before a partial one, so one
event's games stay in one tournament); then the row with moves, the most plies; then the row of
the tournament with more distinct game dates (a source dating each game by its day before one
writing the event's start day on every game: the day rates the game in its period); then the movetext
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

Where the parts live: `elopipe.identity.event_sources` gives the verdicts on pairs of tournaments
(sources of one event, equal moves); `elopipe.identity.game_links` the rule by which two rows are
one game, the canonical row and the `game_sources` write; this module finds the tournaments to
re-link and the class pairs that can match, and clusters them.

Errors: none raised on data; SQL errors propagate (the loader rolls back the file).
"""

from __future__ import annotations

from collections.abc import Iterable

import duckdb
import polars as pl

from elopipe.identity import event_sources
from elopipe.identity.event_sources import EVENT_DATE_PLIES, Span
from elopipe.identity.game_links import (
    EVENT_DATE_RULE,
    GameRow,
    event_dated_short,
    label_key_expr,
    match_rule,
    write_links,
)
from elopipe.identity.nearby import DATE_SLACK_DAYS, near_pairs, near_tournaments, tournament_spans
from elopipe.store.frames import registered, to_polars


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


def related_bound(con: duckdb.DuckDBPyConnection, tids: Iterable[int]) -> set[int]:
    """A superset of `related_tournaments(con, tids)` that needs no verdict on pairs of tournaments:
    every tournament near one of `tids` (`identity.near_tournaments`, among which its partners are
    found) and, repeatedly, every tournament already linked to one of those. When it lies within
    what a caller re-links anyway, so does `related_tournaments`, for a fraction of its cost."""
    batch = set(tids)
    return linked_tournaments(con, near_tournaments(con, batch)) if batch else set()


def relink_group(con: duckdb.DuckDBPyConnection, tids: Iterable[int]) -> int:
    """Re-link the games of exactly these tournaments (see `related_tournaments`). Returns the
    number of clusters of two or more rows."""
    group = set(tids)
    return _relink(con, group) if group else 0


# `identity.near_tournaments` narrowed to the tournaments whose days of play allow one event with
# one of the batch (`event_sources.compatible` without the rates): a namesake of another month or year is no
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
    """(`related_tournaments`: the batch, its partners by `event_sources.pair_verdicts` among the tournaments
    near it, and the closure of the existing links of all these (`linked_tournaments`); the
    verdicts of the batch's tournaments against those near it, every pair inside the batch
    included)."""
    near = near_tournaments(con, tids)
    dated = {r[0] for r in con.execute(_DATED_NEAR_SQL, {"tids": sorted(tids), "near": sorted(near)}).fetchall()}
    partners = event_sources.pair_verdicts(con, tids, dated | tids)
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


# Columns that decide `match_rule`: rows equal on these (a "class") match other rows alike.
_CLASS_KEY = [
    "white_id", "black_id", "tournament_id", "round", "movetext_hash", "result", "ply_count", "game_date",
    "day_precise", "rate_class", "cut", "round_label",
]  # fmt: skip


def _load_frame(con: duckdb.DuckDBPyConnection, tids: set[int]) -> pl.DataFrame:
    # event_games: every game of the tournament, also those without both players
    frame = to_polars(
        con.sql(
            """
        WITH sel AS (SELECT UNNEST(?) AS tournament_id),
        n AS (SELECT tournament_id, count(*) AS event_games, count(DISTINCT game_date) AS event_days FROM games
              WHERE tournament_id IN (SELECT tournament_id FROM sel) GROUP BY 1),
        -- the last game of each file: without its termination marker, its moves were cut short
        last AS (SELECT file_id, max(game_index) AS last_index FROM games
                 WHERE file_id IN (SELECT file_id FROM games WHERE tournament_id IN (SELECT tournament_id FROM sel))
                 GROUP BY 1)
        SELECT g.game_id, g.tournament_id, g.file_id, t.source_format, g.round, g.white_id, g.black_id,
               g.result, g.movetext_hash, g.ply_count, g.game_date, g.date_precision = 'day' AS day_precise,
               g.round_label, g.game_index, n.event_games, n.event_days,
               t.name AS event_name, t.start_date AS event_start, t.rate_class,
               COALESCE(g.movetext_hash IS NOT NULL AND g.result_marker IS NULL
                        AND g.game_index = last.last_index, false) AS cut
        FROM games g JOIN tournaments t USING (tournament_id) JOIN n USING (tournament_id)
        LEFT JOIN last ON last.file_id = g.file_id
        WHERE g.tournament_id IN (SELECT tournament_id FROM sel) AND g.white_id IS NOT NULL
          AND g.black_id IS NOT NULL
        """,
            params=[sorted(tids)],
        )
    )
    return frame


def _relink(con: duckdb.DuckDBPyConnection, tids: set[int], verdicts: dict[tuple[int, int], str] | None = None) -> int:
    """Rebuild the `game_sources` rows of the games of `tids` (see the module docstring).
    `verdicts`: `event_sources.pair_verdicts(con, tids, tids)` when the caller has them already.

    Rows are grouped into classes (equal on `_CLASS_KEY`, so `match_rule` gives the same answer for
    any row of a class); only the class pairs that can match (same players and round in
    tournaments of one event, or equal moves) are compared with `match_rule`, and the canonical row,
    roles and rules of each cluster are computed on the frame."""
    if verdicts is not None and "event" not in verdicts.values() and not _any_moves(con, tids):
        # no two tournaments one event, and no moves: no rule can link two rows (`_candidate_pairs`
        # pairs by event or by equal moves; a repeated class needs moves). A month of TRF files
        # ends here, without reading its games into a frame and grouping them (0.1 CPU-s)
        if _any_links(con):
            ids = f"SELECT game_id FROM games WHERE {_GAMES_OF}"
            con.execute(
                f"DELETE FROM game_sources WHERE game_id IN ({ids}) OR source_game_id IN ({ids})", [sorted(tids)] * 2
            )
        return 0
    df = _load_frame(con, tids)
    if df.height and _any_links(con):
        # the ids as a registered frame, not a list parameter (a large file's list costs more to
        # pass than the delete)
        with registered(con, "_relink_ids", df.select("game_id")):
            con.execute(
                "DELETE FROM game_sources WHERE game_id IN (SELECT game_id FROM _relink_ids)"
                " OR source_game_id IN (SELECT game_id FROM _relink_ids)"
            )
    if df.is_empty():
        return 0
    if verdicts is None:
        verdicts = event_sources.pair_verdicts(con, tids, tids)
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
    # the rows of the candidates' classes only: `write_links` asks `match_rule` of two classes, and
    # a repeated class linked to none (its rows' rule is given there) needs no row (14k on an archive)
    reps = _reps(classes, {c for pair in cands for c in pair})
    rules = {(a, b): rule for a, b in cands if (rule := match_rule(reps[a], reps[b], spans, events))}
    short = short_dated_pairs(classes, rules, reps, spans, events)
    comp = _components([*rules, *sorted(short)], repeated)
    if not comp:
        return 0
    rows = (
        classes.select("cls", "pos")
        .join(pl.DataFrame({"cls": list(comp), "comp": list(comp.values())}, schema=_COMP_SCHEMA), on="cls")
        .explode("pos")
    )
    g = df.join(rows, on="pos")
    return write_links(con, g, reps, spans, events, short)


# the games `_load_frame` reads, of the tournaments of the list parameter: both players known
_GAMES_OF = "tournament_id IN (SELECT UNNEST(?)) AND white_id IS NOT NULL AND black_id IS NOT NULL"


def _any_moves(con: duckdb.DuckDBPyConnection, tids: set[int]) -> bool:
    """Whether a game of `tids` that `_load_frame` reads has moves (a movetext hash)."""
    row = con.execute(
        f"SELECT EXISTS (SELECT 1 FROM games WHERE {_GAMES_OF} AND movetext_hash IS NOT NULL)", [sorted(tids)]
    ).fetchall()
    return bool(row[0][0])


def _any_links(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether `game_sources` holds a row (nothing to delete in a store without links)."""
    return bool(con.execute("SELECT EXISTS (SELECT 1 FROM game_sources)").fetchall()[0][0])


# A short game's key in its tournament (`short_dated_pairs`): the row that faces its twin
_SHORT_KEY = ["white_id", "black_id", "round", "round_label", "movetext_hash", "result"]


def short_dated_pairs(
    classes: pl.DataFrame,
    rules: dict[tuple[int, int], str],
    reps: dict[int, GameRow],
    spans: dict[int, Span],
    events: set[tuple[int, int]],
) -> set[tuple[int, int]]:
    """Class pairs (lower first) that ``round_players+hash+event_date+short`` links (module
    docstring): in two tournaments that are sources of one event (`events`) and some of whose long
    games `rules` links by ``round_players+hash+event_date`` (the proof that one source dates every
    game by the event's start or end day), the rows under `EVENT_DATE_PLIES` plies with the same
    White, Black, main round, round label, movetext hash (not null) and result, when each is the
    only row of that key in its tournament (one to one: a knockout's two games of one round, or a
    game written twice, link none) and `game_links.event_dated_short` holds. `classes`: `_relink`'s
    (cls, n and the `_CLASS_KEY` columns); `rules`: `match_rule`'s links of class pairs; `reps`
    gains the classes found. Joins over the classes of these tournament pairs only: nothing when
    no long game links that way (the common case costs a scan of `rules`)."""
    dated = {
        (min(ta, tb), max(ta, tb))
        for (a, b), rule in rules.items()
        if rule == EVENT_DATE_RULE
        for ta, tb in [(reps[a].tournament_id, reps[b].tournament_id)]
    } & events
    if not dated:
        return set()
    # the label without its zero padding: '01' and '1' are one key (`game_links.label_key`)
    keyed = classes.filter(pl.col("movetext_hash").is_not_null() & pl.col("round").is_not_null()).with_columns(
        label_key_expr("round_label").alias("round_label")
    )
    # the rows of each key in its tournament, counted before the long ones are left out
    once = keyed.filter(pl.col("n").sum().over(["tournament_id", *_SHORT_KEY]) == 1).filter(
        pl.col("ply_count").fill_null(0) < EVENT_DATE_PLIES
    )
    c = once.select("cls", pl.col("tournament_id").cast(pl.Int64), *_SHORT_KEY)
    tpairs = pl.DataFrame(
        {"ta": [a for a, _ in sorted(dated)], "tb": [b for _, b in sorted(dated)]},
        schema={"ta": pl.Int64, "tb": pl.Int64},
    )
    left = c.join(tpairs, left_on="tournament_id", right_on="ta")
    right = c.select(pl.col("cls").alias("cls_b"), pl.col("tournament_id").alias("tb"), *_SHORT_KEY)
    # the classes of each pair's lower tournament (`left`) against those of its higher one
    j = left.join(right, on=["tb", *_SHORT_KEY], nulls_equal=True)
    found = {(min(a, b), max(a, b)) for a, b in zip(j["cls"].to_list(), j["cls_b"].to_list(), strict=True)}
    reps.update(_reps(classes, {x for pair in found for x in pair} - reps.keys()))
    return {(a, b) for a, b in found if (a, b) not in rules and event_dated_short(reps[a], reps[b], spans)}


_COMP_SCHEMA = {"cls": pl.UInt32, "comp": pl.UInt32}


def _candidate_pairs(classes: pl.DataFrame, events: set[tuple[int, int]], near: pl.DataFrame) -> list[tuple[int, int]]:
    """Class pairs (lower class first) that `match_rule` can link, found by joins: the same players
    and round in two tournaments of one event, or equal moves of the same players in one round or
    with a round missing on one side, in one tournament or in two `near` (`identity.near_pairs`:
    columns ta, tb; `match_rule` rejects two tournaments whose days allow no one event). Every other
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


def _reps(classes: pl.DataFrame, wanted: set[int]) -> dict[int, GameRow]:
    """A `GameRow` standing for each wanted class (the `_CLASS_KEY` columns; the rest is not read by
    `match_rule`)."""
    sel = classes.filter(pl.col("cls").is_in(sorted(wanted)))
    cols = ("cls", "tournament_id", "round", "white_id", "black_id", "result", "movetext_hash", "ply_count",
            "game_date", "day_precise", "rate_class", "cut", "round_label")  # fmt: skip
    # column lists zipped: a named dict per row costs more than the rest of the loop
    return {
        c: GameRow(
            0, tid, 0, "", rnd, white, black, result, mh, plies, day, precise, label, None, rate_class=rc, cut=cut
        )
        for c, tid, rnd, white, black, result, mh, plies, day, precise, rc, cut, label in zip(
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
