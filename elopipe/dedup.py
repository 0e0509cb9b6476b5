"""Cross-source game deduplication: one canonical game per game played, every source row kept.

The same game reaches the store from several files: the TRF and the PGN of one event, two PGN
exports with different headers, a broadcast file updated during the event. `link_file` finds them
and writes `game_sources`; the `canonical_games` view (what the rating engines read) then hides
every source row that is not its cluster's canonical row.

Two rows are the same game when (rule names as written to ``game_sources.match_rule``):

* their tournaments are the same event (`identity.same_event`: same event key and dates that
  overlap or are unknown) or their dates overlap (within `identity.DATE_SLACK_DAYS`);
* they have the same white and black players after identity resolution;
* ``round_players``: the same main round; ``+hash`` when both have moves and the movetext hashes
  are equal. Different hashes veto the match unless one side is an unfinished broadcast game
  (result ``*``, moves still growing: ``+broadcast``) or both have the same result and number of
  plies (the same moves written differently, e.g. an over-disambiguated ``Ngf3``: ``+plies``);
  Two differently named events whose dates overlap are sources of one event only when at least
  half of the games they both seem to hold have the same result (`_event_agreement`): then a
  differing result is a correction (``;result_differs``); else they are two events (a weekend
  congress inside a club championship, same pairings) and only equal moves make two rows one
  game. Differently named events of two rates of play (rapid and blitz of one day) never share
  a game;
* without a round on either side: ``hash_players`` (equal movetext hash) only;
* two rows of one tournament (one file) only when their movetext hashes are equal.

Canonical row of a cluster (precedence, independent of ingestion order): a final result before
``*``; then the TRF (the official record of results) before PGN; then the row of the fuller source
(the tournament with more games in its file: a full event export before a partial one, so one
event's games stay in one tournament); then the row with moves, the most plies; then the movetext
hash, round label, the game's index in its file, the event's name and start date, the result.
``game_sources.role``: 'canonical' (has result and moves, or nothing better exists), 'result'
(canonical without moves: its result counts), 'moves' (the row that supplies the moves of such a
game), 'duplicate' (every other row). A source
whose final result disagrees with the canonical one gets ``;result_differs`` in its match_rule.

Errors: none raised on data; SQL errors propagate (the loader rolls back the file).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import duckdb
import polars as pl

from elopipe.identity import dates_overlap, near_tournaments, same_event, tournament_spans


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


def link_file(con: duckdb.DuckDBPyConnection, file_id: int) -> int:
    """Re-link the games of `file_id`'s events (this file's tournaments, every tournament that is
    the same event or overlaps in dates, and any tournament already linked to them). Replaces
    their `game_sources` rows. Returns the number of clusters of two or more rows."""
    tids = {r[0] for r in con.execute("SELECT tournament_id FROM tournaments WHERE file_id = ?", [file_id]).fetchall()}
    if not tids:
        return 0
    return _relink(con, _related(con, tids))


def relink_all(con: duckdb.DuckDBPyConnection) -> int:
    """Rebuild `game_sources` for the whole store (after a manual merge or split). Returns the
    number of clusters of two or more rows."""
    tids = {r[0] for r in con.execute("SELECT tournament_id FROM tournaments").fetchall()}
    con.execute("DELETE FROM game_sources")
    return _relink(con, tids) if tids else 0


def relink_tournaments(con: duckdb.DuckDBPyConnection, tids: set[int]) -> int:
    """Re-link the games of these tournaments and of every tournament related to them (after
    player merges). Returns the number of clusters of two or more rows."""
    return _relink(con, _related(con, set(tids))) if tids else 0


def related_tournaments(con: duckdb.DuckDBPyConnection, tids: set[int]) -> set[int]:
    """The tournaments `relink_tournaments(con, tids)` re-links: these, every tournament of the same
    event or overlapping in dates, and any tournament already linked to them."""
    return _related(con, set(tids)) if tids else set()


def relink_group(con: duckdb.DuckDBPyConnection, tids: set[int]) -> int:
    """Re-link the games of exactly these tournaments (see `related_tournaments`). Returns the
    number of clusters of two or more rows."""
    return _relink(con, tids) if tids else 0


def _related(con: duckdb.DuckDBPyConnection, tids: set[int]) -> set[int]:
    near = near_tournaments(con, tids)
    spans = tournament_spans(con, near)
    group = set(tids)
    for t in tids:
        span = spans.get(t)
        if span is None:
            continue
        for o in near:
            ospan = spans[o]
            if o not in group and (same_event(span, ospan) or dates_overlap(span[1], span[2], ospan[1], ospan[2])):
                group.add(o)
    # tournaments of games already clustered with the group (e.g. left by a replaced file)
    linked = con.execute(
        """
        WITH ends AS (  -- both ends of every link, each way: equality joins, not an IN join
            SELECT game_id AS a, source_game_id AS b FROM game_sources
            UNION ALL SELECT source_game_id, game_id FROM game_sources
        )
        SELECT DISTINCT g2.tournament_id FROM ends
        JOIN games g1 ON g1.game_id = ends.a
        JOIN games g2 ON g2.game_id = ends.b
        WHERE g1.tournament_id IN (SELECT UNNEST(?))
        """,
        [sorted(group)],
    ).fetchall()
    group |= {r[0] for r in linked}
    return group


def _match(a: _G, b: _G, spans: dict, agree: dict[tuple[int, int], bool] | None = None) -> str | None:
    """The rule by which two rows (same players) are one game, or None.

    `agree` (`_event_agreement`): for two differently named tournaments with overlapping dates,
    whether most of the games they both seem to hold have the same result: if not, they are
    two events (a weekend congress inside a club championship, same pairings), and only equal
    moves make two of their rows one game."""
    both_moves = a.movetext_hash is not None and b.movetext_hash is not None
    same_hash = both_moves and a.movetext_hash == b.movetext_hash
    if a.tournament_id == b.tournament_id:
        return "same_file_hash" if same_hash and a.round == b.round else None
    sa, sb = spans.get(a.tournament_id), spans.get(b.tournament_id)
    if sa is None or sb is None:
        return None
    one_event = same_event(sa, sb)
    if not one_event and a.rate_class and b.rate_class and a.rate_class != b.rate_class:
        # two differently named events at two rates of play (a rapid and a blitz event of one
        # day); one event's sources may disagree on the class (a TRF time control misread)
        return None
    if not (one_event or dates_overlap(sa[1], sa[2], sb[1], sb[2])):
        return None
    if a.day_precise and b.day_precise and a.game_date and b.game_date:
        if abs((a.game_date - b.game_date).days) > 1:
            return None
    if a.round is None or b.round is None:
        return "hash_players" if same_hash else None
    if a.round != b.round:
        return None
    if not same_hash and not one_event and agree is not None:
        key = (min(a.tournament_id, b.tournament_id), max(a.tournament_id, b.tournament_id))
        if not agree.get(key, True):
            return None
    if both_moves and not same_hash:
        if "*" in (a.result, b.result):
            return "round_players+broadcast"
        # same length and result: the SAN is written differently ('Ngf3' for 'Nf3'), same game
        if a.result == b.result and a.ply_count and a.ply_count == b.ply_count:
            return "round_players+plies"
        return None
    if same_hash:
        return "round_players+hash"
    return "round_players"


def _event_agreement(df: pl.DataFrame) -> dict[tuple[int, int], bool]:
    """For each pair of tournaments (lower id first) holding games of the same players in the
    same round, both with a final result: True when at least half of those games have the same
    result (or equal moves). Two sources of one event agree but for a correction or a typo; two
    events that share pairings (a weekend congress inside a club championship) do not, and a
    single shared game with two results is no evidence of one event."""
    # equal rows collapsed to one with a weight first: copies of a game inside one tournament
    # (a file holding an export twice) would make the pairs quadratic; the pair counts are the
    # products of the weights, so the sums are those of the row pairs
    g = (
        df.filter(pl.col("round").is_not_null() & (pl.col("result") != "*"))
        .group_by("tournament_id", "white_id", "black_id", "round", "result", "movetext_hash")
        .agg(pl.len().cast(pl.Int64).alias("w"))
    )
    pairs = g.join(g, on=["white_id", "black_id", "round"], suffix="_b").filter(
        pl.col("tournament_id") < pl.col("tournament_id_b")
    )
    if pairs.is_empty():
        return {}
    same = (pl.col("result") == pl.col("result_b")) | (
        pl.col("movetext_hash").is_not_null() & (pl.col("movetext_hash") == pl.col("movetext_hash_b"))
    )
    w = pl.col("w") * pl.col("w_b")
    stats = pairs.group_by("tournament_id", "tournament_id_b").agg(
        pl.when(same).then(w).otherwise(0).sum().alias("agree"), w.sum().alias("n")
    )
    return {(a, b): 2 * agree >= n for a, b, agree, n in stats.iter_rows()}


def _precedence(g: _G) -> tuple:
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


# Columns that decide `_match`: rows equal on these (a "class") match other rows alike.
_CLASS_KEY = [
    "white_id", "black_id", "tournament_id", "round", "movetext_hash", "result", "ply_count", "game_date",
    "day_precise", "rate_class",
]  # fmt: skip


def _load_frame(con: duckdb.DuckDBPyConnection, tids: set[int]) -> pl.DataFrame:
    # event_games: every game of the tournament, also those without both players
    return con.sql(
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
    ).pl()


def _relink(con: duckdb.DuckDBPyConnection, tids: set[int]) -> int:
    """Rebuild the `game_sources` rows of the games of `tids` (see the module docstring).

    Rows are grouped into classes (equal on `_CLASS_KEY`, so `_match` gives the same answer for
    any row of a class), classes are linked per (white, black) bucket in Python, and the
    canonical row, roles and rules of each cluster are computed on the frame."""
    df = _load_frame(con, tids)
    if df.height and con.execute("SELECT EXISTS (SELECT 1 FROM game_sources)").fetchall()[0][0]:
        # the ids as a registered frame, not a list parameter (a large file's list costs more to
        # pass than the delete); nothing to delete in a store without links
        con.register("_relink_ids", df.select("game_id"))
        con.execute(
            "DELETE FROM game_sources WHERE game_id IN (SELECT game_id FROM _relink_ids)"
            " OR source_game_id IN (SELECT game_id FROM _relink_ids)"
        )
        con.unregister("_relink_ids")
    spans = tournament_spans(con, tids)
    agree = _event_agreement(df)
    df = df.with_row_index("pos").filter(pl.len().over("white_id", "black_id") >= 2)
    if df.is_empty():
        return 0
    classes = df.group_by(_CLASS_KEY, maintain_order=True).agg(pl.col("pos"), pl.len().alias("n"))
    # column lists zipped: a named dict per row costs more than the rest of the loop
    reps = [
        _G(0, tid, 0, "", rnd, white, black, result, mh, plies, day, precise, None, None, rate_class=rc)
        for tid, rnd, white, black, result, mh, plies, day, precise, rc in zip(
            *(classes[c].to_list() for c in (
                "tournament_id", "round", "white_id", "black_id", "result", "movetext_hash", "ply_count",
                "game_date", "day_precise", "rate_class",
            )),
            strict=True,
        )
    ]  # fmt: skip
    sizes = classes["n"].to_list()
    parent = list(range(len(reps)))

    def find(x: int) -> int:
        root = x
        while parent[root] != root:
            root = parent[root]
        while x != root:
            parent[x], x = root, parent[x]
        return root

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    buckets: dict[tuple[int, int], list[int]] = {}
    for c, r in enumerate(reps):
        buckets.setdefault((r.white_id, r.black_id), []).append(c)
    related: dict[tuple[int, int], bool] = {}
    for bucket in buckets.values():
        _link_classes(bucket, reps, spans, related, union, agree)
    # a cluster: linked classes, or one class of rows with the same moves (same_file_hash)
    comp_classes: dict[int, list[int]] = {}
    for c in range(len(reps)):
        comp_classes.setdefault(find(c), []).append(c)
    comp_of = [-1] * len(reps)
    for root, cs in comp_classes.items():
        if len(cs) > 1 or (reps[cs[0]].movetext_hash is not None and sizes[cs[0]] > 1):
            for c in cs:
                comp_of[c] = root
    # every row is in exactly one class: the class map sorted by row lines up with the rows
    # (which are in `pos` order), so the columns are put side by side instead of joined
    cls_map = (
        classes.select(
            pl.col("pos"),
            pl.Series("cls", range(len(reps)), dtype=pl.Int64),
            pl.Series("comp", comp_of, dtype=pl.Int64),
        )
        .explode("pos")
        .sort("pos")
    )
    g = df.with_columns(cls_map["cls"], cls_map["comp"]).filter(pl.col("comp") >= 0)
    if g.is_empty():
        return 0
    # precedence (`_precedence`), clusters in order of their first row
    g = g.with_columns(pl.col("pos").min().over("comp").alias("first")).sort(
        [
            pl.col("first"),
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
    )
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
        pl.Series("rule", [_match(reps[a], reps[b], spans, agree) for a, b in pairs.iter_rows()], dtype=pl.Utf8)
    )
    g = g.join(pair_rule, on=["canon_cls", "cls"], how="left", maintain_order="left").with_columns(
        pl.when(pl.col("rank") == 0).then(pl.lit("canonical")).otherwise(pl.col("rule")).alias("rule")
    )
    missing = g.filter(pl.col("rule").is_null())
    if missing.height:
        # no direct match with the canonical row: the rule of the first row in precedence order
        # that matches this one directly
        fixed: dict[int, str] = {}
        for comp, game_id, cls in missing.select("comp", "game_id", "cls").iter_rows():
            members = g.filter(pl.col("comp") == comp).select("game_id", "cls").rows()
            fixed[game_id] = next(
                (
                    r
                    for o_id, o_cls in members
                    if o_id != game_id and (r := _match(reps[o_cls], reps[cls], spans, agree))
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
    con.register("_game_sources_df", out)
    con.execute("INSERT INTO game_sources BY NAME SELECT * FROM _game_sources_df")
    con.unregister("_game_sources_df")
    return g["comp"].n_unique()


def _link_classes(
    bucket: list[int],
    reps: list[_G],
    spans: dict,
    related: dict[tuple[int, int], bool],
    union,
    agree: dict[tuple[int, int], bool] | None = None,
) -> None:
    """Union the classes of one (white, black) bucket that `_match` links, comparing only where a
    match is possible: the same round (other tournament), or the same movetext hash when a round
    is missing. Classes of one tournament with the same round and hash are one game."""
    if len(bucket) < 2:
        return
    same_file: dict[tuple, int] = {}
    tournaments = set()
    by_round: dict[int, list[int]] = {}
    by_hash: dict[str, list[int]] = {}
    for c in bucket:
        r = reps[c]
        tournaments.add(r.tournament_id)
        if r.movetext_hash is not None:
            first = same_file.setdefault((r.tournament_id, r.round, r.movetext_hash), c)
            if first != c:
                union(first, c)
            by_hash.setdefault(r.movetext_hash, []).append(c)
        if r.round is not None:
            by_round.setdefault(r.round, []).append(c)
    if len(tournaments) < 2:
        return
    cands: list[tuple[int, int]] = []
    for group in by_round.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if reps[a].tournament_id != reps[b].tournament_id:
                    cands.append((a, b))
    for group in by_hash.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                ra, rb = reps[a], reps[b]
                if ra.tournament_id != rb.tournament_id and (ra.round is None or rb.round is None):
                    cands.append((a, b))
    for a, b in cands:
        ra, rb = reps[a], reps[b]
        tp = (ra.tournament_id, rb.tournament_id)
        ok = related.get(tp)
        if ok is None:
            sa, sb = spans.get(ra.tournament_id), spans.get(rb.tournament_id)
            ok = related[tp] = (
                sa is not None
                and sb is not None
                and (same_event(sa, sb) or bool(dates_overlap(sa[1], sa[2], sb[1], sb[2])))
            )
        if ok and _match(ra, rb, spans, agree) is not None:
            union(a, b)
