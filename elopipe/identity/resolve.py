"""Player resolution: the rules that link a written player to a `player_id`.

Every reader's players go through here (the loader calls `resolve_batch`; then, once per batch of
files, `identity.decisions.apply_manual_decisions` and `identity.consolidate.consolidate`), so
matching lives in this package only. Issue 7; officers' complaints about one person under two IDs
(landscape §5 item 4). Name keys are `elopipe.read.names`.

Match order and confidence (`RULES`, recorded per link in `player_aliases.match_rule` /
`confidence`): FIDE ID 1.0 > national ID (FFE licence) 0.98 > name + birth year 0.9 > name +
federation 0.8 > name within the same event's other sources 0.7 > initials within the event 0.6 >
name alone, the only such player 0.5. Different FIDE IDs are never merged, nor, by a name rule, two
TRF entries rated 400 points apart or more on the same days (`identity.apart`). `same_game` (0.9) is no
resolution rule but a merge `consolidate` makes: one game in two sources under two spellings
(`identity.same_game`).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass

import duckdb

from elopipe.identity.apart import RatedEntry, apart, rated_entry
from elopipe.identity.nearby import dates_overlap, near_tournaments, same_event, tournament_spans
from elopipe.identity.settle import Settling
from elopipe.read.names import ABBREV_MAX, name_key, names_compatible
from elopipe.read.records import PlayerRec
from elopipe.store import write
from elopipe.store.frames import registered

# Rules in the order they are tried, with the confidence recorded for the link.
RULES: list[tuple[str, float]] = [
    ("fide_id", 1.0),
    ("national_id", 0.98),
    ("name_birth_year", 0.9),
    ("name_federation", 0.8),
    ("name_context", 0.7),  # same name key, in another source of the same event
    ("initials_context", 0.6),  # abbreviated name, one compatible player in the event's context
    ("name", 0.5),  # same name key, the only such player in the store (listed by `suspects`)
    ("new", 1.0),
    ("same_game", 0.9),  # a merge: one game in two sources, names that agree (`identity.same_game`)
    ("manual_merge", 1.0),
    ("manual_split", 1.0),
]
CONFIDENCE = dict(RULES)


@dataclass
class Resolution:
    player_id: int
    rule: str
    confidence: float


@dataclass
class _Known:
    player_id: int
    fide_id: int | None
    national_id: str | None
    name_key: str
    federation: str | None
    birth_year: int | None


def _birth_year(p: PlayerRec) -> int | None:
    return p.birth_year or (p.birth_date.year if p.birth_date else None)


@dataclass
class FilePlayers:
    """One file of a batch for `resolve_batch`: its id, its written players (those of its stored
    tournaments) and {tournament ref: tournament_id} of its tournaments (already inserted)."""

    file_id: int
    players: list[PlayerRec]
    tournament_ids: dict[int, int]


def resolve_batch(
    con: duckdb.DuckDBPyConnection,
    files: list[FilePlayers],
    file_tids: list[int] | None = None,
    stop_after: Callable[[int, Callable[[], bool]], bool] | None = None,
) -> list[dict[tuple[int, int], Resolution]]:
    """Link every written player of a batch of files to a `player_id`, creating players as needed.

    The files are resolved in their order, each as if the ones before it were in the store:
    a player created or enriched by an earlier file of the batch is found by a later one, and an
    earlier file's tournaments are other sources of a later file's event. The store is read once
    for the batch, by indexed joins on the batch's FIDE IDs, national IDs, name keys and on the
    tournaments near its own (`near_tournaments`).

    Match order (first that gives exactly one candidate wins):
    1. FIDE ID; 2. national ID (FFE licence); 3. name key + birth year; 4. name key + federation;
    5a. name key among the players of the same event's other sources ('name_context');
    5b. abbreviated name ('Carlsen,M' ~ 'Carlsen, Magnus') with exactly one compatible player in
    that context ('initials_context'); 5c. name key alone when one player in the store has it ('name').
    A candidate with a different FIDE ID, national ID or birth year is never taken; two entries of
    one TRF tournament (two start ranks) are never the same player, nor, by name, two TRF entries
    rated far apart on the same days (`identity.apart`). Merged players resolve to the
    player they were merged into.

    `file_tids`: the tournaments of a single file given without `tournament_ids` (its players'
    context is then the union of theirs). `stop_after(i, settled)`, when given, is asked after
    file i is resolved; True ends the resolution there (the later files are left to another
    call, once the caller has run the steps that follow a file). `settled()` says whether those
    steps would change nothing the later files' resolution reads (`identity.settle`). Returns,
    per file resolved, {(tournament_ref, ref): Resolution}. Writes `players` rows for new people
    and fills identifiers the store lacked (inside the caller's transaction)."""
    resolver = _BatchResolver(con, files, file_tids)
    outs = []
    for i, f in enumerate(files):
        outs.append(resolver.resolve_file(f))
        if stop_after is not None and stop_after(i, resolver.settling.settled):
            break
    real = resolver.writes.flush(con)
    if real:
        for out in outs:
            for res in out.values():
                if res.player_id < 0:
                    res.player_id = real[res.player_id]
    return outs


class _BatchResolver:
    """The state `resolve_batch` carries from file to file: the index of known players, the
    pending writes, and the members of the batch's tournaments resolved so far."""

    def __init__(self, con: duckdb.DuckDBPyConnection, files: list[FilePlayers], file_tids: list[int] | None):
        self.file_tids = file_tids
        self.index = _Index()
        self.writes = _Writes()
        self.settling = Settling(self.index)
        players = [p for f in files for p in f.players]
        self._load_known(con, players)
        tids = set(file_tids or ()) | {t for f in files for t in f.tournament_ids.values()}
        self.events = _EventContext(con, tids, self.index)

    def _load_known(self, con: duckdb.DuckDBPyConnection, players: list[PlayerRec]) -> None:
        fids = sorted({p.fide_id for p in players if p.fide_id})
        nids = sorted({p.national_id for p in players if p.national_id})
        keys = sorted({name_key(p.name) for p in players if p.name})
        sql = (
            "SELECT COALESCE(p.merged_into, p.player_id), p.fide_id, p.national_id, p.name_key, p.federation,"
            " p.birth_year FROM players p WHERE "
        )
        # a row met again (a player found by FIDE ID and by name key) is one `_Index.add` skips:
        # skipped here, before making its `_Known` (a FIDE month meets 30k players twice)
        seen: set[tuple[object, ...]] = set()
        for col, values in (("fide_id", fids), ("national_id", nids), ("name_key", keys)):
            if values:
                for r in con.execute(sql + f"p.{col} IN (SELECT UNNEST(?))", [values]).fetchall():
                    if r not in seen:
                        seen.add(r)
                        self.index.add(_Known(*r))
        if keys:  # every spelling already linked to a player is a way to find that player
            # a spelling equal to the player's own name key was found by the query above: only the
            # others, each once (a player has one alias row per entry: a year holds dozens)
            for r in con.execute(
                "SELECT COALESCE(p.merged_into, p.player_id), p.fide_id, p.national_id, a.name_key,"
                " p.federation, p.birth_year FROM (SELECT DISTINCT player_id, name_key FROM player_aliases"
                " WHERE name_key IN (SELECT UNNEST(?))) a JOIN players p USING (player_id)"
                " WHERE a.name_key <> p.name_key",
                [keys],
            ).fetchall():
                self.index.add(_Known(*r))

    def _link(self, p: PlayerRec, known: _Known, rule: str, key: str | None) -> Resolution:
        self.settling.facts(known, p.federation, _birth_year(p))
        name_key_before = known.name_key
        self.index.enrich(known, p, self.writes, key)
        if known.name_key != name_key_before or rule == "initials_context":
            self.settling.unsettled = True  # a fuller spelling, an abbreviation: consolidation may pair it
        if key and key != known.name_key:
            # the spelling is now an alias of the player: a later file finds it by that key
            self.index.add(_Known(known.player_id, known.fide_id, known.national_id, key, known.federation,
                                  known.birth_year))  # fmt: skip
        return Resolution(known.player_id, rule, CONFIDENCE[rule])

    def resolve_file(self, f: FilePlayers) -> dict[tuple[int, int], Resolution]:
        tournament_ids = f.tournament_ids
        all_tids = sorted(set(tournament_ids.values())) if tournament_ids else list(self.file_tids or ())
        out: dict[tuple[int, int], Resolution] = {}
        # pass 1: identifiers; the players they find tell which stored events are the same event
        pending: list[PlayerRec] = []
        id_hits: dict[int, set[int]] = {}
        for p in f.players:
            hit = self.index.find_by_id(p)
            if hit is None:
                pending.append(p)
                continue
            known, rule = hit
            out[(p.tournament_ref, p.ref)] = self._link(p, known, rule, name_key(p.name) if p.name else None)
            tid = tournament_ids.get(p.tournament_ref)
            id_hits.setdefault(tid if tid is not None else -1, set()).add(known.player_id)
        context = self.events.context(all_tids, id_hits)
        file_context: dict[int, set[int]] = {}  # tournament_ref -> ids linked in this file
        trf_taken: dict[int, set[int]] = {}  # tournament_ref -> ids of TRF entries (distinct people)
        for (tref, _ref), res in out.items():
            file_context.setdefault(tref, set()).add(res.player_id)
        for p in f.players:
            if p.start_rank is not None and (p.tournament_ref, p.ref) in out:
                trf_taken.setdefault(p.tournament_ref, set()).add(out[(p.tournament_ref, p.ref)].player_id)
        # one written person per file: the same spelling (and identifiers) in several tournaments of
        # one PGN file is resolved once, with the union of those tournaments' contexts; TRF entries
        # (start ranks) are each their own person
        groups: dict[tuple[str | int | None, ...], list[PlayerRec]] = {}
        for p in pending:
            key = name_key(p.name) if p.name else ""
            gk: tuple[str | int | None, ...] = (
                ("trf", p.tournament_ref, p.ref)
                if p.start_rank is not None
                else (key, p.fide_id, p.national_id, _birth_year(p))
            )
            groups.setdefault(gk, []).append(p)
        for members in groups.values():
            rep = members[0]
            key = name_key(rep.name) if rep.name else ""
            # the union of these sets, not copied (a big event's context has thousands of ids)
            ctx = _SetUnion()
            for p in members:
                tid = tournament_ids.get(p.tournament_ref)
                ctx.add(context.get(tid, set()) if tid is not None else context.get(-1, set()))
                ctx.add(file_context.get(p.tournament_ref, set()))
            taken: Container[int] = trf_taken.get(rep.tournament_ref, set()) if rep.start_rank is not None else set()
            mine = self.events.entry(tournament_ids.get(rep.tournament_ref), rep.start_rank, rep.rating)
            if mine is not None:
                taken = _Refused(taken, mine, self.events)
            hit = self.index.find_by_name(rep, key, ctx, taken)
            feds = {p.federation for p in members if p.federation}  # one person's entries in this file
            if len(feds) > 1:
                self.settling.unsettled = True
            elif hit is not None and feds:
                self.settling.facts(hit[0], next(iter(feds)), None)
            if hit is None:
                if key and key in self.index.by_key:
                    self.settling.unsettled = True  # a namesake beside the new player
                known = self.writes.create(rep, key, f.file_id)
                self.index.add(known)
                res = Resolution(known.player_id, "new", CONFIDENCE["new"])
            else:
                res = self._link(rep, hit[0], hit[1], key)
            for p in members:
                out[(p.tournament_ref, p.ref)] = res
                file_context.setdefault(p.tournament_ref, set()).add(res.player_id)
                if p.start_rank is not None:
                    trf_taken.setdefault(p.tournament_ref, set()).add(res.player_id)
        for p in f.players:
            tid = tournament_ids.get(p.tournament_ref)
            if tid is not None:
                self.events.add_member(tid, out[(p.tournament_ref, p.ref)].player_id)
                self.events.add_rated(tid, out[(p.tournament_ref, p.ref)].player_id, p.start_rank, p.rating)
        self.settling.touch(res.player_id for res in out.values())
        return out


class _Refused:
    """The players a written TRF entry cannot be: the other entries of its tournament (`taken`)
    and those with an entry `apart` from it (`identity.apart`)."""

    def __init__(self, taken: Container[int], entry: RatedEntry, events: _EventContext) -> None:
        self.taken, self.entry, self.events = taken, entry, events

    def __contains__(self, x: object) -> bool:
        return x in self.taken or (isinstance(x, int) and self.events.apart(x, self.entry))


class _SetUnion:
    """Membership in the union of some sets, without building it."""

    def __init__(self) -> None:
        self.sets: list[set[int]] = []
        # identities of `sets` (held by the list, so never reused): a file of many events adds
        # the same few sets once a tournament, and a scan of the list per add was quadratic
        self._ids: set[int] = set()

    def add(self, s: set[int]) -> None:
        if s and id(s) not in self._ids:
            self._ids.add(id(s))
            self.sets.append(s)

    def __contains__(self, x: object) -> bool:
        return any(x in s for s in self.sets)


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


class _Writes:
    """The `players` rows a batch's resolution creates and the columns it fills, written in
    bulk: new players get provisional ids (-1, -2, ...) until `flush` draws their ids from
    `player_id_seq`, in creation order (the ids one INSERT per player would have given)."""

    def __init__(self) -> None:
        self.new: dict[int, dict[str, object]] = {}
        self.updates: dict[int, dict[str, object]] = {}

    def create(self, p: PlayerRec, key: str, file_id: int) -> _Known:
        pid = -(len(self.new) + 1)
        by = _birth_year(p)
        self.new[pid] = dict(zip(_NEW_PLAYER_COLS, (
            pid, p.fide_id, p.national_id, p.name or "?", key, p.federation, p.sex, p.birth_date, by, p.title,
            file_id,
        ), strict=True))  # fmt: skip
        return _Known(pid, p.fide_id, p.national_id, key, p.federation, by)

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
        rows = [row | {"player_id": real[prov]} for prov, row in sorted(self.new.items(), reverse=True)]
        df = pl.DataFrame(
            rows,
            schema={
                "player_id": pl.Int64, "fide_id": pl.Int64, "national_id": pl.Utf8, "name": pl.Utf8,
                "name_key": pl.Utf8, "federation": pl.Utf8, "sex": pl.Utf8, "birth_date": pl.Date,
                "birth_year": pl.Int32, "title": pl.Utf8, "first_file_id": pl.Int64,
            },
        )  # fmt: skip
        write.insert(con, "players", df)
        self.new = {}
        return real


class _Index:
    def __init__(self) -> None:
        self.by_fid: dict[int, _Known] = {}
        self.by_nid: dict[str, _Known] = {}
        self.by_key: dict[str, list[_Known]] = {}
        self.by_pid: dict[int, list[_Known]] = {}
        # candidates for an abbreviated name (`_TokenIndex`): among every player, and among those
        # with a spelling without FIDE ID, the only ones a player with a FIDE ID can be linked to
        # by name (with those carrying the same FIDE ID, `by_fid_all`)
        self.tokens = _TokenIndex()
        self.tokens_no_fid = _TokenIndex()
        self.by_fid_all: dict[int, set[int]] = {}

    def _add_tokens(self, key: str, player_id: int, fide_id: int | None) -> None:
        self.tokens.add(key, player_id)
        if not fide_id:
            self.tokens_no_fid.add(key, player_id)

    def abbreviation_candidates(self, key: str, fide_id: int | None = None) -> set[int]:
        """Ids of the players with a spelling that may be `names_compatible` with `key` (a
        superset); for a written player with `fide_id`, only those it does not conflict with."""
        if not fide_id:
            return self.tokens.candidates(key)
        same = self.by_fid_all.get(fide_id)
        out = self.tokens_no_fid.candidates(key)
        return out | (self.tokens.candidates(key) & same) if same else out

    def add(self, k: _Known) -> None:
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

    def find_by_id(self, p: PlayerRec) -> tuple[_Known, str] | None:
        if p.fide_id and p.fide_id in self.by_fid:
            return self.by_fid[p.fide_id], "fide_id"
        if p.national_id and p.national_id in self.by_nid:
            cand = self.by_nid[p.national_id]
            if not self.conflicts(cand, p):
                return cand, "national_id"
        return None

    def conflicts(self, k: _Known, p: PlayerRec) -> bool:
        """Conflicts with any identifier known for the player id (merged rows included)."""
        return any(_conflicts(s, p) for s in self.by_pid.get(k.player_id, [k]))

    def find_by_name(
        self, p: PlayerRec, key: str, ctx: Container[int], taken: Container[int]
    ) -> tuple[_Known, str] | None:
        if not key:  # a name with no letters at all ('?', '-') identifies nobody
            return None
        cands = _unique_ids(
            c for c in self.by_key.get(key, []) if c.player_id not in taken and not self.conflicts(c, p)
        )
        by = _birth_year(p)
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

    def enrich(self, k: _Known, p: PlayerRec, writes: _Writes, key: str | None = None) -> None:
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
        by = _birth_year(p)
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


class _EventContext:
    """Which players are in the other sources of a batch's events (`_BatchResolver`).

    Another tournament is a source of the same event when `same_event` holds, or when its dates
    overlap and at least two, and half, of the players are the same by FIDE/national ID (an
    event named differently by the TRF and the PGN). The candidates are the tournaments near the
    batch's (`near_tournaments`), read once with their players; a tournament of the batch counts
    once its file is resolved (`add_member`), as it would be in the store had the files been
    loaded one by one."""

    def __init__(self, con: duckdb.DuckDBPyConnection, tids: set[int], index: _Index) -> None:
        near = near_tournaments(con, tids) if tids else set()
        self.spans = tournament_spans(con, near) if near else {}
        self.batch = set(tids)
        self.members: dict[int, set[int]] = {}
        self.tournaments_of: dict[int, set[int]] = {}  # player -> tournaments of `members`
        self.rated: dict[int, list[RatedEntry]] = {}  # player -> his rated TRF entries in `members`
        self.classes: dict[int, str | None] = dict(
            con.execute(
                "SELECT tournament_id, rate_class FROM tournaments WHERE tournament_id IN (SELECT UNNEST(?))",
                [sorted(near)],
            ).fetchall()
            if near
            else ()
        )
        stored = sorted(near - self.batch)
        if stored:
            rows = con.execute(
                "SELECT tp.tournament_id, COALESCE(p.merged_into, p.player_id), p.fide_id, p.national_id,"
                " p.name_key, p.federation, p.birth_year, tp.start_rank, tp.rating_in_file FROM tournament_players tp"
                " JOIN players p USING (player_id) WHERE tp.tournament_id IN (SELECT UNNEST(?))",
                [stored],
            ).fetchall()
            for r in rows:
                index.add(_Known(*r[1:7]))
                self.add_member(r[0], r[1])
                self.add_rated(r[0], r[1], r[7], r[8])
            # stored tournaments with no player still count as candidates (size 0)
            for t in stored:
                self.members.setdefault(t, set())
        self.by_event: dict[str, list[int]] = {}
        for o, span in self.spans.items():
            if span[0]:
                self.by_event.setdefault(span[0], []).append(o)

    def add_member(self, tid: int, player_id: int) -> None:
        self.members.setdefault(tid, set()).add(player_id)
        self.tournaments_of.setdefault(player_id, set()).add(tid)

    def entry(self, tid: int | None, start_rank: int | None, rating: int | None) -> RatedEntry | None:
        """An entry of tournament `tid` as `identity.apart` evidence, or None."""
        span = self.spans.get(tid) if tid is not None else None
        if tid is None or span is None:
            return None
        return rated_entry(tid, start_rank, rating, self.classes.get(tid), span[1], span[2])

    def add_rated(self, tid: int, player_id: int, start_rank: int | None, rating: int | None) -> None:
        entry = self.entry(tid, start_rank, rating)
        if entry is not None:
            self.rated.setdefault(player_id, []).append(entry)

    def apart(self, player_id: int, entry: RatedEntry) -> bool:
        """Whether player `player_id` has an entry in these tournaments `apart` from `entry`."""
        return any(apart(entry, e) for e in self.rated.get(player_id, ()))

    def context(self, tids: list[int], id_hits: dict[int, set[int]]) -> dict[int, set[int]]:
        """For each tournament of one file: ids of the players of the same event's other sources
        (-1: the file's only tournament, for players without a tournament id)."""
        mine = set(tids)
        hit_ids = set().union(*id_hits.values()) if id_hits else set()
        # tournaments (stored, or of a file resolved before) holding players found by identifier
        shared: dict[int, set[int]] = {}
        if hit_ids:
            for pid in hit_ids:
                for o in self.tournaments_of.get(pid, ()):
                    if o not in mine:
                        shared.setdefault(o, set()).add(pid)
        ctx_t: dict[int, set[int]] = {}
        for t in tids:
            span = self.spans.get(t)
            if span is None:
                continue
            mine_hits = id_hits.get(t, set())
            near = (
                {o for o in self.by_event.get(span[0], ()) if o not in mine and o in self.members} if span[0] else set()
            )
            near.update(shared)
            for o in near:
                ospan = self.spans.get(o)
                if ospan is None:
                    continue
                if same_event(span, ospan):
                    ctx_t.setdefault(t, set()).add(o)
                elif dates_overlap(span[1], span[2], ospan[1], ospan[2]):
                    common = len(shared.get(o, set()) & mine_hits)
                    # mostly the same players: the same event under another name, not a league
                    # season that happens to share a few players with a weekend open
                    if common >= 2 and 2 * common >= min(len(mine_hits), len(self.members.get(o, ()))):
                        ctx_t.setdefault(t, set()).add(o)
        out = {t: set().union(*(self.members.get(o, set()) for o in os_)) for t, os_ in ctx_t.items()}
        if len(tids) == 1 and tids[0] in out:
            out[-1] = out[tids[0]]
        return out


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
        for t in full:
            self.by_token.setdefault(t, set()).add(player_id)
        if full:
            self.by_full_tokens.setdefault(full, set()).add(player_id)

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


def _unique_ids(cands: Iterable[_Known]) -> list[_Known]:
    seen: dict[int, _Known] = {}
    for c in cands:
        seen.setdefault(c.player_id, c)
    return list(seen.values())


def _conflicts(k: _Known, p: PlayerRec) -> bool:
    """True when the two cannot be the same person: different FIDE IDs, national IDs or birth years."""
    if k.fide_id and p.fide_id and k.fide_id != p.fide_id:
        return True
    if k.national_id and p.national_id and k.national_id != p.national_id:
        return True
    by = _birth_year(p)
    return bool(k.birth_year and by and k.birth_year != by)
