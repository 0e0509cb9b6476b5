"""Officer decisions on player identity: merge, split, and the review of likely duplicates.

`merge_players` and `split_player` are recorded in `player_merges` and re-applied to every newly
loaded batch of files (`apply_manual_decisions`); `elopipe.identity.suspects` lists likely
duplicates with the evidence. Errors: `IdentityError` (a ValueError) for a forbidden merge or an empty split.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb

# re-exported: the loader and the list import refresh names through this module
from elopipe.identity.display_names import refresh_display_names as refresh_display_names
from elopipe.identity.facts import refresh_player_facts
from elopipe.identity.known import fuller
from elopipe.identity.resolve import CONFIDENCE
from elopipe.read.names import event_key, name_key
from elopipe.runtime.errors import ElopipeError
from elopipe.store import write
from elopipe.store.frames import registered


class IdentityError(ElopipeError, ValueError):
    """A merge or split that the identity rules forbid (e.g. two different FIDE IDs)."""


_PLAYER_COLS = ("player_id", "fide_id", "national_id", "name", "name_key", "federation", "birth_year", "merged_into")


def _player(con: duckdb.DuckDBPyConnection, player_id: int) -> dict[str, Any]:
    rows = con.execute(f"SELECT {', '.join(_PLAYER_COLS)} FROM players WHERE player_id = ?", [player_id]).fetchall()
    if not rows:
        raise IdentityError(f"no player {player_id}")
    return dict(zip(_PLAYER_COLS, rows[0], strict=True))


def _final(con: duckdb.DuckDBPyConnection, pid: int) -> int:
    rows = con.execute("SELECT COALESCE(merged_into, player_id) FROM players WHERE player_id = ?", [pid]).fetchall()
    return rows[0][0] if rows else pid


def _rewrite(
    con: duckdb.DuckDBPyConnection, old: int, new: int, file_ids: list[int] | None = None, aliases: bool = True
) -> None:
    """Point every row of `old` (only those of the files `file_ids` when given) at `new`.
    `aliases`: False when the caller has moved `old`'s `player_aliases` rows already."""
    cond, args = ("", {}) if file_ids is None else (" AND file_id IN (SELECT UNNEST($files))", {"files": file_ids})
    ids = {"old": old, "new": new, **args}
    # a tournament where both already have an entry keeps the kept player's
    con.execute(
        "DELETE FROM tournament_players WHERE player_id = $old AND tournament_id IN "
        f"(SELECT tournament_id FROM tournament_players WHERE player_id = $new){cond}",
        ids,
    )
    con.execute(f"UPDATE tournament_players SET player_id = $new WHERE player_id = $old{cond}", ids)
    # both sides in one statement each (a statement costs more than the few rows it changes)
    con.execute(
        "UPDATE games SET white_id = CASE WHEN white_id = $old THEN $new ELSE white_id END,"
        " black_id = CASE WHEN black_id = $old THEN $new ELSE black_id END"
        f" WHERE (white_id = $old OR black_id = $old){cond}",
        ids,
    )
    con.execute(
        "UPDATE unplayed_rounds SET player_id = CASE WHEN player_id = $old THEN $new ELSE player_id END,"
        " opponent_id = CASE WHEN opponent_id = $old THEN $new ELSE opponent_id END"
        f" WHERE (player_id = $old OR opponent_id = $old){cond}",
        ids,
    )
    if aliases:
        con.execute(f"UPDATE player_aliases SET player_id = $new WHERE player_id = $old{cond}", ids)
    if file_ids is None:
        con.execute("UPDATE official_lists SET player_id = $new WHERE player_id = $old", ids)


def merge_players(
    con: duckdb.DuckDBPyConnection, kept_id: int, merged_id: int, reason: str, decided_by: str = "officer"
) -> int:
    """Merge player `merged_id` into `kept_id`: every row (games, tournament_players,
    unplayed_rounds, player_aliases, official_lists) is rewritten, `players.merged_into` is set so
    that re-ingested files resolve to the kept player, and the decision is recorded in
    `player_merges` (re-applied by `apply_manual_decisions`). Returns the merge_id.
    Raises IdentityError for an unknown player, a player merged with itself, two different
    FIDE IDs / national IDs (never merged), or two players with an entry in one tournament (two
    entries of one tournament are two people, as `consolidate` holds: merging them would drop one
    entry), and for two players that are one already (one was merged into the other: said so,
    where the shared entries were given as the reason)."""
    final_kept, final_merged = _final(con, kept_id), _final(con, merged_id)
    if kept_id != merged_id and final_kept == final_merged:
        was = merged_id if final_merged != merged_id else kept_id
        raise IdentityError(
            f"players {kept_id} and {merged_id} are one player already: {was} was merged into {final_kept}"
        )
    shared = con.execute(
        "SELECT t.tournament_id, t.name FROM tournaments t WHERE t.tournament_id IN"
        " (SELECT tournament_id FROM tournament_players WHERE player_id = ?"
        "  INTERSECT SELECT tournament_id FROM tournament_players WHERE player_id = ?) ORDER BY 1 LIMIT 1",
        [_final(con, kept_id), merged_id],
    ).fetchall()
    if shared:
        tid, tname = shared[0]
        raise IdentityError(
            f"players {kept_id} and {merged_id} both have an entry in tournament {tid} ({tname or 'no name'}):"
            " two entries of one tournament are two people; not merged"
        )
    return merge_into(con, kept_id, merged_id, reason, decided_by, None)


class Batch:
    """What `consolidate`'s merges leave to one pass at the end, because none of its decisions
    reads it: the kept players' display names (a player's spellings change only when another is
    merged into it, which adds it again, or when it is merged away, and `merge_into` refreshes it
    first), the player ids of `games` and `unplayed_rounds` (each moved id goes to the end of
    its chain of merges, where one UPDATE per merge would have taken it), and the `player_merges`
    rows (only the officers' splits are read back, and the transaction's `now()` is one time).
    The merged players' entries, aliases and official rows wait likewise until `move_entries`
    (`consolidate` calls it after each pass of merges, before it reads them again)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.stale_names: set[int] = set()
        self.moved: dict[int, int] = {}
        # (merged, kept, rule, confidence) of each merge whose entries and aliases have not moved yet
        self.entries: list[tuple[int, int, str, float]] = []
        self.decisions: list[tuple[int, int, str, str]] = []  # player_merges rows, in merge order
        # a store without official rows linked to a player has none to move (nothing here adds one)
        self.official = bool(con.execute("SELECT EXISTS (SELECT 1 FROM v_official_entries)").fetchall()[0][0])

    def move_entries(self, con: duckdb.DuckDBPyConnection) -> None:
        """Apply the pending merges to `tournament_players`, `player_aliases` and `official_lists`:
        each merged player's rows to the end of its chain of merges, its aliases with the last
        merge's rule and the least confidence of the chain (what one UPDATE per merge gave), in
        one statement a table."""
        if not self.entries:
            return
        import polars as pl

        step = {m: (k, rule, conf) for m, k, rule, conf in self.entries}
        rows = []
        for old in step:
            new, rule, conf = step[old]
            while new in step:
                new, rule, c = step[new]
                conf = min(conf, c)
            rows.append((old, new, rule, conf))
        self.entries = []
        schema = {"old": pl.Int32, "new": pl.Int32, "rule": pl.Utf8, "conf": pl.Float64}
        with registered(con, "_moved_entries", pl.DataFrame(rows, schema=schema, orient="row")):
            con.execute(
                "UPDATE tournament_players SET player_id = m.new FROM _moved_entries m"
                " WHERE tournament_players.player_id = m.old"
            )
            con.execute(
                "UPDATE player_aliases SET match_rule = m.rule, confidence = least(confidence, m.conf),"
                " player_id = m.new FROM _moved_entries m WHERE player_aliases.player_id = m.old"
            )
            if self.official:
                con.execute(
                    "UPDATE official_lists SET player_id = m.new FROM _moved_entries m"
                    " WHERE official_lists.player_id = m.old"
                )

    def flush(self, con: duckdb.DuckDBPyConnection) -> None:
        import polars as pl

        self.move_entries(con)
        if self.decisions:
            # ids drawn in merge order, as one nextval per merge would have drawn them
            n = len(self.decisions)
            ids = sorted(r[0] for r in con.execute("SELECT nextval('merge_id_seq') FROM range(?)", [n]).fetchall())
            rows = pl.DataFrame(
                [(mid, *d) for mid, d in zip(ids, self.decisions, strict=True)],
                schema={"merge_id": pl.Int32, "kept_id": pl.Int32, "merged_id": pl.Int32, "decided_by": pl.Utf8,
                        "reason": pl.Utf8},
                orient="row",
            )  # fmt: skip
            self.decisions = []
            write.insert(con, "player_merges", rows, exprs={"decided_at": "now()"}, constants={"action": "merge"})
        if self.stale_names:
            refresh_display_names(con, self.stale_names)
            refresh_player_facts(con, self.stale_names)  # the kept players' entries grew
            self.stale_names = set()
        if not self.moved:
            return

        def final(pid: int) -> int:
            while pid in self.moved:
                pid = self.moved[pid]
            return pid

        df = pl.DataFrame(
            {"old": list(self.moved), "new": [final(p) for p in self.moved]}, schema={"old": pl.Int32, "new": pl.Int32}
        )
        self.moved = {}
        # lent as an Arrow stream (`registered`): DuckDB's own `register` of a Polars frame imports
        # pyarrow and NumPy, ~0.05 CPU-s of an ingest that merges players and needs neither
        with registered(con, "_moved_players", df):
            for table, col in (("games", "white_id"), ("games", "black_id"), ("unplayed_rounds", "player_id"),
                               ("unplayed_rounds", "opponent_id")):  # fmt: skip
                con.execute(f"UPDATE {table} SET {col} = m.new FROM _moved_players m WHERE {table}.{col} = m.old")


def merge_into(
    con: duckdb.DuckDBPyConnection,
    kept_id: int,
    merged_id: int,
    reason: str,
    decided_by: str,
    batch: Batch | None,
) -> int:
    """`merge_players`. `batch` (`consolidate`, which has checked that the two players share no
    tournament): the display name refresh and the rewrite of games and unplayed rounds are left
    to `batch.flush`. A player whose refresh is pending is refreshed before it is read here as
    the merged one: its name is copied when its name key is the fuller, so it must be the name an
    immediate refresh gave."""
    if batch is not None and merged_id in batch.stale_names:
        batch.stale_names.discard(merged_id)
        batch.move_entries(con)  # the entries of the players merged into it are its spellings
        refresh_display_names(con, [merged_id])
    both = {
        r[0]: dict(zip(_PLAYER_COLS, r, strict=True))
        for r in con.execute(
            f"SELECT {', '.join(_PLAYER_COLS)} FROM players WHERE player_id IN (?, ?)", [kept_id, merged_id]
        ).fetchall()
    }
    if kept_id not in both:
        raise IdentityError(f"no player {kept_id}")
    kept = both[kept_id]
    if kept["merged_into"] is not None:
        kept = _player(con, kept["merged_into"])
    if merged_id not in both:
        raise IdentityError(f"no player {merged_id}")
    other = both[merged_id]
    if other["merged_into"] is not None:
        raise IdentityError(f"player {merged_id} was already merged into {other['merged_into']}")
    if kept["player_id"] == other["player_id"]:
        raise IdentityError("cannot merge a player with itself")
    for col in ("fide_id", "national_id"):
        if kept[col] and other[col] and kept[col] != other[col]:
            label = "FIDE IDs" if col == "fide_id" else "national IDs"
            raise IdentityError(
                f"players {kept['player_id']} and {merged_id} have different {label} ({kept[col]} and {other[col]});"
                " they are never merged"
            )
    kid = kept["player_id"]
    # identifiers the kept player lacks, and the fuller spelling (automatic merges): one UPDATE
    sets = {c: other[c] for c in ("fide_id", "national_id", "federation", "birth_year") if not kept[c] and other[c]}
    if decided_by.startswith("rule:") and other["name_key"] and fuller(other["name_key"], kept["name_key"]):
        sets |= {"name": other["name"], "name_key": other["name_key"]}
    if sets:
        con.execute(
            f"UPDATE players SET {', '.join(f'{c} = ?' for c in sets)} WHERE player_id = ?", [*sets.values(), kid]
        )
    con.execute(
        "UPDATE players SET merged_into = ? WHERE player_id = ? OR merged_into = ?", [kid, merged_id, merged_id]
    )
    # the merged player's spellings are now linked by this decision: record it on each alias
    # (and move them to the kept player in the same statement)
    rule = decided_by.split(":", 1)[1] if decided_by.startswith("rule:") else "manual_merge"
    if batch is not None and rule != "manual_merge":
        # `_rewrite` less what `batch` defers (its `move_entries`, `flush`); no entry to delete, as
        # they share no tournament
        batch.entries.append((merged_id, kid, rule, CONFIDENCE.get(rule, 1.0)))
        batch.moved[merged_id] = kid
        batch.stale_names.add(kid)
        batch.decisions.append((kid, merged_id, _decider(decided_by), reason))
        return 0  # the merge_id is drawn by `batch.flush`
    if batch is not None:
        batch.move_entries(con)  # an officer's merge amid deferred ones: those apply first
    conf = "1.0" if rule == "manual_merge" else "least(confidence, ?)"
    con.execute(
        f"UPDATE player_aliases SET match_rule = ?, confidence = {conf}, player_id = ? WHERE player_id = ?",
        [rule, kid, merged_id] if rule == "manual_merge" else [rule, CONFIDENCE.get(rule, 1.0), kid, merged_id],
    )
    if batch is None:
        _rewrite(con, merged_id, kid, aliases=False)
        refresh_display_names(con, [kid])
        refresh_player_facts(con, [kid])
    else:
        # `_rewrite` less what `batch` defers; no entry to delete, as they share no tournament
        con.execute("UPDATE tournament_players SET player_id = ? WHERE player_id = ?", [kid, merged_id])
        if batch.official:
            con.execute("UPDATE official_lists SET player_id = ? WHERE player_id = ?", [kid, merged_id])
        batch.moved[merged_id] = kid
        batch.stale_names.add(kid)
        batch.decisions.append((kid, merged_id, _decider(decided_by), reason))
        return 0  # the merge_id is drawn by `batch.flush`
    merge_id: int = con.execute(
        "INSERT INTO player_merges (merge_id, kept_id, merged_id, action, decided_by, reason, decided_at)"
        " VALUES (nextval('merge_id_seq'), ?, ?, 'merge', ?, ?, now()) RETURNING merge_id",
        [kid, merged_id, _decider(decided_by), reason],
    ).fetchall()[0][0]
    return merge_id


def _decider(decided_by: str) -> str:
    return decided_by if ":" in decided_by else f"officer:{decided_by}"


def _split_targets(
    con: duckdb.DuckDBPyConnection, player_id: int, criteria: dict[str, Any], file_ids: list[int] | None = None
) -> list[int]:
    """Tournaments where `player_id`'s entry (in the files `file_ids` when given) matches a
    split's criteria."""
    rows = con.execute(
        "SELECT tp.tournament_id, tp.name_as_written, t.name, t.start_date FROM tournament_players tp"
        " JOIN tournaments t USING (tournament_id) WHERE tp.player_id = ?"
        + ("" if file_ids is None else " AND tp.file_id IN (SELECT UNNEST(?))"),
        [player_id] if file_ids is None else [player_id, file_ids],
    ).fetchall()
    events = {(e[0], e[1]) for e in criteria.get("events", [])}
    out = []
    for tid, written, tname, start in rows:
        if "name_key" in criteria and name_key(written or "") != criteria["name_key"]:
            continue
        # "events" present but empty matches nothing: a split never takes a whole history by default
        if "events" in criteria and (event_key(tname), start.isoformat() if start else None) not in events:
            continue
        out.append(tid)
    return out


def _move_in_tournaments(con: duckdb.DuckDBPyConnection, old: int, new: int, tids: list[int]) -> None:
    t = "tournament_id IN (SELECT UNNEST(?))"
    con.execute(f"UPDATE tournament_players SET player_id = ? WHERE player_id = ? AND {t}", [new, old, tids])
    con.execute(f"UPDATE games SET white_id = ? WHERE white_id = ? AND {t}", [new, old, tids])
    con.execute(f"UPDATE games SET black_id = ? WHERE black_id = ? AND {t}", [new, old, tids])
    con.execute(f"UPDATE unplayed_rounds SET player_id = ? WHERE player_id = ? AND {t}", [new, old, tids])
    con.execute(f"UPDATE unplayed_rounds SET opponent_id = ? WHERE opponent_id = ? AND {t}", [new, old, tids])
    con.execute(f"UPDATE player_aliases SET player_id = ? WHERE player_id = ? AND {t}", [new, old, tids])


def split_player(
    con: duckdb.DuckDBPyConnection,
    player_id: int,
    reason: str,
    name: str | None = None,
    tournament_ids: list[int] | None = None,
    decided_by: str = "officer",
) -> int:
    """Split off from `player_id` the tournament entries written `name` (compared by name key)
    and/or those of `tournament_ids`, into a new player; returns the new player_id.

    The criteria are stored (name key; tournaments as event key + start date, which survive a
    re-ingest that gives new tournament ids) in `player_merges` (action 'split') and re-applied
    to newly loaded rows by `apply_manual_decisions`. A split moves whole tournament entries
    (games and unplayed rounds of those tournaments). Raises IdentityError when nothing matches,
    or when every entry of the player would move (nothing would stay)."""
    if not name and not tournament_ids:
        raise IdentityError("a split needs --name or --tournament")
    _player(con, player_id)
    criteria: dict[str, Any] = {}
    if name:
        criteria["name_key"] = name_key(name)
    if tournament_ids:
        rows = con.execute(
            "SELECT tournament_id, name, start_date FROM tournaments WHERE tournament_id IN (SELECT UNNEST(?))",
            [tournament_ids],
        ).fetchall()
        missing = sorted(set(tournament_ids) - {r[0] for r in rows})
        if missing:
            raise IdentityError(f"no tournament {', '.join(map(str, missing))} in the store")
        criteria["events"] = sorted({(event_key(n), s.isoformat() if s else None) for _, n, s in rows}, key=str)
    tids = _split_targets(con, player_id, criteria)
    if not tids:
        wanted = [f"written '{name}'"] if name else []
        wanted += [f"in tournament {', '.join(map(str, tournament_ids))}"] if tournament_ids else []
        spelled = [
            r[0]
            for r in con.execute(
                "SELECT DISTINCT name_as_written FROM tournament_players WHERE player_id = ? AND name_as_written"
                " IS NOT NULL ORDER BY 1 LIMIT 6",
                [player_id],
            ).fetchall()
        ]
        shown = ", ".join(f"'{w}'" for w in spelled[:5]) + (", ..." if len(spelled) > 5 else "")
        known = f"; its entries are written {shown}" if spelled else "; it has no tournament entry"
        raise IdentityError(f"no tournament entry of player {player_id} is {' and '.join(wanted)}{known}")
    kept = con.execute(
        "SELECT count(DISTINCT tournament_id) FROM tournament_players"
        " WHERE player_id = ? AND tournament_id NOT IN (SELECT UNNEST(?))",
        [player_id, tids],
    ).fetchall()[0][0]
    if not kept:
        # the new player would take every entry and the old one keep only its IDs: the next file
        # giving that FIDE ID would then link to an empty player
        raise IdentityError(
            f"the split would move every tournament entry of player {player_id} ({len(tids)}): nothing would stay; "
            "name fewer entries (--name compares name keys: spaces and case do not count; --tournament)"
        )
    first = con.execute(
        "SELECT name_as_written, fide_id_in_file, federation, birth_year, sex FROM tournament_players"
        " WHERE player_id = ? AND tournament_id IN (SELECT UNNEST(?)) ORDER BY tournament_id LIMIT 1",
        [player_id, tids],
    ).fetchall()[0]
    orig = _player(con, player_id)
    fid = first[1] if first[1] and first[1] != orig["fide_id"] else None
    new_id: int = con.execute("SELECT nextval('player_id_seq')").fetchall()[0][0]
    written = first[0] or name or orig["name"]
    con.execute(
        "INSERT INTO players (player_id, fide_id, name, name_key, federation, birth_year, sex) VALUES (?,?,?,?,?,?,?)",
        [new_id, fid, written, name_key(written), first[2], first[3], first[4]],
    )
    _move_in_tournaments(con, player_id, new_id, tids)
    refresh_display_names(con, [player_id, new_id])
    refresh_player_facts(con, [player_id, new_id])
    mid = con.execute("SELECT nextval('merge_id_seq')").fetchall()[0][0]
    con.execute(
        "INSERT INTO player_merges (merge_id, kept_id, merged_id, action, decided_by, reason, decided_at, criteria)"
        " VALUES (?, ?, ?, 'split', ?, ?, now(), ?)",
        [mid, player_id, new_id, _decider(decided_by), reason, json.dumps(criteria)],
    )
    return new_id


def apply_manual_decisions(con: duckdb.DuckDBPyConnection, file_ids: list[int]) -> int:
    """Re-apply officer splits (in the order decided) and then every merge to the rows of the
    files `file_ids` (called by the loader once per batch, before `consolidate`), so decisions
    survive re-ingest. Merges act through `players.merged_into` (resolution already follows it;
    this catches rows that still name a merged player). Returns the number of decisions applied.

    A store without `player_merges` rows costs one query: only a decision sets `merged_into`.
    Errors: SQL errors propagate (the loader rolls back)."""
    files = sorted(set(file_ids))
    if not files:
        return 0
    n_split, n_all = con.execute(
        "SELECT count(*) FILTER (WHERE action = 'split'), count(*) FROM player_merges"
    ).fetchall()[0]
    if not n_all:
        return 0
    changed = _apply_splits(con, files) if n_split else 0
    stale = con.execute(
        """
        WITH f AS (SELECT UNNEST($f) AS file_id)
        SELECT p.player_id, p.merged_into FROM players p
        WHERE p.merged_into IS NOT NULL AND p.player_id IN (
            SELECT player_id FROM tournament_players WHERE file_id IN (SELECT file_id FROM f)
            UNION SELECT white_id FROM games WHERE file_id IN (SELECT file_id FROM f)
            UNION SELECT black_id FROM games WHERE file_id IN (SELECT file_id FROM f)
            UNION SELECT player_id FROM unplayed_rounds WHERE file_id IN (SELECT file_id FROM f))
        ORDER BY 1
        """,
        {"f": files},
    ).fetchall()
    for old, new in stale:
        _rewrite(con, old, new, files)
        changed += 1
    return changed


def _apply_splits(con: duckdb.DuckDBPyConnection, files: list[int]) -> int:
    """Re-apply every officer split, in the order decided, to the rows of `files`; returns how
    many moved rows."""
    changed = 0
    for kept, merged, criteria in con.execute(
        "SELECT kept_id, merged_id, criteria FROM player_merges WHERE action = 'split' ORDER BY merge_id"
    ).fetchall():
        crit = json.loads(criteria) if isinstance(criteria, str) else (criteria or {})
        # the rows may sit on the original player, or on a player these files just created
        # because the two namesakes made the name ambiguous
        fresh = [
            r[0]
            for r in con.execute(
                "SELECT player_id FROM players WHERE first_file_id IN (SELECT UNNEST(?)) AND merged_into IS NULL"
                " AND name_key IN (SELECT name_key FROM players WHERE player_id IN (?, ?)) ORDER BY player_id",
                [files, kept, merged],
            ).fetchall()
        ]
        for cand in [_final(con, kept), *fresh]:
            tids = _split_targets(con, cand, crit, files)
            if tids:
                _move_in_tournaments(con, cand, merged, tids)
                changed += 1
            if cand in fresh:
                # what the split did not take belongs to the original player
                _rewrite(con, cand, _final(con, kept), files)
                con.execute(
                    "UPDATE players SET merged_into = ? WHERE player_id = ?",
                    [merged if tids else _final(con, kept), cand],
                )
    return changed
