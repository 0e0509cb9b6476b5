"""The merges of one `consolidate` call, whose writes are gathered (`Batch`) rather than made once a merge.

`decisions.merge_into` records each merge here when given a `Batch`; the rows nothing reads before
the end are then written in one statement a table.
"""

from __future__ import annotations

import duckdb
import polars as pl

from elopipe.identity.display_names import refresh_display_names
from elopipe.identity.facts import refresh_player_facts
from elopipe.store import write
from elopipe.store.frames import registered


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
        con.register("_moved_players", df)
        for table, col in (("games", "white_id"), ("games", "black_id"), ("unplayed_rounds", "player_id"),
                           ("unplayed_rounds", "opponent_id")):  # fmt: skip
            con.execute(f"UPDATE {table} SET {col} = m.new FROM _moved_players m WHERE {table}.{col} = m.old")
        con.unregister("_moved_players")
