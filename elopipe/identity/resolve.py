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

from collections.abc import Callable, Container
from dataclasses import dataclass

import duckdb

from elopipe.identity.apart import RatedEntry, apart, rated_entry
from elopipe.identity.known import Index, Known, Writes, birth_year
from elopipe.identity.nearby import dates_overlap, near_tournaments, same_event, tournament_spans
from elopipe.identity.settle import Settling
from elopipe.read.names import name_key
from elopipe.read.records import PlayerRec
from elopipe.store.frames import registered, value_frame

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
        self.index = Index()
        self.writes = Writes()
        self.settling = Settling(self.index)
        players = [p for f in files for p in f.players]
        self._load_known(con, players)
        tids = set(file_tids or ()) | {t for f in files for t in f.tournament_ids.values()}
        self.events = _EventContext(con, tids, self.index)

    def _load_known(self, con: duckdb.DuckDBPyConnection, players: list[PlayerRec]) -> None:
        import polars as pl

        fids = sorted({p.fide_id for p in players if p.fide_id})
        nids = sorted({p.national_id for p in players if p.national_id})
        keys = sorted({name_key(p.name) for p in players if p.name})
        sql = (
            "SELECT COALESCE(p.merged_into, p.player_id), p.fide_id, p.national_id, p.name_key, p.federation,"
            " p.birth_year FROM players p WHERE "
        )
        # a row met again (a player found by FIDE ID and by name key) is one `Index.add` skips:
        # skipped here, before making its `Known` (a FIDE month meets 30k players twice)
        seen: set[tuple[object, ...]] = set()
        # the values lent as a frame's column, not as a list parameter, which DuckDB converts
        # element by element (a FIDE month's 28k name keys: 20 ms a statement; `store.frames.id_frame`)
        key_frame = value_frame(keys, "v", pl.String)  # for the player rows and their aliases
        for col, values, frame in (("fide_id", fids, value_frame(fids, "v", pl.Int64)),
                                   ("national_id", nids, value_frame(nids, "v", pl.String)),
                                   ("name_key", keys, key_frame)):  # fmt: skip
            if values:
                with registered(con, "_known_values", frame):
                    rows = con.execute(sql + f"p.{col} IN (SELECT v FROM _known_values)").fetchall()
                for r in rows:
                    if r not in seen:
                        seen.add(r)
                        self.index.add(Known(*r))
        if keys:  # every spelling already linked to a player is a way to find that player
            # a spelling equal to the player's own name key was found by the query above: only the
            # others, each once (a player has one alias row per entry: a year holds dozens), told
            # from the others before their DISTINCT, which then groups the few other spellings only
            with registered(con, "_known_values", key_frame):
                rows = con.execute(
                    "SELECT COALESCE(p.merged_into, p.player_id), p.fide_id, p.national_id, a.name_key,"
                    " p.federation, p.birth_year FROM (SELECT DISTINCT a.player_id, a.name_key FROM player_aliases a"
                    " JOIN players o ON o.player_id = a.player_id WHERE a.name_key IN (SELECT v FROM _known_values)"
                    " AND a.name_key <> o.name_key) a JOIN players p USING (player_id)"
                ).fetchall()
            for r in rows:
                self.index.add(Known(*r))

    def _link(self, p: PlayerRec, known: Known, rule: str, key: str | None) -> Resolution:
        self.settling.facts(known, p.federation, birth_year(p))
        name_key_before = known.name_key
        self.index.enrich(known, p, self.writes, key)
        if known.name_key != name_key_before or rule == "initials_context":
            self.settling.unsettled = True  # a fuller spelling, an abbreviation: consolidation may pair it
        if key and key != known.name_key:
            # the spelling is now an alias of the player: a later file finds it by that key
            self.index.add(Known(known.player_id, known.fide_id, known.national_id, key, known.federation,
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
                else (key, p.fide_id, p.national_id, birth_year(p))
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


class _EventContext:
    """Which players are in the other sources of a batch's events (`_BatchResolver`).

    Another tournament is a source of the same event when `same_event` holds, or when its dates
    overlap and at least two, and half, of the players are the same by FIDE/national ID (an
    event named differently by the TRF and the PGN). The candidates are the tournaments near the
    batch's (`near_tournaments`), read once with their players; a tournament of the batch counts
    once its file is resolved (`add_member`), as it would be in the store had the files been
    loaded one by one."""

    def __init__(self, con: duckdb.DuckDBPyConnection, tids: set[int], index: Index) -> None:
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
                index.add(Known(*r[1:7]))
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
