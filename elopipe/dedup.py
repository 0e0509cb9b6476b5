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
* without a round on either side: ``hash_players`` (equal movetext hash) only;
* two rows of one tournament (one file) only when their movetext hashes are equal.

Canonical row of a cluster (precedence, independent of ingestion order): a final result before
``*``; then the TRF (the official record of results) before PGN; then the row with moves, the most
plies; then the movetext hash, round label and the game's index in its file. ``game_sources.role``: 'canonical' (has
result and moves, or nothing better exists), 'result' (canonical without moves: its result counts),
'moves' (the row that supplies the moves of such a game), 'duplicate' (every other row). A source
whose final result disagrees with the canonical one gets ``;result_differs`` in its match_rule.

Errors: none raised on data; SQL errors propagate (the loader rolls back the file).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import duckdb
import polars as pl

from elopipe.identity import dates_overlap, same_event, tournament_spans


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


def _related(con: duckdb.DuckDBPyConnection, tids: set[int]) -> set[int]:
    spans = tournament_spans(con)
    group = set(tids)
    for t in tids:
        span = spans.get(t)
        if span is None:
            continue
        for o, ospan in spans.items():
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


def _load(con: duckdb.DuckDBPyConnection, tids: set[int]) -> list[_G]:
    rows = con.execute(
        """
        SELECT g.game_id, g.tournament_id, g.file_id, t.source_format, g.round, g.white_id, g.black_id,
               g.result, g.movetext_hash, g.ply_count, g.game_date, g.date_precision = 'day',
               g.round_label, g.game_index
        FROM games g JOIN tournaments t USING (tournament_id)
        WHERE g.tournament_id IN (SELECT UNNEST(?)) AND g.white_id IS NOT NULL AND g.black_id IS NOT NULL
        """,
        [sorted(tids)],
    ).fetchall()
    return [_G(*r) for r in rows]


def _match(a: _G, b: _G, spans: dict) -> str | None:
    """The rule by which two rows (same players) are one game, or None."""
    both_moves = a.movetext_hash is not None and b.movetext_hash is not None
    same_hash = both_moves and a.movetext_hash == b.movetext_hash
    if a.tournament_id == b.tournament_id:
        return "same_file_hash" if same_hash and a.round == b.round else None
    sa, sb = spans.get(a.tournament_id), spans.get(b.tournament_id)
    if sa is None or sb is None:
        return None
    if not (same_event(sa, sb) or dates_overlap(sa[1], sa[2], sb[1], sb[2])):
        return None
    if a.day_precise and b.day_precise and a.game_date and b.game_date:
        if abs((a.game_date - b.game_date).days) > 1:
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


def _precedence(g: _G) -> tuple:
    # only content decides (the loader links before the file's ledger row exists, and ids
    # depend on ingestion order); rows equal on all of it carry the same result anyway
    return (
        g.result == "*",
        g.fmt != "trf",
        g.movetext_hash is None,
        -(g.ply_count or 0),
        g.movetext_hash or "",
        g.round_label or "",
        g.game_index if g.game_index is not None else 0,
        g.game_id,
    )


def _relink(con: duckdb.DuckDBPyConnection, tids: set[int]) -> int:
    games = _load(con, tids)
    ids = [g.game_id for g in games]
    if ids:
        con.execute(
            "DELETE FROM game_sources WHERE game_id IN (SELECT UNNEST(?)) OR source_game_id IN (SELECT UNNEST(?))",
            [ids, ids],
        )
    spans = tournament_spans(con)
    buckets: dict[tuple[int, int], list[_G]] = {}
    for g in games:
        buckets.setdefault((g.white_id, g.black_id), []).append(g)
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while x != root:
            parent[x], x = root, parent[x]
        return root

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    related: dict[tuple[int, int], bool] = {}
    for bucket in buckets.values():
        if len(bucket) >= 2:
            _cluster_bucket(bucket, spans, related, union)
    clusters: dict[int, list[_G]] = {}
    linked = set(parent) | set(parent.values())
    for g in games:
        if g.game_id in linked:
            clusters.setdefault(find(g.game_id), []).append(g)
    rows = []
    for members in clusters.values():
        if len(members) < 2:
            continue
        members.sort(key=_precedence)
        canon = members[0]
        mover = None
        if canon.movetext_hash is None:
            mover = next((m for m in members[1:] if m.movetext_hash is not None), None)
        rows.append((canon.game_id, canon.game_id, canon.file_id, "canonical", "result" if mover else "canonical"))
        for m in members[1:]:
            # the rule of the canonical row's match, else of the first row (in precedence order)
            # that matches this one directly
            rule = _match(canon, m, spans) or next(
                (r for o in members if o is not m and (r := _match(o, m, spans)) is not None), "cluster"
            )
            if m.result != "*" and canon.result != "*" and m.result != canon.result:
                rule += ";result_differs"
            rows.append((canon.game_id, m.game_id, m.file_id, rule, "moves" if m is mover else "duplicate"))
    if rows:
        df = pl.DataFrame(
            rows,
            schema={"game_id": pl.Int64, "source_game_id": pl.Int64, "file_id": pl.Int64, "match_rule": pl.Utf8,
                    "role": pl.Utf8},
            orient="row",
        )  # fmt: skip
        con.register("_game_sources_df", df)
        con.execute("INSERT INTO game_sources BY NAME SELECT * FROM _game_sources_df")
        con.unregister("_game_sources_df")
    return sum(1 for m in clusters.values() if len(m) >= 2)


def _cluster_bucket(bucket: list[_G], spans: dict, related: dict[tuple[int, int], bool], union) -> None:
    """Union the rows of one (white, black) bucket that `_match` links, without comparing every
    pair: `_match` depends only on a row's tournament, round, hash, result, plies and date, so
    rows equal on those are compared once (as a class), and classes only where a match is
    possible (same round, or the same movetext hash when a round is missing)."""
    # same tournament: the same round and movetext hash, nothing else
    same_file: dict[tuple, int] = {}
    classes: dict[tuple, list[_G]] = {}
    for g in bucket:
        if g.movetext_hash is not None:
            first = same_file.setdefault((g.tournament_id, g.round, g.movetext_hash), g.game_id)
            if first != g.game_id:
                union(first, g.game_id)
        ck = (g.tournament_id, g.round, g.movetext_hash, g.result, g.ply_count, g.game_date, g.day_precise)
        classes.setdefault(ck, []).append(g)
    if len({g.tournament_id for g in bucket}) < 2:
        return
    reps = [members[0] for members in classes.values()]
    by_round: dict[int, list[_G]] = {}
    by_hash: dict[str, list[_G]] = {}
    for r in reps:
        if r.round is not None:
            by_round.setdefault(r.round, []).append(r)
        if r.movetext_hash is not None:
            by_hash.setdefault(r.movetext_hash, []).append(r)
    cands: list[tuple[_G, _G]] = []
    for group in by_round.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if a.tournament_id != b.tournament_id:
                    cands.append((a, b))
    for group in by_hash.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if a.tournament_id != b.tournament_id and (a.round is None or b.round is None):
                    cands.append((a, b))
    key_of = {id(members[0]): ck for ck, members in classes.items()}
    for a, b in cands:
        tp = (a.tournament_id, b.tournament_id)
        ok = related.get(tp)
        if ok is None:
            sa, sb = spans.get(a.tournament_id), spans.get(b.tournament_id)
            ok = related[tp] = (
                sa is not None
                and sb is not None
                and (same_event(sa, sb) or bool(dates_overlap(sa[1], sa[2], sb[1], sb[2])))
            )
        if not ok or _match(a, b, spans) is None:
            continue
        members = classes[key_of[id(a)]] + classes[key_of[id(b)]]
        for m in members[1:]:
            union(members[0].game_id, m.game_id)
