"""The players a batch of files is resolved against (`elopipe.identity.resolve`).

`Index`: the known players (`Known`: a spelling with its identifiers) by FIDE ID, national ID,
name key and full name token, with the name rules' candidates (`find_by_id`, `find_by_name`) and
what a matched entry adds to a known player (`enrich`); `Writes`: the `players` rows a batch
creates and the columns it fills, written in bulk. `fuller` chooses a player's display spelling.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Container, Iterable
from dataclasses import dataclass

import duckdb

from elopipe.read.names import ABBREV_MAX, names_compatible
from elopipe.read.records import PlayerRec
from elopipe.store import write
from elopipe.store.frames import registered


@dataclass
class Known:
    player_id: int
    fide_id: int | None
    national_id: str | None
    name_key: str
    federation: str | None
    birth_year: int | None


def birth_year(p: PlayerRec) -> int | None:
    return p.birth_year or (p.birth_date.year if p.birth_date else None)


_NEW_PLAYER_COLS = (
    "player_id", "fide_id", "national_id", "name", "name_key", "federation", "sex", "birth_date", "birth_year",
    "title", "first_file_id",
)  # fmt: skip
_UPDATE_TYPES = {
    "fide_id": "BIGINT",
    "national_id": "VARCHAR",
    "birth_year": "INTEGER",
    "federation": "VARCHAR",
    "name_key": "VARCHAR",
    "name": "VARCHAR",
}


class Writes:
    """The `players` rows a batch's resolution creates and the columns it fills, written in
    bulk: new players get provisional ids (-1, -2, ...) until `flush` draws their ids from
    `player_id_seq`, in creation order (the ids one INSERT per player would have given)."""

    def __init__(self) -> None:
        self.new: dict[int, dict[str, object]] = {}
        self.updates: dict[int, dict[str, object]] = {}

    def create(self, p: PlayerRec, key: str, file_id: int) -> Known:
        pid = -(len(self.new) + 1)
        by = birth_year(p)
        self.new[pid] = {
            "player_id": pid, "fide_id": p.fide_id, "national_id": p.national_id, "name": p.name or "?",
            "name_key": key, "federation": p.federation, "sex": p.sex, "birth_date": p.birth_date, "birth_year": by,
            "title": p.title, "first_file_id": file_id,
        }  # fmt: skip
        return Known(pid, p.fide_id, p.national_id, key, p.federation, by)

    def update(self, player_id: int, values: dict[str, object]) -> None:
        row = self.new.get(player_id)
        if row is not None:
            row.update(values)
        else:
            self.updates.setdefault(player_id, {}).update(values)

    def flush_updates(self, con: duckdb.DuckDBPyConnection) -> None:
        """One UPDATE ... FROM per set of changed columns (last value written wins, as in a
        sequence of single-row updates)."""
        import polars as pl

        by_cols: dict[tuple[str, ...], list[tuple[object, ...]]] = {}
        for pid, values in self.updates.items():
            cols = tuple(sorted(values))
            by_cols.setdefault(cols, []).append((pid, *(values[c] for c in cols)))
        self.updates = {}
        for cols, rows in by_cols.items():
            df = pl.DataFrame(rows, schema=["player_id", *cols], orient="row", infer_schema_length=None)
            sets = ", ".join(f"{c} = CAST(u.{c} AS {_UPDATE_TYPES[c]})" for c in cols)
            with registered(con, "_player_updates", df):
                con.execute(f"UPDATE players SET {sets} FROM _player_updates u WHERE players.player_id = u.player_id")

    def flush(self, con: duckdb.DuckDBPyConnection) -> dict[int, int]:
        """Write everything; returns {provisional id: player_id}."""
        self.flush_updates(con)
        if not self.new:
            return {}
        import polars as pl

        n = len(self.new)
        ids = sorted(r[0] for r in con.execute("SELECT nextval('player_id_seq') FROM range(?)", [n]).fetchall())
        real = {-(i + 1): ids[i] for i in range(n)}
        made = sorted(self.new.items(), reverse=True)  # in creation order: -1, -2, ...
        # by column: a frame of 16k dicts (a FIDE month's new players) cost twice as much
        cols: dict[str, list[object]] = {c: [row[c] for _, row in made] for c in _NEW_PLAYER_COLS}
        cols["player_id"] = [real[prov] for prov, _ in made]
        df = pl.DataFrame(
            cols,
            schema={
                "player_id": pl.Int64, "fide_id": pl.Int64, "national_id": pl.Utf8, "name": pl.Utf8,
                "name_key": pl.Utf8, "federation": pl.Utf8, "sex": pl.Utf8, "birth_date": pl.Date,
                "birth_year": pl.Int32, "title": pl.Utf8, "first_file_id": pl.Int64,
            },
        )  # fmt: skip
        write.insert(con, "players", df)
        self.new = {}
        return real


class Index:
    def __init__(self) -> None:
        self.by_fid: dict[int, Known] = {}
        self.by_nid: dict[str, Known] = {}
        self.by_key: dict[str, list[Known]] = {}
        self.by_pid: dict[int, list[Known]] = {}
        # candidates for an abbreviated name (`_TokenIndex`): among every player, and among those
        # with a spelling without FIDE ID, the only ones a player with a FIDE ID can be linked to
        # by name (with those carrying the same FIDE ID, `by_fid_all`)
        self.tokens = _TokenIndex()
        self.tokens_no_fid = _TokenIndex()
        self.by_fid_all: dict[int, set[int]] = {}

    def _add_tokens(self, key: str, player_id: int, fide_id: int | None) -> None:
        full = _full_tokens(key)
        if not full:  # a name of initials only is no one's candidate (`_TokenIndex.add`)
            return
        self.tokens.add_full(full, player_id)
        if not fide_id:
            self.tokens_no_fid.add_full(full, player_id)

    def abbreviation_candidates(self, key: str, fide_id: int | None = None) -> set[int]:
        """Ids of the players with a spelling that may be `names_compatible` with `key` (a
        superset); for a written player with `fide_id`, only those it does not conflict with."""
        if not fide_id:
            return self.tokens.candidates(key)
        same = self.by_fid_all.get(fide_id)
        out = self.tokens_no_fid.candidates(key)
        return out | (self.tokens.candidates(key) & same) if same else out

    def add(self, k: Known) -> None:
        same = self.by_pid.get(k.player_id)
        if same and any(s.name_key == k.name_key and s.fide_id == k.fide_id and s.national_id == k.national_id
                        for s in same):  # fmt: skip
            return
        self.by_pid.setdefault(k.player_id, []).append(k)
        self._add_tokens(k.name_key, k.player_id, k.fide_id)
        if k.fide_id:
            self.by_fid.setdefault(k.fide_id, k)
            self.by_fid_all.setdefault(k.fide_id, set()).add(k.player_id)
        if k.national_id:
            self.by_nid.setdefault(k.national_id, k)
        self.by_key.setdefault(k.name_key, []).append(k)

    def find_by_id(self, p: PlayerRec) -> tuple[Known, str] | None:
        if p.fide_id and p.fide_id in self.by_fid:
            return self.by_fid[p.fide_id], "fide_id"
        if p.national_id and p.national_id in self.by_nid:
            cand = self.by_nid[p.national_id]
            if not self.conflicts(cand, p):
                return cand, "national_id"
        return None

    def conflicts(self, k: Known, p: PlayerRec) -> bool:
        """Conflicts with any identifier known for the player id (merged rows included)."""
        return any(_conflicts(s, p) for s in self.by_pid.get(k.player_id, [k]))

    def find_by_name(
        self, p: PlayerRec, key: str, ctx: Container[int], taken: Container[int]
    ) -> tuple[Known, str] | None:
        if not key:  # a name with no letters at all ('?', '-') identifies nobody
            return None
        cands = _unique_ids(
            c for c in self.by_key.get(key, []) if c.player_id not in taken and not self.conflicts(c, p)
        )
        if cands:  # none for most names met the first time: no name rule but the abbreviation's can hold
            by = birth_year(p)
            if by:
                same = _unique_ids(c for c in cands if c.birth_year == by)
                if len(same) == 1:
                    return same[0], "name_birth_year"
            if p.federation:
                same = _unique_ids(c for c in cands if c.federation == p.federation)
                if len(same) == 1:
                    return same[0], "name_federation"
            in_ctx = [c for c in cands if c.player_id in ctx]
            if len(in_ctx) == 1:
                return in_ctx[0], "name_context"
            if in_ctx:
                return None
        compatible = None
        near = self.abbreviation_candidates(key, p.fide_id)
        for pid in near:
            if pid in taken or pid not in ctx:
                continue
            first = next(
                (c for c in self.by_pid.get(pid, []) if names_compatible(c.name_key, key) and not self.conflicts(c, p)),
                None,
            )
            if first is None:
                continue
            if compatible is not None:
                return None  # two compatible players: ambiguous
            compatible = first
        if compatible is not None:
            return compatible, "initials_context"
        if len(cands) == 1:
            return cands[0], "name"
        return None

    def enrich(self, k: Known, p: PlayerRec, writes: Writes, key: str | None = None) -> None:
        """Fill identifiers the store lacked (a FIDE ID seen for the first time); keep the fullest
        spelling as the player's name (see `fuller`), so it does not depend on the order of files."""
        updates: dict[str, object] = {}
        if p.fide_id and not k.fide_id:
            k.fide_id = p.fide_id
            self.by_fid.setdefault(p.fide_id, k)
            self.by_fid_all.setdefault(p.fide_id, set()).add(k.player_id)
            updates["fide_id"] = p.fide_id
        if p.national_id and not k.national_id:
            k.national_id = p.national_id
            self.by_nid.setdefault(p.national_id, k)
            updates["national_id"] = p.national_id
        by = birth_year(p)
        if by and not k.birth_year:
            k.birth_year = by
            updates["birth_year"] = by
        if p.federation and not k.federation:
            k.federation = p.federation
            updates["federation"] = p.federation
        if key and key != k.name_key and fuller(key, k.name_key):
            self.by_key.setdefault(key, []).append(k)
            self._add_tokens(key, k.player_id, k.fide_id)
            k.name_key = key
            updates["name_key"] = key
            updates["name"] = p.name
        if updates:
            writes.update(k.player_id, updates)


_SUBSET_TOKENS = 6  # a name with more full tokens looks candidates up by any shared token


class _TokenIndex:
    """Player ids by the full (3+ letter) tokens of their spellings. Two names are
    abbreviation-compatible only when the full tokens of the shorter are tokens of the longer
    (`_covers`: abbreviations are at most two letters, and one exact full token is needed): the
    candidates for a name are the players holding all its full tokens (`by_token`, intersected)
    and those whose full tokens are a subset of its own (`by_full_tokens`, looked up per subset)."""

    def __init__(self) -> None:
        self.by_token: dict[str, set[int]] = {}
        self.by_full_tokens: dict[frozenset[str], set[int]] = {}

    def add(self, key: str, player_id: int) -> None:
        full = _full_tokens(key)
        if full:
            self.add_full(full, player_id)

    def add_full(self, full: frozenset[str], player_id: int) -> None:
        """`add` of a key whose full tokens (`_full_tokens`, not empty) are `full`."""
        by_token = self.by_token
        for t in full:
            ids = by_token.get(t)
            if ids is None:
                by_token[t] = {player_id}
            else:
                ids.add(player_id)
        ids = self.by_full_tokens.get(full)
        if ids is None:
            self.by_full_tokens[full] = {player_id}
        else:
            ids.add(player_id)

    def candidates(self, key: str) -> set[int]:
        """Ids that may be `names_compatible` with `key` (a superset)."""
        full = _full_tokens(key)
        if not full:
            return set()
        if len(full) > _SUBSET_TOKENS:  # a name of many words: every player sharing a full token (rare)
            return set().union(*(self.by_token.get(t, ()) for t in full))
        # a token no spelling holds is in no full-token set of one: the subsets are of the others
        # (a new player's rare surname: none to look up)
        tokens = sorted(t for t in full if t in self.by_token)
        if not tokens:
            return set()
        out: set[int] = set()
        if len(tokens) == len(full):  # the players holding all of them
            sets = sorted((self.by_token[t] for t in full), key=len)
            out = {pid for pid in sets[0] if all(pid in s for s in sets[1:])}
        for n in range(1, len(tokens) + 1):
            for sub in itertools.combinations(tokens, n):
                out |= self.by_full_tokens.get(frozenset(sub), set())
        return out


@functools.lru_cache(maxsize=1 << 16)
def _full_tokens(key: str) -> frozenset[str]:
    # cached: each spelling is indexed in two token indexes and looked up again by name
    return frozenset(t for t in key.split(" ") if len(t) > ABBREV_MAX)


def fuller(a: str, b: str) -> bool:
    """True when name key `a` is the better display spelling than `b`: more full (3+ letter) name
    parts, then longer, then alphabetically first (so the choice never depends on order)."""

    def rank(k: str) -> tuple[int, int]:
        return (sum(len(t) > ABBREV_MAX for t in k.split(" ")), len(k))

    return rank(a) > rank(b) or (rank(a) == rank(b) and a < b)


def _unique_ids(cands: Iterable[Known]) -> list[Known]:
    seen: dict[int, Known] = {}
    for c in cands:
        seen.setdefault(c.player_id, c)
    return list(seen.values())


def _conflicts(k: Known, p: PlayerRec) -> bool:
    """True when the two cannot be the same person: different FIDE IDs, national IDs or birth years."""
    if k.fide_id and p.fide_id and k.fide_id != p.fide_id:
        return True
    if k.national_id and p.national_id and k.national_id != p.national_id:
        return True
    by = birth_year(p)
    return bool(k.birth_year and by and k.birth_year != by)
