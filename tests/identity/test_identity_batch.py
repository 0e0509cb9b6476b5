"""Store-side identity work once per batch (issue 13, items 1 and 4): `apply_manual_decisions` and
`consolidate` over the file ids of a batch give what they give file by file, and the initials
rule stays within one event's sources, through joins, with generic event names."""

from __future__ import annotations

import datetime as dt
import hashlib
import random
from decimal import Decimal

import duckdb
import pytest

from elopipe.identity import consolidate, decisions, nearby
from elopipe.ingest.loader import load_parsed_source
from elopipe.read import names
from elopipe.read.parse import ParsedSource, parse_source
from elopipe.read.records import GameRec, ParsedFile, PlayerRec, TournamentRec
from elopipe.read.sources import Source
from tests.helpers.paths import REPO
from tests.helpers.schema_store import schema_connect
from tests.helpers.store_build import add_rows

DATA = REPO.parent / "shared" / "data"
REAL_FILES = [
    DATA / "pgn" / "wchcand22.pgn",
    DATA / "pgn" / "fide_candidates_2022_madrid_spain.pgn",
    DATA / "pgn" / "norway_chess_2022_classical.pgn",
    DATA / "pgn" / "norway_chess_2022_armageddon.pgn",
    DATA / "trf" / "irl_gonzaga_classic_2008_fide_ids.trf",
]
needs_data = pytest.mark.skipif(not REAL_FILES[0].exists(), reason="shared data not present")

D0, D1 = dt.date(2024, 1, 5), dt.date(2024, 1, 7)


def _con() -> duckdb.DuckDBPyConnection:
    con = schema_connect()
    return con


def _pgn(event: str, names: list[tuple[str, int | None]], pairs=((0, 1, 1, "1-0"),), start=D0, end=D1):
    """A PGN-like parsed file: one tournament, players (name, FIDE ID), games (white, black, round, result)."""
    players = [PlayerRec(i, 1, n, fide_id=f) for i, (n, f) in enumerate(names)]
    games = [
        GameRec(1, w, b, r, round=rnd, white_score=Decimal(1 if r == "1-0" else 0),
                black_score=Decimal(0 if r == "1-0" else 1))
        for w, b, rnd, r in pairs
    ]  # fmt: skip
    return ParsedFile(
        "pgn", tournaments=[TournamentRec(1, name=event, start_date=start, end_date=end)], players=players, games=games
    )


def _source(parsed: ParsedFile, path: str) -> ParsedSource:
    sha = hashlib.sha256((path + repr(parsed)).encode()).hexdigest()
    return ParsedSource(Source(path), sha, 100, parsed.format, "utf-8", "LF", parsed)


def _load_one_by_one(con, sources: list[ParsedSource]) -> list[int]:
    out = []
    for ps in sources:
        res = load_parsed_source(con, ps)
        assert res.status == "loaded", res.reason
        out.append(res.file_id)
    return out


def _load_as_batch(con, sources: list[ParsedSource], monkeypatch) -> list[int]:
    """Load each file without the store-side decisions, then run them once over all the file ids,
    as the batch loader does at the end of a batch."""
    with monkeypatch.context() as m:
        m.setattr(decisions, "apply_manual_decisions", lambda *a, **k: 0)
        m.setattr(consolidate, "consolidate", lambda *a, **k: [])
        ids = _load_one_by_one(con, sources)
    con.execute("BEGIN TRANSACTION")
    decisions.apply_manual_decisions(con, ids)
    consolidate.consolidate(con, ids)
    players = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT player_id FROM tournament_players WHERE file_id IN (SELECT UNNEST(?))", [ids]
        ).fetchall()
    ]
    decisions.refresh_display_names(con, players)
    con.execute("COMMIT")
    return ids


def _partition(con) -> set[frozenset]:
    """The people, each as the set of (file, tournament, spelling) it was written as."""
    people: dict[int, set] = {}
    for pid, path, tname, written in con.execute(
        "SELECT a.player_id, f.path, t.name, a.name_as_written FROM player_aliases a"
        " JOIN source_files f USING (file_id) JOIN tournaments t USING (tournament_id)"
    ).fetchall():
        people.setdefault(pid, set()).add((path, tname, written))
    return {frozenset(v) for v in people.values()}


def _names(con) -> list[str]:
    return sorted(r[0] for r in con.execute("SELECT name FROM players WHERE merged_into IS NULL").fetchall())


TWO_EXPORTS = [  # one event written twice in one file: full names, then initials
    ("Carlsen, Magnus", 1503014),
    ("Nepomniachtchi, Ian", 4168119),
    ("Carlsen,M", None),
    ("Nepomniachtchi,I", None),
]


def _synthetic_sources() -> list[ParsedSource]:
    spring = ParsedFile(
        "pgn",
        tournaments=[
            TournamentRec(1, name="Spring Cup 2023", start_date=dt.date(2023, 4, 1), end_date=dt.date(2023, 4, 2)),
            TournamentRec(2, name="Spring Cup", start_date=dt.date(2023, 4, 1), end_date=dt.date(2023, 4, 2)),
        ],
        players=[PlayerRec(i, 1 if i < 2 else 2, n, fide_id=f) for i, (n, f) in enumerate(TWO_EXPORTS)],
        games=[
            GameRec(1, 0, 1, "1-0", round=1, white_score=Decimal(1), black_score=Decimal(0)),
            GameRec(2, 2, 3, "1-0", round=1, white_score=Decimal(1), black_score=Decimal(0)),
        ],
    )
    return [
        _source(spring, "/v/spring.pgn"),
        _source(_pgn("Open X 2024", [("Duda,J", None), ("Rapport,R", None)]), "/v/x1.pgn"),
        _source(_pgn("Open X 2024", [("Duda, Jan-Krzysztof", 1170546), ("Rapport, Richard", 738590)]), "/v/x2.pgn"),
        _source(
            _pgn(
                "Club Y",
                [("Nielsen, Peter", None), ("Lund, Eva", None)],
                start=dt.date(2022, 5, 1),
                end=dt.date(2022, 5, 1),
            ),
            "/v/y.pgn",
        ),
        _source(
            _pgn(
                "Spring Cup",
                [("Carlsen,M", None), ("Nielsen, Peter", None)],
                start=dt.date(2023, 4, 2),
                end=dt.date(2023, 4, 2),
            ),
            "/v/spring2.pgn",
        ),
    ]


def test_consolidate_over_a_batch_gives_the_players_of_file_by_file(monkeypatch) -> None:
    one = _con()
    _load_one_by_one(one, _synthetic_sources())
    batch = _con()
    _load_as_batch(batch, _synthetic_sources(), monkeypatch)
    assert _partition(batch) == _partition(one)
    assert _names(batch) == _names(one)
    # the batch had something to do: the initials of the two exports were merged at its end
    rules = batch.execute("SELECT decided_by FROM player_merges ORDER BY merge_id").fetchall()
    assert ("rule:initials_context",) in rules


@needs_data
def test_consolidate_over_a_batch_of_real_files_gives_the_players_of_file_by_file(monkeypatch) -> None:
    sources = [parse_source(Source(str(p))) for p in REAL_FILES]
    one = _con()
    _load_one_by_one(one, sources)
    batch = _con()
    _load_as_batch(batch, [parse_source(Source(str(p))) for p in REAL_FILES], monkeypatch)
    assert _partition(batch) == _partition(one)
    assert _names(batch) == _names(one)
    count = "SELECT count(*) FROM canonical_games"
    assert batch.execute(count).fetchone() == one.execute(count).fetchone()


def _weekend(start: dt.date, names: list[tuple[str, int | None]]) -> ParsedFile:
    return _pgn("Weekend Open", names, start=start, end=start + dt.timedelta(days=2))


def test_generic_name_does_not_merge_initials_across_two_weekends(monkeypatch) -> None:
    # two events named "Weekend Open", a week apart (dates do not overlap): two sources of two
    # events, not of one; a third one in between overlaps both, with neither Smith in it
    first = _weekend(dt.date(2024, 3, 1), [("Smith, John", 1001), ("Brown, Ann", None)])
    second = _weekend(dt.date(2024, 3, 7), [("Smith, J", None), ("Grey, Tom", None)])
    middle = _weekend(dt.date(2024, 3, 4), [("Olsen, Kari", None), ("Berg, Lars", None)])
    for loader in ("one_by_one", "batch"):
        con = _con()
        sources = [_source(p, f"/v/{i}.pgn") for i, p in enumerate((first, second, middle))]
        if loader == "batch":
            _load_as_batch(con, sources, monkeypatch)
        else:
            _load_one_by_one(con, sources)
        names = _names(con)
        assert "Smith, J" in names and "Smith, John" in names, loader
        assert con.execute("SELECT count(*) FROM player_merges").fetchone()[0] == 0


def test_generic_name_merges_initials_within_one_event_only_when_unique() -> None:
    # the same weekend (dates overlap): 'Smith, J' is the only compatible player of 'Smith, John'
    con = _con()
    _load_one_by_one(
        con,
        [
            _source(_weekend(dt.date(2024, 3, 1), [("Smith, John", 1001), ("Brown, Ann", None)]), "/v/a.pgn"),
            _source(_weekend(dt.date(2024, 3, 2), [("Smith, J", None), ("Grey, Tom", None)]), "/v/b.pgn"),
        ],
    )
    assert "Smith, J" not in _names(con)
    # two compatible players in the event ('Smith, John' and 'Smith, James'): 'Smith, J' stays apart
    con = _con()
    _load_one_by_one(
        con,
        [
            _source(_weekend(dt.date(2024, 3, 1), [("Smith, John", 1001), ("Brown, Ann", None)]), "/v/a.pgn"),
            _source(_weekend(dt.date(2024, 3, 1), [("Smith, James", 1002), ("Kim, Lee", None)]), "/v/c.pgn"),
            _source(_weekend(dt.date(2024, 3, 2), [("Smith, J", None), ("Grey, Tom", None)]), "/v/b.pgn"),
        ],
    )
    assert "Smith, J" in _names(con)


def test_initials_compare_only_the_batch_players_and_their_namesakes(monkeypatch) -> None:
    # twelve overlapping "Weekend Open" files of twenty players each, all different names: the
    # last file's players share no full name token with anyone, so no pair is ever compared
    con = _con()
    sources = [
        _source(
            _weekend(
                dt.date(2024, 3, 1) + dt.timedelta(days=i % 3),
                [(f"Surname{i}x{j}, Given{i}y{j}", None) for j in range(20)],
            ),
            f"/v/w{i}.pgn",
        )  # fmt: skip
        for i in range(12)
    ]
    _load_one_by_one(con, sources[:-1])
    calls = []
    real = names.names_compatible
    monkeypatch.setattr(consolidate, "names_compatible", lambda a, b: calls.append((a, b)) or real(a, b))
    with monkeypatch.context() as m:
        m.setattr(consolidate, "consolidate", lambda *a, **k: [])
        (fid,) = _load_one_by_one(con, sources[-1:])
    calls.clear()
    touched = {
        r[0] for r in con.execute("SELECT player_id FROM tournament_players WHERE file_id = ?", [fid]).fetchall()
    }
    anchors = {r[0] for r in con.execute("SELECT tournament_id FROM tournaments WHERE file_id = ?", [fid]).fetchall()}
    assert consolidate._initials_pairs(con, touched, anchors) == []
    assert calls == []
    # one abbreviated namesake in the event: one pair compared, and merged
    calls.clear()
    _load_one_by_one(con, [_source(_weekend(dt.date(2024, 3, 2), [("Surname3x4, G", None), ("Solo, Han", None)]),
                                   "/v/late.pgn")])  # fmt: skip
    assert "Surname3x4, G" not in _names(con)
    assert len(calls) <= 4


class _Counting:
    """A connection that counts the statements it runs."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.n = 0

    def execute(self, *args, **kwargs):
        self.n += 1
        return self.con.execute(*args, **kwargs)


def test_apply_manual_decisions_costs_one_query_without_decisions() -> None:
    con = _con()
    ids = _load_one_by_one(con, _synthetic_sources()[1:3])
    counting = _Counting(con)
    assert decisions.apply_manual_decisions(counting, ids) == 0
    assert counting.n == 1


def _games_of(con, pid: int) -> int:
    return con.execute("SELECT count(*) FROM games WHERE white_id = ? OR black_id = ?", [pid, pid]).fetchone()[0]


def test_apply_manual_decisions_over_a_batch_reapplies_a_split_and_a_merge(monkeypatch) -> None:
    con = _con()
    junior = {"start": dt.date(2022, 5, 1), "end": dt.date(2022, 5, 2)}
    club = {"start": dt.date(2023, 1, 1), "end": dt.date(2023, 1, 1)}
    _load_one_by_one(
        con,
        [
            _source(_pgn("Open A", [("Nielsen, Peter", None), ("Kasparov, Garry", 4100018)]), "/v/a.pgn"),
            _source(_pgn("Junior C", [("Nielsen, Peter", None), ("C, D", None)], **junior), "/v/c.pgn"),
            _source(_pgn("Club B", [("Kasparow, Garri", None), ("Karpov, A", None)], **club), "/v/b.pgn"),
        ],
    )
    ids = {n: i for i, n in con.execute("SELECT player_id, name FROM players").fetchall()}
    pid = ids["Nielsen, Peter"]
    tid = con.execute("SELECT tournament_id FROM tournaments WHERE name = 'Junior C'").fetchone()[0]
    new = decisions.split_player(con, pid, "a junior namesake", tournament_ids=[tid])
    kept, other = ids["Kasparov, Garry"], ids["Kasparow, Garri"]
    decisions.merge_players(con, kept, other, "transliteration")
    # corrected versions of both sides of the split and of the merged player's file, in one batch
    two = ((0, 1, 1, "1-0"), (1, 0, 2, "1-0"))
    batch = _load_as_batch(
        con,
        [
            _source(_pgn("Junior C", [("Nielsen, Peter", None), ("C, D", None)], pairs=two, **junior), "/v/c.pgn"),
            _source(_pgn("Open A", [("Nielsen, Peter", None), ("Kasparov, Garry", 4100018)], pairs=two), "/v/a.pgn"),
            _source(_pgn("Club B", [("Kasparow, Garri", None), ("Karpov, A", None)], pairs=two, **club), "/v/b.pgn"),
        ],
        monkeypatch,
    )
    assert (_games_of(con, pid), _games_of(con, new)) == (2, 2)
    assert con.execute("SELECT merged_into FROM players WHERE player_id = ?", [new]).fetchone()[0] is None
    assert (_games_of(con, kept), _games_of(con, other)) == (4, 0)
    # rows of the batch's files that still name the merged player (written before the merge)
    # are all moved in one pass; rows of other files are not the batch's business
    for table, col in (("games", "white_id"), ("games", "black_id"), ("tournament_players", "player_id")):
        con.execute(
            f"UPDATE {table} SET {col} = ? WHERE {col} = ? AND file_id IN (SELECT UNNEST(?))", [other, kept, batch]
        )
    assert _games_of(con, other) == 4
    assert decisions.apply_manual_decisions(con, batch) == 1
    assert (_games_of(con, kept), _games_of(con, other)) == (4, 0)
    assert con.execute("SELECT count(*) FROM tournament_players WHERE player_id = ?", [other]).fetchone()[0] == 0


def _random_store(rng) -> duckdb.DuckDBPyConnection:
    """Tournaments of a few event keys with random days of play (some unknown), players with short,
    abbreviated and very long names (more full tokens than `_SUBSET_CAP`), some merged away."""
    con = _con()
    keys = ["open weekend", "open weekend", "open", "club", ""]
    tournaments, players, entries = [], [], []
    for tid in range(1, 13):
        d0 = None if rng.random() < 0.15 else dt.date(2024, 3, 1) + dt.timedelta(days=rng.randint(0, 14))
        d1 = d0 + dt.timedelta(days=rng.randint(0, 3)) if d0 else None
        tournaments.append({"tournament_id": tid, "file_id": tid, "source_format": "pgn", "name": "x",
                            "event_key": rng.choice(keys), "first_day": d0, "last_day": d1})  # fmt: skip
    surnames, given = ["smith", "jones", "lee", "nguyen"], ["john", "james", "jane", "j", "ja", "m", "mary", "l"]
    long_tail = ["anna", "maria", "jose", "luis", "garcia", "perez", "lopez", "ruiz"]
    for pid in range(1, 61):
        toks = [rng.choice(surnames)] + rng.sample(given, rng.randint(0, 2))
        if rng.random() < 0.1:
            toks += rng.sample(long_tail, rng.randint(5, 8))
        key = " ".join(sorted(toks))
        fid = rng.choice([None, None, 100 + pid % 5])
        merged = rng.randint(1, pid - 1) if pid > 1 and rng.random() < 0.05 else None
        players.append({"player_id": pid, "fide_id": fid, "name": key, "name_key": key,
                        "birth_year": rng.choice([None, None, 1980, 1990]), "merged_into": merged})  # fmt: skip
    for tid in range(1, 13):
        for pid in rng.sample(range(1, 61), rng.randint(4, 10)):
            entries.append({"tournament_id": tid, "player_id": pid, "file_id": tid})
    add_rows(con, tournaments=tournaments, players=players, tournament_players=entries)
    return con


def _reference_initials_pairs(con, touched: set[int], anchors: set[int]) -> set[tuple]:
    """`_initials_pairs` by its definition, in Python, comparing every two players of each event."""
    spans = nearby.tournament_spans(con)
    rows = {
        r[0]: r
        for r in con.execute(
            "SELECT player_id, name_key, fide_id, national_id, birth_year FROM players WHERE merged_into IS NULL"
        ).fetchall()
    }
    entries: dict[int, set[int]] = {}
    for tid, pid in con.execute("SELECT tournament_id, player_id FROM tournament_players").fetchall():
        if pid in rows:
            entries.setdefault(tid, set()).add(pid)
    events: dict[frozenset, list[int]] = {}
    for t in anchors:
        if spans[t][0]:
            members = frozenset(o for o in spans if o == t or nearby.same_event(spans[t], spans[o]))
            if len(members) > 1:
                events.setdefault(members, []).append(t)
    out = set()
    for members, ts in events.items():
        group = set().union(*(entries.get(o, set()) for o in members))
        compat = {
            p: [
                q
                for q in group
                if q != p
                and names.names_compatible(rows[p][1], rows[q][1])
                and consolidate._compatible_rows(rows[p], rows[q])
            ]
            for p in group
        }
        for p in {p for t in ts for p in entries.get(t, set()) if p in touched}:
            if len(compat[p]) == 1 and compat[compat[p][0]] == [p]:
                kept, other = consolidate._kept_first(rows[p], rows[compat[p][0]])
                out.add((kept[0], other[0], "initials_context"))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_initials_pairs_by_joins_are_those_of_the_rule(seed: int) -> None:
    rng = random.Random(seed)
    con = _random_store(rng)
    touched = set(rng.sample(range(1, 61), 25))
    anchors = set(rng.sample(range(1, 13), 5))
    got = consolidate._initials_pairs(con, touched, anchors)
    assert len(got) == len(set(got))
    assert set(got) == _reference_initials_pairs(con, touched, anchors)


def test_display_names_of_many_players_come_from_their_latest_official_list() -> None:
    # players on twelve monthly lists, with spellings changing from list to list: the latest
    # list's name wins, whatever the fuller spellings of older lists or of tournament entries
    con = _con()
    n = 300
    con.execute("INSERT INTO players (player_id, name, name_key) SELECT range, '?', '?' FROM range(?)", [n])
    con.execute(
        "INSERT INTO tournament_players (tournament_id, player_id, name_as_written, file_id)"
        " SELECT 1, range, 'Written, Fullest Name ' || range, 1 FROM range(?)",
        [n],
    )
    con.execute(
        "INSERT INTO official_lists (system, list_date, name, player_id)"
        " SELECT 'fide', DATE '2024-01-01' + INTERVAL (m) MONTH,"
        " CASE WHEN m = 11 THEN 'Last, L ' || p ELSE 'Older, Much Fuller Name ' || m || ' ' || p END, p"
        " FROM range(?) t(p), range(12) s(m)",
        [n],
    )
    # players 0-9 are on no list: their fullest written name wins
    con.execute("DELETE FROM official_lists WHERE player_id < 10")
    decisions.refresh_display_names(con, range(n))
    names = dict(con.execute("SELECT player_id, name FROM players").fetchall())
    assert all(names[p] == f"Last, L {p}" for p in range(10, n))
    assert all(names[p] == f"Written, Fullest Name {p}" for p in range(10))
