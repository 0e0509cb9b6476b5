"""Consolidation: player links that later evidence makes certain, made once per batch of files.

A player seen first under an abbreviated name, or in a source with no ID, is merged with the
person later evidence shows them to be (same event's other sources, same name and birth year);
see `consolidate`.
"""

from __future__ import annotations

import duckdb

from elopipe.identity import dedup, same_game
from elopipe.identity.apart import any_apart, rated_entries
from elopipe.identity.decisions import Batch, IdentityError, merge_into
from elopipe.identity.nearby import DATE_SLACK_DAYS
from elopipe.read.names import names_compatible
from elopipe.store.frames import id_frame, registered

# a player row as these queries read it: (player_id, name_key, fide_id, national_id, birth_year)
_PlayerRow = tuple[int, str, int | None, str | None, int | None]


def consolidate(
    con: duckdb.DuckDBPyConnection,
    file_ids: list[int],
    max_rounds: int = 3,
    relinked_next: set[int] | None = None,
) -> list[int]:
    """Merge players that the rules now identify, whatever order the files came in (called by the
    loader once per batch, with the batch's file ids). Without it, 'Carlsen,M' loaded before and
    after 'Carlsen, Magnus' could end as one player or two.

    Two players, one of them touched (an entry in the batch's files, or a player a merge of this
    call kept), are merged, kept = the one with a FIDE ID, else the fuller name, else the lower
    id, when nothing contradicts it (FIDE ID, national ID, birth year; never two entries of one
    tournament; never a pair an officer split):
    * 'name': they are the only players with that name key (`_same_name_groups`);
    * 'initials_context': in one event's sources (same event key, dates overlapping: the events of
      the batch's tournaments, and of the players a merge of this call kept), each is the only
      abbreviation-compatible player of the other (`_initials_pairs`);
    * 'same_game': a game of the batch's files and a game of another source are one game (same
      date, round, result and moves) whose players' names agree, under two spellings
      (`identity.same_game`; first pass only: it compares games, which later passes do not add).
      The merge's reason gives the games.
    Up to `max_rounds` passes: a merge can make another pair certain. Each merge is recorded in
    `player_merges` (decided_by 'rule:<rule>'), and the games of the tournaments of the kept
    players are re-linked (`dedup`), unless every tournament that re-link covers is in
    `relinked_next` (the tournaments the caller re-links right after).
    Returns merged ids. Errors: SQL errors propagate (the loader rolls back)."""
    files = sorted(set(file_ids))
    if not files:
        return []
    touched: set[int] = set()
    anchors: set[int] = set()
    for tid, pid in con.execute(
        "SELECT DISTINCT tournament_id, player_id FROM tournament_players WHERE file_id IN (SELECT UNNEST(?))", [files]
    ).fetchall():
        anchors.add(tid)
        touched.add(pid)
    merged: list[int] = []
    kept_ids: set[int] = set()
    batch = Batch(con)
    name_seeds = set(touched)
    for round_no in range(max_rounds):
        pairs = _same_name_groups(con, name_seeds) + _initials_pairs(con, touched, anchors)
        reasons: dict[tuple[int, int], str] = {}
        if round_no == 0:
            pairs += _same_game_pairs(con, files, reasons)
        done = _merge_pairs(con, pairs, batch, reasons) if pairs else []
        batch.move_entries(con)  # the next pass reads the entries and aliases
        if not done:
            break
        new_kept = {k for k, _ in done}
        merged.extend(o for _, o in done)
        touched |= new_kept
        kept_ids |= new_kept
        if round_no + 1 < max_rounds:
            # A merge changes only the kept player (spellings, identifiers, events) and removes
            # the other: the next pass looks again only where that can give a new pair, the
            # kept players' names and the events holding one of their tournaments (elsewhere
            # it would find the pairs this pass found, each merged or refused already).
            name_seeds = new_kept
            anchors = _events_touching(con, _tournaments_of(con, new_kept), anchors)
    batch.flush(con)
    if merged:
        # only the kept players' games changed ids (the merged players' entries moved to them)
        kept_tids = _tournaments_of(con, kept_ids)
        # a re-link within the caller's next one is left to it: told first from a superset of
        # what it covers, without the pair verdicts (a PGN archive's merges: 0.06 CPU-s)
        if relinked_next is not None and dedup.related_bound(con, kept_tids) <= relinked_next:
            return merged
        related = dedup.related_tournaments(con, kept_tids)
        if relinked_next is None or not related <= relinked_next:
            dedup.relink_group(con, related)
    return merged


def _tournaments_of(con: duckdb.DuckDBPyConnection, player_ids: set[int]) -> set[int]:
    rows = con.execute(
        "SELECT DISTINCT tournament_id FROM tournament_players WHERE player_id IN (SELECT UNNEST(?))",
        [sorted(player_ids)],
    ).fetchall()
    return {r[0] for r in rows}


def _same_event_sql(a: str, o: str) -> str:
    """SQL condition: tournaments `a` and `o` (aliases of `tournaments` rows of the same event key)
    are sources of one event, as `same_event` says: one tournament, or dates unknown or
    overlapping within `DATE_SLACK_DAYS`."""
    return (
        f"({o}.tournament_id = {a}.tournament_id OR {a}.first_day IS NULL OR {o}.first_day IS NULL"
        f" OR ({a}.first_day - {DATE_SLACK_DAYS} <= coalesce({o}.last_day, {o}.first_day)"
        f" AND {o}.first_day - {DATE_SLACK_DAYS} <= coalesce({a}.last_day, {a}.first_day)))"
    )


def _events_touching(con: duckdb.DuckDBPyConnection, tids: set[int], anchors: set[int]) -> set[int]:
    """`tids`, and the tournaments of `anchors` that are sources of one event with one of `tids`
    (whose event, as `_initials_pairs` takes it, holds one of `tids`), by a join on the event key."""
    if not tids or not anchors:
        return set(tids)
    rows = con.execute(
        f"""
        WITH k AS (SELECT * FROM tournaments WHERE tournament_id IN (SELECT UNNEST($tids)) AND event_key <> '')
        SELECT DISTINCT t.tournament_id FROM tournaments t JOIN k ON t.event_key = k.event_key
        WHERE t.tournament_id IN (SELECT UNNEST($anchors)) AND {_same_event_sql("k", "t")}
        """,
        {"tids": sorted(tids), "anchors": sorted(anchors)},
    ).fetchall()
    return set(tids) | {r[0] for r in rows}


def _same_game_pairs(
    con: duckdb.DuckDBPyConnection, files: list[int], reasons: dict[tuple[int, int], str]
) -> list[tuple[int, int, str]]:
    """'same_game' pairs (kept, other, 'same_game') of `same_game.same_game_pairs`, kept by
    `_kept_first`; each pair's evidence goes to `reasons`."""
    links = same_game.same_game_pairs(con, files)
    if not links:
        return []
    rows = {
        r[0]: r
        for r in con.execute(
            "SELECT player_id, name_key, fide_id, national_id, birth_year FROM players"
            " WHERE player_id IN (SELECT UNNEST(?))",
            [sorted({p for lk in links for p in (lk.a, lk.b)})],
        ).fetchall()
    }
    out = []
    for lk in links:
        kept, other = _kept_first(rows[lk.a], rows[lk.b])
        reasons[(kept[0], other[0])] = f"automatic: {same_game.RULE}: {lk.evidence()}"
        out.append((kept[0], other[0], same_game.RULE))
    return out


def _merge_pairs(
    con: duckdb.DuckDBPyConnection,
    pairs: list[tuple[int, int, str]],
    batch: Batch,
    reasons: dict[tuple[int, int], str] | None = None,
) -> list[tuple[int, int]]:
    """Merge each pair (kept, other, rule), in order, as `merge_into` allows (the reason recorded:
    `reasons[(kept, other)]` when given, else 'automatic: <rule>'); returns the (kept, merged)
    ids merged. A pair is taken at its players' current ids (a pair met after one of its
    players was merged applies to the player it was merged into) and skipped when both are one
    player already, when an officer split them, when they share a tournament, or, for a merge by
    name ('name', 'initials_context'), when their TRF ratings are `apart`. Those checks
    read the store once for all the pairs, then follow this call's merges in memory."""
    ids = sorted({x for k, o, _ in pairs for x in (k, o)})
    final = {x: x for x in ids}
    final.update(
        con.execute(
            "SELECT player_id, COALESCE(merged_into, player_id) FROM players WHERE player_id IN (SELECT UNNEST(?))",
            [ids],
        ).fetchall()
    )
    tours: dict[int, set[int]] = {}
    for pid, tid in con.execute(
        "SELECT player_id, tournament_id FROM tournament_players WHERE player_id IN (SELECT UNNEST(?))",
        [sorted(set(final.values()))],
    ).fetchall():
        tours.setdefault(pid, set()).add(tid)
    by_name = any(rule in _NAME_RULES for _, _, rule in pairs)
    rated = rated_entries(con, set(final.values())) if by_name else {}
    split_pairs = {
        frozenset(r)
        for r in con.execute("SELECT kept_id, merged_id FROM player_merges WHERE action = 'split'").fetchall()
    }
    done: list[tuple[int, int]] = []
    for pair_kept, pair_other, rule in pairs:
        reason = (reasons or {}).get((pair_kept, pair_other), f"automatic: {rule}")
        kept, other = final[pair_kept], final[pair_other]
        if kept == other or frozenset((kept, other)) in split_pairs:
            continue
        if tours.get(kept, set()) & tours.get(other, set()):
            continue  # two entries of one tournament are two people
        if rule in _NAME_RULES and any_apart(rated.get(kept, ()), rated.get(other, ())):
            continue  # the same name, ratings far apart on the same days: two people
        try:
            merge_into(con, kept, other, reason, f"rule:{rule}", batch)
        except IdentityError:
            continue
        for x, f in final.items():
            if f == other:
                final[x] = kept
        tours.setdefault(kept, set()).update(tours.pop(other, set()))
        rated.setdefault(kept, []).extend(rated.pop(other, []))
        done.append((kept, other))
    return done


# merges on a name's evidence alone, which ratings far apart refute (`identity.apart`)
_NAME_RULES = ("name", "initials_context")


def _kept_first(a: _PlayerRow, b: _PlayerRow) -> tuple[_PlayerRow, _PlayerRow]:
    """(kept, other) of two player rows (player_id, name_key, fide_id, ...)."""

    def rank(r: _PlayerRow) -> tuple[bool, int, int]:
        return (r[2] is None, -len(r[1]), r[0])

    return (a, b) if rank(a) <= rank(b) else (b, a)


def _compatible_rows(a: _PlayerRow, b: _PlayerRow) -> bool:
    # rows: (player_id, name_key, fide_id, national_id, birth_year)
    return all(not (a[i] and b[i] and a[i] != b[i]) for i in (2, 3, 4))


def _same_name_groups(con: duckdb.DuckDBPyConnection, touched: set[int]) -> list[tuple[int, int, str]]:
    """'name' pairs (kept, other, 'name'): a name key spelled (as a player's name key or one of its
    aliases) by exactly two unmerged players, at least one of them touched, the lower id's name
    key not empty and nothing contradicting (`_compatible_rows`). Starts from the touched
    players' keys and joins players and aliases on `name_key`, so the cost follows those keys."""
    if not touched:
        return []
    with registered(con, "_name_seeds", id_frame(sorted(touched))):
        rows = con.execute(_SAME_NAME_SQL).fetchall()
    out = []
    for r in rows:
        a, b = r[:5], r[5:]
        if _compatible_rows(a, b):
            kept, other = _kept_first(a, b)
            out.append((kept[0], other[0], "name"))
    return out


# the seeds as a registered frame `_name_seeds` (player_id): a batch's tens of thousands
# (`id_frame`)
_SAME_NAME_SQL = """
        WITH live AS (
            SELECT player_id FROM players WHERE player_id IN (SELECT player_id FROM _name_seeds)
              AND merged_into IS NULL
        ),
        keys AS (
            SELECT p.name_key FROM players p JOIN live USING (player_id) WHERE p.name_key <> ''
            UNION SELECT a.name_key FROM player_aliases a JOIN live USING (player_id) WHERE a.name_key <> ''
        ),
        spelled AS (
            SELECT p.player_id, p.name_key AS k FROM players p JOIN keys USING (name_key)
            WHERE p.merged_into IS NULL
            UNION SELECT a.player_id, a.name_key FROM player_aliases a JOIN keys USING (name_key)
            JOIN players p ON p.player_id = a.player_id WHERE p.merged_into IS NULL
        ),
        two AS (  -- three namesakes or more: not certain enough
            SELECT k, min(player_id) AS a, max(player_id) AS b FROM spelled GROUP BY k
            HAVING count(DISTINCT player_id) = 2
        )
        SELECT DISTINCT x.player_id, x.name_key, x.fide_id, x.national_id, x.birth_year,
               y.player_id, y.name_key, y.fide_id, y.national_id, y.birth_year
        FROM two JOIN players x ON x.player_id = two.a JOIN players y ON y.player_id = two.b
        WHERE x.name_key <> ''
        ORDER BY 1, 6
"""


# Names with more full tokens than this (hardly any) have their subsets of tokens not listed
# (`_initials_pairs`): 2**6 - 1 subsets at most per name.
_SUBSET_CAP = 6


def _events_sql() -> str:
    """CTEs (after WITH) of `_initials_pairs`: the events of the tournaments `$anchors` (`ag`: anchor,
    gid, members), their players (`gp`: gid, player_id), the unmerged ones' full name tokens
    (`pst`: sorted, distinct; `fkey` joins them; `subs` lists the `fkey` of every non-empty subset
    of them, for names of at most `_SUBSET_CAP` full tokens) and the tokens of the names with
    more (`big`: gid, player_id, tok)."""
    return f"""
        anchor AS (
            SELECT tournament_id, event_key, first_day, last_day FROM tournaments
            WHERE tournament_id IN (SELECT UNNEST($anchors)) AND event_key <> ''
        ),
        member AS (  -- `same_event`, by a join on the event key
            SELECT a.tournament_id AS anchor, o.tournament_id
            FROM anchor a JOIN tournaments o ON o.event_key = a.event_key WHERE {_same_event_sql("a", "o")}
        ),
        ev AS (
            SELECT anchor, list(tournament_id ORDER BY tournament_id) AS members FROM member
            GROUP BY anchor HAVING count(*) > 1
        ),
        -- one event once, named by its lowest anchor (two anchors may have the same sources)
        ag AS (SELECT anchor, min(anchor) OVER (PARTITION BY members) AS gid, members FROM ev),
        gp AS (
            SELECT DISTINCT g.gid, tp.player_id
            FROM (SELECT gid, UNNEST(members) AS tournament_id FROM ag WHERE anchor = gid) g
            JOIN tournament_players tp USING (tournament_id)
        ),
        pst AS (
            SELECT player_id, name_key, fulls, len(fulls) AS nfull, len(string_split(name_key, ' ')) AS ntok,
                   array_to_string(fulls, ' ') AS fkey,
                   CASE WHEN len(fulls) <= {_SUBSET_CAP} THEN list_transform(
                       range(1, (1 << len(fulls))::BIGINT),
                       lambda m: array_to_string(list_filter(fulls, lambda t, i: ((m >> (i - 1)) & 1) = 1), ' ')
                   ) ELSE [] END AS subs
            FROM (
                SELECT player_id, name_key,
                       list_sort(list_distinct(list_filter(string_split(name_key, ' '), lambda t: length(t) > 2)))
                       AS fulls
                FROM players WHERE player_id IN (SELECT player_id FROM gp) AND merged_into IS NULL
            )
        ),
        psub AS (SELECT player_id, UNNEST(subs) AS sub FROM pst),
        big AS (
            SELECT gp.gid, gp.player_id, UNNEST(pst.fulls) AS tok
            FROM gp JOIN pst USING (player_id) WHERE pst.nfull > {_SUBSET_CAP}
        ),
    """


def _near_pairs_sql(seeds: str) -> str:
    """SELECT of the candidate pairs (gid, x, y) of the players `seeds` (gid, player_id) within
    their events (`_events_sql`): the players y of the event such that the full tokens of one of
    the two, with two tokens or more, are all tokens of the other, and whose keys differ. A
    necessary condition of `names_compatible` (`_covers` needs every full token of the shorter
    name in the longer one), so `names_compatible` runs only on these pairs.

    Found by equality joins: the shorter name's `fkey` is one of the longer name's `subs`; when
    the longer name has too many tokens to list its subsets, the shorter name's first full token
    is one of its tokens (`big`), and the subset is checked on those few pairs. Joining on every
    shared token would pair everyone with a common given name."""
    return f"""
        SELECT DISTINCT c.gid, c.x, c.y FROM (
            SELECT s.gid, s.player_id AS x, gp.player_id AS y, TRUE AS subset  -- x the shorter
            FROM {seeds} s JOIN pst px USING (player_id) JOIN psub ON psub.sub = px.fkey
            JOIN gp ON gp.gid = s.gid AND gp.player_id = psub.player_id
            WHERE px.ntok >= 2
            UNION ALL
            SELECT s.gid, s.player_id, gp.player_id, TRUE  -- y the shorter
            FROM {seeds} s JOIN psub USING (player_id) JOIN pst py ON py.fkey = psub.sub
            JOIN gp ON gp.gid = s.gid AND gp.player_id = py.player_id
            WHERE py.ntok >= 2
            UNION ALL
            SELECT s.gid, s.player_id, b.player_id, FALSE  -- x the shorter, y a long name
            FROM {seeds} s JOIN pst px USING (player_id) JOIN big b ON b.gid = s.gid AND b.tok = px.fulls[1]
            UNION ALL
            SELECT s.gid, s.player_id, gp.player_id, FALSE  -- y the shorter, x a long name
            FROM {seeds} s JOIN big b USING (gid, player_id) JOIN pst py ON py.fulls[1] = b.tok
            JOIN gp ON gp.gid = s.gid AND gp.player_id = py.player_id
        ) c JOIN pst px ON px.player_id = c.x JOIN pst py ON py.player_id = c.y
        WHERE c.x <> c.y AND px.name_key <> py.name_key
          AND (c.subset OR (px.ntok >= 2 AND len(list_intersect(px.fulls, py.fulls)) = px.nfull)
               OR (py.ntok >= 2 AND len(list_intersect(px.fulls, py.fulls)) = py.nfull))
    """


# Whether a tournament of `$anchors` has an event of two sources or more (`ev` of `_events_sql`:
# another tournament of its event key, `same_event`), on the tournaments' keys and days only
_ANY_EVENT_SQL = f"""
WITH anchor AS (
    SELECT tournament_id, event_key, first_day, last_day FROM tournaments
    WHERE tournament_id IN (SELECT UNNEST($anchors)) AND event_key <> ''
)
SELECT EXISTS (SELECT 1 FROM anchor a JOIN tournaments o ON o.event_key = a.event_key
               WHERE o.tournament_id <> a.tournament_id AND {_same_event_sql("a", "o")})
"""


def _initials_pairs(con: duckdb.DuckDBPyConnection, touched: set[int], anchors: set[int]) -> list[tuple[int, int, str]]:
    """'initials_context' pairs (kept, other, 'initials_context').

    The event of a tournament t of `anchors`: t and the tournaments of its event key whose dates
    overlap t's or are unknown (`same_event`), when there are two or more. A touched player x with
    an entry in t and another unmerged player y of t's event are a pair when their names are
    abbreviation-compatible (`names_compatible`), nothing contradicts (`_compatible_rows`), and
    each is the only such player of the other in that event.

    Computed by joins (`_events_sql`, `_near_pairs_sql`): the events by the event key and dates;
    the candidates of the seeds x (pairs whose full name tokens, on one side, are a subset of the
    other's), then the candidates of those candidates, which decide their uniqueness;
    `names_compatible` runs on these pairs only, and stops at a player's second compatible one.
    The other players of a generic event ('Open') whose sources are many are never compared with
    each other. Errors: SQL errors propagate."""
    if not touched or not anchors:
        return []
    # every pair lies in an event of two sources or more: a batch whose tournaments have no other
    # source (a new event) skips the joins below, whose plan costs ~0.015 CPU-s on no rows (issue 27)
    if not con.execute(_ANY_EVENT_SQL, {"anchors": sorted(anchors)}).fetchall()[0][0]:
        return []
    # the touched players as a registered frame: a batch's tens of thousands (`id_frame`)
    with registered(con, "_initials_touched", id_frame(sorted(touched))):
        rows = con.execute(
            f"""
            WITH {_events_sql()}
            seed1 AS (
                SELECT DISTINCT ag.gid, tp.player_id FROM ag JOIN tournament_players tp ON tp.tournament_id = ag.anchor
                WHERE tp.player_id IN (SELECT player_id FROM _initials_touched)
            ),
            near1 AS ({_near_pairs_sql("seed1")}),
            seed2 AS (SELECT gid, player_id FROM seed1 UNION SELECT gid, y FROM near1),
            near2 AS ({_near_pairs_sql("seed2")})
            SELECT near2.gid, near2.x, near2.y, seed1.player_id IS NOT NULL
            FROM near2 LEFT JOIN seed1 ON seed1.gid = near2.gid AND seed1.player_id = near2.x
            ORDER BY 1, 2, 3
            """,
            {"anchors": sorted(anchors)},
        ).fetchall()
    cands: dict[tuple[int, int], list[int]] = {}
    seeds: list[tuple[int, int]] = []
    for gid, x, y, seed in rows:
        if (gid, x) not in cands and seed:
            seeds.append((gid, x))
        cands.setdefault((gid, x), []).append(y)
    if not seeds:
        return []
    attrs = {
        r[0]: r
        for r in con.execute(
            "SELECT player_id, name_key, fide_id, national_id, birth_year FROM players"
            " WHERE player_id IN (SELECT UNNEST(?))",
            [sorted({p for ys in cands.values() for p in ys} | {x for _, x in cands})],
        ).fetchall()
    }
    known: dict[tuple[int, int], bool] = {}

    def compatible(gid: int, x: int) -> list[int]:
        """The first two players of x's event that x's name is compatible with (two: not unique)."""
        found: list[int] = []
        for y in cands.get((gid, x), ()):
            pair = (min(x, y), max(x, y))
            ok = known.get(pair)
            if ok is None:
                ok = known[pair] = names_compatible(attrs[x][1], attrs[y][1]) and _compatible_rows(attrs[x], attrs[y])
            if ok:
                found.append(y)
                if len(found) == 2:
                    break
        return found

    out: list[tuple[int, int, str]] = []
    seen: set[tuple[int, int]] = set()
    for gid, x in seeds:
        mine = compatible(gid, x)
        # x's candidates are complete, and so are those of y (a candidate of a seed is a seed
        # of the second step)
        if len(mine) != 1 or compatible(gid, mine[0]) != [x]:
            continue
        pair = (min(x, mine[0]), max(x, mine[0]))
        if pair not in seen:  # the same pair through another seed or event: once
            seen.add(pair)
            kept, other = _kept_first(attrs[pair[0]], attrs[pair[1]])
            out.append((kept[0], other[0], "initials_context"))
    return out
