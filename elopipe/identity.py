"""Player identity: name normalisation and the rules that link a written player to a `player_id`.

Every reader's players go through this module (the loader calls `resolve_players`, then, once
per batch of files, `apply_manual_decisions` and `consolidate`), so matching lives here only.
Issue 7; officers' complaints about one person under two IDs (landscape §5 item 4).

* Names: `fold` (case, accents, ø→o, ß→ss, punctuation), `name_key` (order-free: 'Carlsen,
  Magnus' = 'Magnus Carlsen' = 'CARLSEN Magnus'), `names_compatible` (initials: 'Carlsen,M' ~
  'Carlsen, Magnus'), `name_key_sql` (the same key in DuckDB SQL, for bulk list imports).
* Match order and confidence (`RULES`, recorded per link in `player_aliases.match_rule` /
  `confidence`): FIDE ID 1.0 > national ID (FFE licence) 0.98 > name + birth year 0.9 > name +
  federation 0.8 > name within the same event's other sources 0.7 > initials within the event
  0.6 > name alone, the only such player 0.5. Different FIDE IDs are never merged.
* Officer decisions: `merge_players`, `split_player` (recorded in `player_merges`, re-applied to
  every newly loaded batch of files), `suspects` (likely duplicates with the evidence).

Errors: `IdentityError` (a ValueError) for a forbidden merge or an empty split.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

import duckdb

from elopipe.duck_frames import registered
from elopipe.model import PlayerRec

# Letters NFKD does not decompose into ASCII.
_FOLD = str.maketrans(
    {
        "ø": "o",
        "Ø": "o",
        "ß": "ss",
        "æ": "ae",
        "Æ": "ae",
        "œ": "oe",
        "Œ": "oe",
        "ł": "l",
        "Ł": "l",
        "đ": "d",
        "Đ": "d",
        "ð": "d",
        "Ð": "d",
        "þ": "th",
        "Þ": "th",
        "ı": "i",
        "ŀ": "l",
    }
)
# Letters and digits of every script stay (Cyrillic, CJK, Hebrew, Arabic names must not fold to
# nothing); everything else but the comma becomes a space.
_NON_ALNUM = re.compile(r"[^\w, ]+|_+")
_SPACES = re.compile(r"\s+")


def fold(text: str) -> str:
    """Lower-case fold: Latin accents stripped, ø→o, ß→ss; punctuation other than commas removed.
    Letters of other scripts are kept as they are (lower-cased where the script has case)."""
    if text.isascii():  # nothing to decompose or strip: the same result, without the loop per character
        text = text.lower()
    else:
        text = unicodedata.normalize("NFKD", text.translate(_FOLD))
        text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = text.replace("-", " ").replace(".", " ").replace("'", "")
    text = _NON_ALNUM.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


@functools.lru_cache(maxsize=1 << 16)
def name_key(name: str) -> str:
    """Order-independent key of a person's name.

    'Carlsen, Magnus', 'Carlsen,Magnus', 'Magnus Carlsen' and 'CARLSEN Magnus' all give
    'carlsen magnus': the folded name parts, sorted. Initials stay as one letter.
    """
    # cached: a file's resolution keys each written name several times, and names repeat
    parts = [p for p in fold(name).replace(",", " ").split(" ") if p]
    return " ".join(sorted(parts))


def name_key_sql(expr: str) -> str:
    """SQL (DuckDB) expression computing `name_key` of the VARCHAR expression `expr`, for bulk loads
    (official lists). Same result as `name_key` for Latin-script names."""
    multi = [("ß", "ss"), ("æ", "ae"), ("Æ", "ae"), ("œ", "oe"), ("Œ", "oe"), ("þ", "th"), ("Þ", "th")]
    single_from = "øØłŁđĐðÐıŀ"
    single_to = "oollddddil"
    inner = f"translate({expr}, '{single_from}', '{single_to}')"
    for a, b in multi:
        inner = f"replace({inner}, '{a}', '{b}')"
    inner = f"replace(lower(strip_accents({inner})), '''', '')"
    inner = f"regexp_replace({inner}, '[^a-z0-9]+', ' ', 'g')"
    return f"array_to_string(list_sort(list_filter(string_split({inner}, ' '), lambda t: t <> '')), ' ')"


# An abbreviated given name: 'M' (Carlsen,M), 'Hi' (Nakamura,Hi), 'J K' (Duda, J.-K.)
_ABBREV_MAX = 2


def _covers(short: list[str], long: list[str]) -> bool:
    """True when every token of `short` is a token of `long` or an abbreviation (prefix of at most
    two letters) of a distinct token of `long`, with at least one full token in common and at
    least one abbreviation used or one token of `long` left over."""
    if len(short) < 2:
        return False
    rest = list(long)
    exact = 0
    abbrevs = []
    for t in short:
        if t in rest:
            rest.remove(t)
            if len(t) > _ABBREV_MAX:
                exact += 1
        else:
            abbrevs.append(t)
    if exact == 0:
        return False
    for t in sorted(abbrevs, key=len, reverse=True):
        if len(t) > _ABBREV_MAX:
            return False
        hit = next((u for u in rest if u.startswith(t) and len(u) > len(t)), None)
        if hit is None:
            return False
        rest.remove(hit)
    return bool(abbrevs) or bool(rest)


def names_compatible(a: str, b: str) -> bool:
    """True when two name keys can be the same person by abbreviation: 'carlsen m' ~ 'carlsen
    magnus', 'duda j' ~ 'duda jan krzysztof', 'hi nakamura' ~ 'hikaru nakamura'. Equal keys are
    not 'compatible' here (that is the exact-name rule)."""
    if a == b or not a or not b:
        return False
    ta, tb = a.split(" "), b.split(" ")
    return _covers(ta, tb) or _covers(tb, ta)


def is_abbreviation(short: str, long: str) -> bool:
    """True when name key `short` is an abbreviated form of `long` (see `names_compatible`)."""
    return short != long and _covers(short.split(" "), long.split(" ")) and len(short) < len(long)


_EVENT_STOP = {"the", "of", "de", "del", "la", "le", "du", "der", "im", "in", "and", "et", "chess"}


def event_key(name: str | None) -> str:
    """Key of a tournament name for matching two sources of the same event: folded words, without
    numbers (years, editions) or filler words, sorted. '' when nothing is left."""
    if not name:
        return ""
    return _event_key(name)


def _event_key(name: str) -> str:
    parts = {p for p in fold(name).replace(",", " ").split(" ") if p and not p.isdigit()}
    return " ".join(sorted(parts - _EVENT_STOP))


# ---- resolution -------------------------------------------------------------------------

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
    ("manual_merge", 1.0),
    ("manual_split", 1.0),
]
_CONFIDENCE = dict(RULES)

# Dates of two sources of one event may differ by a day or two (EventDate vs first round).
DATE_SLACK_DAYS = 3


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


def resolve_players(
    con: duckdb.DuckDBPyConnection,
    players: list[PlayerRec],
    file_id: int,
    tournament_ids: dict[int, int] | None = None,
) -> dict[tuple[int, int], Resolution]:
    """`resolve_batch` of one file. Without `tournament_ids`, the file's tournaments are read from
    the store and every player is taken to belong to the file's context."""
    if tournament_ids is None:
        rows = con.execute(
            "SELECT tournament_id FROM tournaments WHERE file_id = ? ORDER BY tournament_id", [file_id]
        ).fetchall()
        return resolve_batch(con, [FilePlayers(file_id, players, {})], [r[0] for r in rows])[0]
    return resolve_batch(con, [FilePlayers(file_id, players, tournament_ids)])[0]


def resolve_batch(
    con: duckdb.DuckDBPyConnection, files: list[FilePlayers], file_tids: list[int] | None = None
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
    one TRF tournament (two start ranks) are never the same player. Merged players resolve to the
    player they were merged into.

    `file_tids`: the tournaments of a single file given without `tournament_ids` (its players'
    context is then the union of theirs). Returns, per file, {(tournament_ref, ref): Resolution}.
    Writes `players` rows for new people and fills identifiers the store lacked (inside the
    caller's transaction)."""
    resolver = _BatchResolver(con, files, file_tids)
    outs = [resolver.resolve_file(f) for f in files]
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
        for col, values in (("fide_id", fids), ("national_id", nids), ("name_key", keys)):
            if values:
                for r in con.execute(sql + f"p.{col} IN (SELECT UNNEST(?))", [values]).fetchall():
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
        self.index.enrich(known, p, self.writes, key)
        if key and key != known.name_key:
            # the spelling is now an alias of the player: a later file finds it by that key
            self.index.add(_Known(known.player_id, known.fide_id, known.national_id, key, known.federation,
                                  known.birth_year))  # fmt: skip
        return Resolution(known.player_id, rule, _CONFIDENCE[rule])

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
        groups: dict[tuple, list[PlayerRec]] = {}
        for p in pending:
            key = name_key(p.name) if p.name else ""
            gk: tuple = (
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
            taken = trf_taken.get(rep.tournament_ref, set()) if rep.start_rank is not None else set()
            hit = self.index.find_by_name(rep, key, ctx, taken)
            if hit is None:
                known = self.writes.create(rep, key, f.file_id)
                self.index.add(known)
                res = Resolution(known.player_id, "new", _CONFIDENCE["new"])
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
        return out


class _SetUnion:
    """Membership in the union of some sets, without building it."""

    def __init__(self) -> None:
        self.sets: list[set[int]] = []

    def add(self, s: set[int]) -> None:
        if s and all(s is not t for t in self.sets):
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

        by_cols: dict[tuple[str, ...], list[tuple]] = {}
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
        with registered(con, "_new_players", df):
            con.execute(f"INSERT INTO players ({', '.join(_NEW_PLAYER_COLS)}) SELECT * FROM _new_players")
        self.new = {}
        return real


def tournament_spans(
    con: duckdb.DuckDBPyConnection, tids: Iterable[int] | None = None
) -> dict[int, tuple[str, object, object]]:
    """{tournament_id: (event_key, first day, last day)} of the tournaments `tids` (None: every
    tournament of the store); days are `tournaments.first_day` / `last_day` (None when unknown)."""
    if tids is None:
        rows = con.execute("SELECT tournament_id, event_key, first_day, last_day FROM tournaments").fetchall()
    else:
        rows = con.execute(
            "SELECT tournament_id, event_key, first_day, last_day FROM tournaments"
            " WHERE tournament_id IN (SELECT UNNEST(?))",
            [sorted(set(tids))],
        ).fetchall()
    return {r[0]: (r[1] or "", r[2], r[3]) for r in rows}


def near_tournaments(con: duckdb.DuckDBPyConnection, tids: Iterable[int]) -> set[int]:
    """The tournaments that can be sources of the same event as one of `tids`, or overlap one in
    dates (within `DATE_SLACK_DAYS`), `tids` included: the candidates of `same_event` (same
    event key, days overlapping or unknown) and `dates_overlap`, found by joins on
    `tournaments.event_key` and on the days of play, so the cost follows the tournaments near
    these, not the store (an "Open" of every past month is not near this month's)."""
    ids = sorted(set(tids))
    if not ids:
        return set()
    rows = con.execute(
        f"""
        WITH b AS (SELECT tournament_id, event_key, first_day, last_day FROM tournaments
                   WHERE tournament_id IN (SELECT UNNEST($ids)))
        -- same event key with unknown days: `same_event` holds whatever the dates
        SELECT t.tournament_id FROM tournaments t JOIN b ON t.event_key = b.event_key AND b.event_key <> ''
         AND (t.first_day IS NULL OR b.first_day IS NULL)
        UNION
        SELECT t.tournament_id FROM tournaments t JOIN b
          ON t.first_day <= b.last_day + INTERVAL {DATE_SLACK_DAYS} DAY
         AND b.first_day <= t.last_day + INTERVAL {DATE_SLACK_DAYS} DAY
        """,
        {"ids": ids},
    ).fetchall()
    return {r[0] for r in rows} | set(ids)


def dates_overlap(a0, a1, b0, b1, slack_days: int = DATE_SLACK_DAYS) -> bool | None:
    """Whether two date ranges overlap within `slack_days`; None when either is unknown."""
    import datetime as _dt

    if a0 is None or b0 is None:
        return None
    slack = _dt.timedelta(days=slack_days)
    return a0 - slack <= (b1 or b0) and b0 - slack <= (a1 or a0)


def same_event(a: tuple[str, object, object], b: tuple[str, object, object]) -> bool:
    """Two tournaments are sources of one event: same event key, and dates overlapping (or unknown)."""
    if not a[0] or a[0] != b[0]:
        return False
    return dates_overlap(a[1], a[2], b[1], b[2]) is not False


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
        same = self.by_pid.get(k.player_id, [])
        if any(s.name_key == k.name_key and s.fide_id == k.fide_id and s.national_id == k.national_id
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

    def find_by_name(self, p: PlayerRec, key: str, ctx: set[int], taken: set[int]) -> tuple[_Known, str] | None:
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
        spelling as the player's name (see `_fuller`), so it does not depend on the order of files."""
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
        if key and key != k.name_key and _fuller(key, k.name_key):
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
        stored = sorted(near - self.batch)
        if stored:
            rows = con.execute(
                "SELECT tp.tournament_id, COALESCE(p.merged_into, p.player_id), p.fide_id, p.national_id,"
                " p.name_key, p.federation, p.birth_year FROM tournament_players tp"
                " JOIN players p USING (player_id) WHERE tp.tournament_id IN (SELECT UNNEST(?))",
                [stored],
            ).fetchall()
            for r in rows:
                index.add(_Known(*r[1:]))
                self.add_member(r[0], r[1])
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
        sets = sorted((self.by_token.get(t, set()) for t in full), key=len)
        out = {pid for pid in sets[0] if all(pid in s for s in sets[1:])}  # holding all of them
        tokens = sorted(full)
        if len(tokens) > _SUBSET_TOKENS:  # a name of many words: every player sharing a full token (rare)
            return set().union(*(self.by_token.get(t, ()) for t in full))
        for n in range(1, len(tokens) + 1):
            for sub in itertools.combinations(tokens, n):
                out |= self.by_full_tokens.get(frozenset(sub), set())
        return out


def _full_tokens(key: str) -> frozenset[str]:
    return frozenset(t for t in key.split(" ") if len(t) > _ABBREV_MAX)


def _fuller(a: str, b: str) -> bool:
    """True when name key `a` is the better display spelling than `b`: more full (3+ letter) name
    parts, then longer, then alphabetically first (so the choice never depends on order)."""

    def rank(k: str) -> tuple:
        return (sum(len(t) > _ABBREV_MAX for t in k.split(" ")), len(k))

    return rank(a) > rank(b) or (rank(a) == rank(b) and a < b)


def _unique_ids(cands) -> list[_Known]:
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


# ---- officer decisions: merge, split, suspects --------------------------------------------


class IdentityError(ValueError):
    """A merge or split that the identity rules forbid (e.g. two different FIDE IDs)."""


_PLAYER_COLS = ("player_id", "fide_id", "national_id", "name", "name_key", "federation", "birth_year", "merged_into")


def _player(con: duckdb.DuckDBPyConnection, player_id: int) -> dict:
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
    Raises IdentityError for an unknown player, a player merged with itself, or two different
    FIDE IDs / national IDs (never merged)."""
    return _merge(con, kept_id, merged_id, reason, decided_by, None)


class _Batch:
    """What `consolidate`'s merges leave to one pass at the end, because none of its decisions
    reads it: the kept players' display names (a player's spellings change only when another is
    merged into it, which adds it again, or when it is merged away, and `_merge` refreshes it
    first), the player ids of `games` and `unplayed_rounds` (each moved id goes to the end of
    its chain of merges, where one UPDATE per merge would have taken it), and the `player_merges`
    rows (only the officers' splits are read back, and the transaction's `now()` is one time)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.stale_names: set[int] = set()
        self.moved: dict[int, int] = {}
        self.decisions: list[tuple[int, int, str, str]] = []  # player_merges rows, in merge order
        # a store without official lists has no row of theirs to move (nothing here adds one)
        self.official = bool(con.execute("SELECT EXISTS (SELECT 1 FROM official_lists)").fetchall()[0][0])

    def flush(self, con: duckdb.DuckDBPyConnection) -> None:
        import polars as pl

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
            con.register("_decisions", rows)
            con.execute(
                "INSERT INTO player_merges (merge_id, kept_id, merged_id, action, decided_by, reason, decided_at)"
                " SELECT merge_id, kept_id, merged_id, 'merge', decided_by, reason, now() FROM _decisions"
            )
            con.unregister("_decisions")
        if self.stale_names:
            refresh_display_names(con, self.stale_names)
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


def _merge(
    con: duckdb.DuckDBPyConnection,
    kept_id: int,
    merged_id: int,
    reason: str,
    decided_by: str,
    batch: _Batch | None,
) -> int:
    """`merge_players`. `batch` (`consolidate`, which has checked that the two players share no
    tournament): the display name refresh and the rewrite of games and unplayed rounds are left
    to `batch.flush`. A player whose refresh is pending is refreshed before it is read here as
    the merged one: its name is copied when its name key is the fuller, so it must be the name an
    immediate refresh gave."""
    if batch is not None and merged_id in batch.stale_names:
        batch.stale_names.discard(merged_id)
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
            raise IdentityError(
                f"players {kept['player_id']} and {merged_id} have different {col}s ({kept[col]} vs {other[col]});"
                " they are never merged"
            )
    kid = kept["player_id"]
    # identifiers the kept player lacks, and the fuller spelling (automatic merges): one UPDATE
    sets = {c: other[c] for c in ("fide_id", "national_id", "federation", "birth_year") if not kept[c] and other[c]}
    if decided_by.startswith("rule:") and other["name_key"] and _fuller(other["name_key"], kept["name_key"]):
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
    conf = "1.0" if rule == "manual_merge" else "least(confidence, ?)"
    con.execute(
        f"UPDATE player_aliases SET match_rule = ?, confidence = {conf}, player_id = ? WHERE player_id = ?",
        [rule, kid, merged_id] if rule == "manual_merge" else [rule, _CONFIDENCE.get(rule, 1.0), kid, merged_id],
    )
    if batch is None:
        _rewrite(con, merged_id, kid, aliases=False)
        refresh_display_names(con, [kid])
    else:
        # `_rewrite` less what `batch` defers; no entry to delete, as they share no tournament
        con.execute("UPDATE tournament_players SET player_id = ? WHERE player_id = ?", [kid, merged_id])
        if batch.official:
            con.execute("UPDATE official_lists SET player_id = ? WHERE player_id = ?", [kid, merged_id])
        batch.moved[merged_id] = kid
        batch.stale_names.add(kid)
        batch.decisions.append((kid, merged_id, _decider(decided_by), reason))
        return 0  # the merge_id is drawn by `batch.flush`
    return con.execute(
        "INSERT INTO player_merges (merge_id, kept_id, merged_id, action, decided_by, reason, decided_at)"
        " VALUES (nextval('merge_id_seq'), ?, ?, 'merge', ?, ?, now()) RETURNING merge_id",
        [kid, merged_id, _decider(decided_by), reason],
    ).fetchall()[0][0]


def refresh_display_names(con: duckdb.DuckDBPyConnection, player_ids: Iterable[int]) -> int:
    """Set `players.name` of `player_ids` to the best of every spelling the store holds for them
    (their `tournament_players.name_as_written`, their names on imported official lists), so the
    name on a list does not depend on which file came first.

    Best: a name from the latest official list (a name change counts from its list); then
    the fullest name (more words of 3+ letters, then
    more letters, any script); then the 'Surname, Firstname' form; then more non-ASCII letters
    (accents kept: 'Göl' before 'Gol'); then fewer capitals (TRF files often write surnames in
    capitals); then alphabetically first.  Identity matching uses `name_key` and aliases, never
    this display name.  Returns how many names changed."""
    ids = sorted({int(i) for i in player_ids})
    if not ids:
        return 0
    res = con.execute(
        r"""
        UPDATE players SET name = best.spelled
        FROM (
            WITH written AS (
                SELECT player_id, name_as_written AS spelled, FALSE AS official, NULL::DATE AS listed
                FROM tournament_players
                WHERE player_id IN (SELECT UNNEST($ids)) AND trim(coalesce(name_as_written, '')) <> ''
                UNION ALL
                SELECT player_id, name, TRUE, list_date FROM official_lists
                WHERE player_id IN (SELECT UNNEST($ids)) AND trim(coalesce(name, '')) <> ''
            ),
            -- the ranking's first keys, taken first: a name on the player's latest official list
            -- beats every other, so a player on twelve monthly lists has one list's names to rank
            spellings AS (
                SELECT * FROM written
                WINDOW w AS (PARTITION BY player_id)
                QUALIFY official = bool_or(official) OVER w AND (NOT official OR listed = max(listed) OVER w)
            ),
            -- most players are written one way only: that spelling is the best, with no ranking
            -- (the regular expressions below cost more than the rest of the statement)
            variety AS (SELECT player_id, count(DISTINCT spelled) AS n FROM spellings GROUP BY 1)
            SELECT player_id, any_value(spelled) AS spelled
            FROM spellings JOIN variety USING (player_id) WHERE n = 1 GROUP BY 1
            UNION ALL
            SELECT player_id, spelled FROM (
                SELECT player_id, spelled, row_number() OVER (
                    PARTITION BY player_id
                    ORDER BY official DESC, listed DESC NULLS LAST,
                             len(list_filter(regexp_extract_all(spelled, '\p{L}+'), lambda t: length(t) > 2)) DESC,
                             length(regexp_replace(spelled, '[^\p{L}]', '', 'g')) DESC,
                             contains(spelled, ', ') DESC,
                             length(regexp_replace(spelled, '[^\p{L}]|[A-Za-z]', '', 'g')) DESC,
                             length(regexp_replace(spelled, '[^A-Z]', '', 'g')),
                             spelled
                ) AS r
                -- equal rows rank equal: each distinct one is ranked once
                FROM (SELECT DISTINCT s.* FROM spellings s JOIN variety USING (player_id) WHERE n > 1)
            ) WHERE r = 1
        ) best
        WHERE players.player_id = best.player_id AND players.name IS DISTINCT FROM best.spelled
        """,
        {"ids": ids},  # one list, converted once (a batch passes tens of thousands of ids)
    ).fetchall()
    return int(res[0][0]) if res else 0


def _decider(decided_by: str) -> str:
    return decided_by if ":" in decided_by else f"officer:{decided_by}"


def _split_targets(
    con: duckdb.DuckDBPyConnection, player_id: int, criteria: dict, file_ids: list[int] | None = None
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
        if events and (event_key(tname), start.isoformat() if start else None) not in events:
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
    (games and unplayed rounds of those tournaments). Raises IdentityError when nothing matches."""
    if not name and not tournament_ids:
        raise IdentityError("a split needs --name or --tournament")
    _player(con, player_id)
    criteria: dict = {}
    if name:
        criteria["name_key"] = name_key(name)
    if tournament_ids:
        rows = con.execute(
            "SELECT name, start_date FROM tournaments WHERE tournament_id IN (SELECT UNNEST(?))", [tournament_ids]
        ).fetchall()
        criteria["events"] = sorted({(event_key(n), s.isoformat() if s else None) for n, s in rows}, key=str)
    tids = _split_targets(con, player_id, criteria)
    if not tids:
        raise IdentityError(f"no tournament entry of player {player_id} matches {criteria}")
    first = con.execute(
        "SELECT name_as_written, fide_id_in_file, federation, birth_year, sex FROM tournament_players"
        " WHERE player_id = ? AND tournament_id IN (SELECT UNNEST(?)) ORDER BY tournament_id LIMIT 1",
        [player_id, tids],
    ).fetchall()[0]
    orig = _player(con, player_id)
    fid = first[1] if first[1] and first[1] != orig["fide_id"] else None
    new_id = con.execute("SELECT nextval('player_id_seq')").fetchall()[0][0]
    written = first[0] or name or orig["name"]
    con.execute(
        "INSERT INTO players (player_id, fide_id, name, name_key, federation, birth_year, sex) VALUES (?,?,?,?,?,?,?)",
        [new_id, fid, written, name_key(written), first[2], first[3], first[4]],
    )
    _move_in_tournaments(con, player_id, new_id, tids)
    refresh_display_names(con, [player_id, new_id])
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


def suspects(con: duckdb.DuckDBPyConnection, min_confidence: float = 0.6) -> list[dict]:
    """Likely duplicates and weak links for an officer to review, with the evidence.

    Each item: {'player_a', 'player_b' (or None), 'name_a', 'name_b', 'reason', 'evidence'}.
    Reasons: 'same_name_birth_year' (same name key and birth year, two players: two IDs for one
    person when the FIDE IDs differ), 'same_name' (same name key, neither has a FIDE ID, both
    played), 'abbreviated_name' (e.g. 'Duda,J' and 'Duda, Jan-Krzysztof' both in the store, one
    without a FIDE ID), 'same_national_id' / 'same_fide_id' (one identifier on two players, kept
    apart because e.g. the birth years differ), 'weak_link' (an alias linked with confidence below
    `min_confidence`).
    Merged players and pairs an officer split are left out."""
    out: list[dict] = []
    split_pairs = {
        frozenset(r)
        for r in con.execute("SELECT kept_id, merged_id FROM player_merges WHERE action = 'split'").fetchall()
    }
    played = "player_id IN (SELECT player_id FROM tournament_players)"
    rows = con.execute(
        f"""
        WITH p AS (SELECT * FROM players WHERE merged_into IS NULL)
        SELECT a.player_id, b.player_id, a.name, b.name, a.birth_year, b.birth_year, a.fide_id, b.fide_id,
               a.federation, b.federation
        FROM p a JOIN p b ON a.name_key = b.name_key AND a.player_id < b.player_id AND a.name_key <> ''
        WHERE (a.birth_year IS NOT NULL AND a.birth_year = b.birth_year)
           OR (a.fide_id IS NULL AND b.fide_id IS NULL AND a.{played} AND b.{played})
        ORDER BY 1, 2
        """
    ).fetchall()
    for a, b, na, nb, ya, yb, fa, fb, fda, fdb in rows:
        if frozenset((a, b)) in split_pairs:
            continue
        reason = "same_name_birth_year" if ya and ya == yb else "same_name"
        ev = f"name {na!r} / {nb!r}; birth {ya}/{yb}; FIDE ID {fa}/{fb}; federation {fda}/{fdb}"
        if fa and fb and fa != fb:
            ev += " (different FIDE IDs: never merged automatically)"
        out.append({"player_a": a, "player_b": b, "name_a": na, "name_b": nb, "reason": reason, "evidence": ev})
    # one national ID (or FIDE ID) on two players: kept apart because something contradicted
    for col in ("national_id", "fide_id"):
        for a, b, na, nb, ya, yb in con.execute(
            f"""
            WITH p AS (SELECT * FROM players WHERE merged_into IS NULL AND {col} IS NOT NULL)
            SELECT a.player_id, b.player_id, a.name, b.name, a.birth_year, b.birth_year
            FROM p a JOIN p b ON a.{col} = b.{col} AND a.player_id < b.player_id ORDER BY 1, 2
            """
        ).fetchall():
            if frozenset((a, b)) in split_pairs:
                continue
            out.append(
                {"player_a": a, "player_b": b, "name_a": na, "name_b": nb, "reason": f"same_{col}",
                 "evidence": f"one {col} on two players: {na!r} (born {ya}) / {nb!r} (born {yb})"}
            )  # fmt: skip
    # abbreviated names: compare players who played, sharing a full (3+ letter) name token
    cands = con.execute(
        f"SELECT player_id, name, name_key, fide_id FROM players WHERE merged_into IS NULL AND {played}"
    ).fetchall()
    by_token: dict[str, list[tuple]] = {}
    for c in cands:
        for tok in set(c[2].split(" ")):
            if len(tok) > _ABBREV_MAX:
                by_token.setdefault(tok, []).append(c)
    seen: set[tuple[int, int]] = set()
    for group in by_token.values():
        if len(group) > 200:  # a very common surname: too many pairs to be useful
            continue
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                pair = (min(a[0], b[0]), max(a[0], b[0]))
                if pair in seen or frozenset(pair) in split_pairs or (a[3] and b[3] and a[3] != b[3]):
                    continue
                if names_compatible(a[2], b[2]):
                    seen.add(pair)
                    out.append(
                        {"player_a": a[0], "player_b": b[0], "name_a": a[1], "name_b": b[1],
                         "reason": "abbreviated_name", "evidence": f"{a[1]!r} may abbreviate {b[1]!r} (or back)"}
                    )  # fmt: skip
    for pid, pname, written, rule, conf, n in con.execute(
        """
        SELECT a.player_id, p.name, a.name_as_written, a.match_rule, min(a.confidence), count(*)
        FROM player_aliases a JOIN players p USING (player_id)
        WHERE a.confidence < ? GROUP BY ALL ORDER BY 1, 3
        """,
        [min_confidence],
    ).fetchall():
        out.append(
            {"player_a": pid, "player_b": None, "name_a": pname, "name_b": written, "reason": "weak_link",
             "evidence": f"{written!r} linked to {pname!r} by rule {rule} (confidence {conf}) in {n} entries"}
        )  # fmt: skip
    return out


# ---- consolidation: links that later evidence makes certain ---------------------------------


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
      abbreviation-compatible player of the other (`_initials_pairs`).
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
    batch = _Batch(con)
    name_seeds = set(touched)
    for round_no in range(max_rounds):
        pairs = _same_name_groups(con, name_seeds) + _initials_pairs(con, touched, anchors)
        done = _merge_pairs(con, pairs, batch) if pairs else []
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
        from elopipe import dedup  # late: dedup imports this module

        # only the kept players' games changed ids (the merged players' entries moved to them)
        related = dedup.related_tournaments(con, _tournaments_of(con, kept_ids))
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


def _merge_pairs(
    con: duckdb.DuckDBPyConnection, pairs: list[tuple[int, int, str]], batch: _Batch
) -> list[tuple[int, int]]:
    """Merge each pair (kept, other, rule), in order, as `_merge` allows; returns the (kept,
    merged) ids merged. A pair is taken at its players' current ids (a pair met after one of its
    players was merged applies to the player it was merged into) and skipped when both are one
    player already, when an officer split them, or when they share a tournament. Those checks
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
    split_pairs = {
        frozenset(r)
        for r in con.execute("SELECT kept_id, merged_id FROM player_merges WHERE action = 'split'").fetchall()
    }
    done: list[tuple[int, int]] = []
    for kept, other, rule in pairs:
        kept, other = final[kept], final[other]
        if kept == other or frozenset((kept, other)) in split_pairs:
            continue
        if tours.get(kept, set()) & tours.get(other, set()):
            continue  # two entries of one tournament are two people
        try:
            _merge(con, kept, other, f"automatic: {rule}", f"rule:{rule}", batch)
        except IdentityError:
            continue
        for x, f in final.items():
            if f == other:
                final[x] = kept
        tours.setdefault(kept, set()).update(tours.pop(other, set()))
        done.append((kept, other))
    return done


def _kept_first(a: tuple, b: tuple) -> tuple[tuple, tuple]:
    """(kept, other) of two player rows (player_id, name_key, fide_id, ...)."""

    def rank(r: tuple) -> tuple:
        return (r[2] is None, -len(r[1]), r[0])

    return (a, b) if rank(a) <= rank(b) else (b, a)


def _compatible_rows(a: tuple, b: tuple) -> bool:
    # rows: (player_id, name_key, fide_id, national_id, birth_year)
    return all(not (a[i] and b[i] and a[i] != b[i]) for i in (2, 3, 4))


def _same_name_groups(con: duckdb.DuckDBPyConnection, touched: set[int]) -> list[tuple[int, int, str]]:
    """'name' pairs (kept, other, 'name'): a name key spelled (as a player's name key or one of its
    aliases) by exactly two unmerged players, at least one of them touched, the lower id's name
    key not empty and nothing contradicting (`_compatible_rows`). Starts from the touched
    players' keys and joins players and aliases on `name_key`, so the cost follows those keys."""
    if not touched:
        return []
    rows = con.execute(
        """
        WITH live AS (
            SELECT player_id FROM players WHERE player_id IN (SELECT UNNEST(?)) AND merged_into IS NULL
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
        """,
        [sorted(touched)],
    ).fetchall()
    out = []
    for r in rows:
        a, b = r[:5], r[5:]
        if _compatible_rows(a, b):
            kept, other = _kept_first(a, b)
            out.append((kept[0], other[0], "name"))
    return out


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
    rows = con.execute(
        f"""
        WITH {_events_sql()}
        seed1 AS (
            SELECT DISTINCT ag.gid, tp.player_id FROM ag JOIN tournament_players tp ON tp.tournament_id = ag.anchor
            WHERE tp.player_id IN (SELECT UNNEST($touched))
        ),
        near1 AS ({_near_pairs_sql("seed1")}),
        seed2 AS (SELECT gid, player_id FROM seed1 UNION SELECT gid, y FROM near1),
        near2 AS ({_near_pairs_sql("seed2")})
        SELECT near2.gid, near2.x, near2.y, seed1.player_id IS NOT NULL
        FROM near2 LEFT JOIN seed1 ON seed1.gid = near2.gid AND seed1.player_id = near2.x
        ORDER BY 1, 2, 3
        """,
        {"anchors": sorted(anchors), "touched": sorted(touched)},
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
