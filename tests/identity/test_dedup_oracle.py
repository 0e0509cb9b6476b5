"""Dedup's set-based linking against its definition: every pair of rows compared with `game_links.match_rule`.

`dedup._relink` groups rows into match classes and compares classes only where a match is
possible; these tests check it gives the links, canonical rows, roles and rules that comparing
every pair of rows of a (white, black) bucket gives, on random stores, and that a file whose own
players merge (the loader re-links it once) ends with the links a full re-link gives.
"""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from elopipe.identity import dedup, game_links
from elopipe.identity.nearby import tournament_spans
from elopipe.ingest.driver import ingest_paths
from elopipe.read.names import event_key
from tests.helpers.schema_store import schema_connect
from tests.helpers.store_build import add_rows

BASE = dt.date(2022, 6, 1)


Rows = tuple[list[dict], list[dict]]  # (tournaments, games) of a store


def _random_store(seed: int) -> Rows:
    """A store with a few tournaments (same or other event, overlapping dates or not) and games
    among three pairings, with random rounds, hashes, results, plies and dates."""
    rnd = random.Random(seed)
    n_t = rnd.randint(2, 6)
    tournaments: list[dict] = []
    games: list[dict] = []
    for t in range(1, n_t + 1):
        start = None if rnd.random() < 0.2 else BASE + dt.timedelta(days=rnd.choice([0, 1, 2, 10, 30]))
        end = start + dt.timedelta(days=5) if start else None
        name = rnd.choice(["Candidates", "Candidates 2022", "Open", "Other"])
        # event_key and the days of play as the loader writes them (dedup reads these columns)
        tournaments.append({
            "tournament_id": t, "file_id": t, "source_format": rnd.choice(["pgn", "trf"]), "name": name,
            "start_date": start, "end_date": end, "rate_class": rnd.choice([None, None, "standard", "rapid"]),
            "event_key": event_key(name), "first_day": start, "last_day": end,
        })  # fmt: skip
    for gid in range(1, rnd.randint(5, 50) + 1):
        white, black = rnd.choice([(1, 2), (2, 1), (1, 3)])
        mhash = rnd.choice([None, "h1", "h2", "h3"])
        rnd_no = rnd.choice([None, 1, 1, 2])
        t = rnd.randint(1, n_t)
        games.append({
            "game_id": gid, "tournament_id": t, "file_id": t, "game_index": rnd.randint(0, 5), "round": rnd_no,
            "round_label": str(rnd_no) if rnd_no else None,
            "game_date": rnd.choice([None, BASE, BASE + dt.timedelta(days=1), BASE + dt.timedelta(days=3)]),
            "date_precision": rnd.choice(["day", "year", None]), "white_id": white, "black_id": black,
            "result": (result := rnd.choice(["1-0", "0-1", "1/2-1/2", "*"])), "played": True, "movetext_hash": mhash,
            # a movetext's own marker, or none (a copy cut short, when it is its file's last game)
            "result_marker": rnd.choice([result, result, None]),
            "ply_count": rnd.choice([None, 12, 40, 41]) if mhash else None,
        })  # fmt: skip
    return tournaments, games


def _event_dated_store(seed: int) -> Rows:
    """A store shaped like one event from several sources: a first tournament played day by day
    (round r on day 2r), then copies of it that date every game by the event's start or end day,
    lose games, repeat one, change a result, a round label or the moves, or move to the next
    week (another event of the same name), among three players; long and short moves. What
    ``round_players+hash+event_date[+short]`` links is decided here far more often than in
    `_random_store`."""
    rnd = random.Random(seed)
    plies = {"h1": 50, "h2": 41, "h3": 30, "h4": 12, "h5": 24}  # a hash's length, as a reader gives it
    first = []
    for rnd_no in range(1, rnd.randint(2, 5) + 1):
        for white, black in rnd.sample([(1, 2), (2, 1), (1, 3), (3, 2)], rnd.randint(1, 3)):
            sub = rnd.choice([None, None, None, 1, 2])  # a knockout's games of one round: '2.1', '2.2'
            first.append({
                "round": rnd_no, "round_label": f"{rnd_no}.{sub}" if sub else str(rnd_no), "white_id": white,
                "black_id": black, "movetext_hash": (h := rnd.choice(list(plies))), "ply_count": plies[h],
                "result": rnd.choice(["1-0", "0-1", "1/2-1/2"]), "game_date": BASE + dt.timedelta(days=2 * rnd_no),
            })  # fmt: skip
    tournaments: list[dict] = []
    games: list[dict] = []
    for t in range(1, rnd.randint(2, 4) + 1):
        shift = 7 if t > 1 and rnd.random() < 0.15 else 0  # the next week's event of the same name
        dating = "day" if t == 1 else rnd.choice(["start", "start", "end", "day"])
        rows = []
        for g in first:
            if t > 1 and rnd.random() < 0.2:
                continue  # a source without this game
            g = dict(g)
            if t > 1 and rnd.random() < 0.15:
                change = rnd.choice(["result", "label", "moves", "round", "repeat"])
                if change == "result":
                    g["result"] = rnd.choice(["1-0", "0-1", "1/2-1/2", "*"])
                elif change == "label":
                    g["round_label"] = f"{g['round']}.1"
                elif change == "moves":
                    g["movetext_hash"], g["ply_count"] = None, None
                elif change == "round":
                    g["round"] = g["round_label"] = None
                else:
                    rows.append(dict(g))  # a game written twice
            day = {"start": BASE + dt.timedelta(days=2), "end": BASE + dt.timedelta(days=10)}.get(dating)
            g["game_date"] = (day or g["game_date"]) + dt.timedelta(days=shift)
            rows.append(g)
        if not rows:
            continue
        days = [g["game_date"] for g in rows]
        name = "Other" if t > 1 and rnd.random() < 0.1 else rnd.choice(["Candidates", "Candidates 2022"])
        tournaments.append({
            "tournament_id": t, "file_id": t, "source_format": "pgn", "name": name, "start_date": min(days),
            "end_date": max(days), "rate_class": rnd.choice([None, None, "standard"]), "event_key": event_key(name),
            "first_day": min(days), "last_day": max(days),
        })  # fmt: skip
        for i, g in enumerate(rows):
            games.append({
                **g, "game_id": len(games) + 1, "tournament_id": t, "file_id": t, "game_index": i,
                "date_precision": "day", "played": True, "result_marker": g["result"],
            })  # fmt: skip
    return tournaments, games


def _store(rows: Rows) -> duckdb.DuckDBPyConnection:
    """A store holding `rows`."""
    con = schema_connect()
    add_rows(con, tournaments=rows[0], games=rows[1])
    return con


# Seeds of one kind share a store, `_BATCH` at a time (a store's fixed cost, its schema and a
# re-link, is most of a small store's): seed number k of the batch gets ids k * _OFFSET + its own
# (games, tournaments, files) and players 10 * k + its own, so no row of one seed can link to a
# row of another (links are between rows of one (white, black) pair), and a row tells its seed.
_BATCH = 10
_OFFSET = 1000


def _shifted(rows: Rows, k: int) -> Rows:
    """`rows` with the ids of seed number k of a batch."""
    off = k * _OFFSET
    tournaments = [{**t, "tournament_id": t["tournament_id"] + off, "file_id": t["file_id"] + off} for t in rows[0]]
    games = [
        {**g, "game_id": g["game_id"] + off, "tournament_id": g["tournament_id"] + off, "file_id": g["file_id"] + off,
         "white_id": g["white_id"] + 10 * k, "black_id": g["black_id"] + 10 * k}
        for g in rows[1]
    ]  # fmt: skip
    assert all(g["game_id"] < _OFFSET for g in rows[1]) and all(t["tournament_id"] < _OFFSET for t in rows[0])
    return tournaments, games


_STORES = {"random": (_random_store, 40), "event_dated": (_event_dated_store, 60)}
_CASES = [(kind, seed) for kind, (_, n) in _STORES.items() for seed in range(n)]
_BATCHES = [(kind, first) for kind, (_, n) in _STORES.items() for first in range(0, n, _BATCH)]


def _events_by_definition(games: list) -> set[tuple[int, int]]:
    """The pairs of tournaments that are sources of one event by the evidence rule (dedup's module
    docstring), counted on every pair of rows: the (white, black, round) keys both hold; a key
    agrees when a row of each has the same final result or equal moves, and is decided when a
    row of each has a final result or they have equal moves. (`game_links.match_rule` checks dates and rates.)"""
    keys: dict[int, dict[tuple, list]] = {}
    for g in games:
        if g.round is not None:
            keys.setdefault(g.tournament_id, {}).setdefault((g.white_id, g.black_id, g.round), []).append(g)

    def moves(x, y) -> bool:
        return x.movetext_hash is not None and x.movetext_hash == y.movetext_hash

    events = set()
    for ta in keys:
        for tb in keys:
            if ta >= tb:
                continue
            common = keys[ta].keys() & keys[tb].keys()
            agree = decided = 0
            for k in common:
                pairs = [(x, y) for x in keys[ta][k] for y in keys[tb][k]]
                agree += any(moves(x, y) or x.result == y.result != "*" for x, y in pairs)
                decided += any(moves(x, y) or "*" not in (x.result, y.result) for x, y in pairs)
            smaller = min(len(keys[ta]), len(keys[tb]))
            if len(common) >= max(1, min(2, smaller)) and 2 * agree >= decided and 2 * len(common) >= smaller:
                events.add((ta, tb))
    return events


def _pairwise(con: duckdb.DuckDBPyConnection) -> tuple[int, list[tuple]]:
    """The links by definition: `game_links.match_rule` on every pair of a (white, black) bucket, clusters as
    connected rows, canonical row by `game_links.precedence`, a row's rule from the canonical row or else
    from the first row (in precedence order) that matches it."""
    rows = con.execute(
        "SELECT g.game_id, g.tournament_id, g.file_id, t.source_format, g.round, g.white_id, g.black_id,"
        " g.result, g.movetext_hash, g.ply_count, g.game_date, g.date_precision = 'day', g.round_label,"
        " g.game_index, (SELECT count(*) FROM games x WHERE x.tournament_id = g.tournament_id),"
        " t.name, t.start_date, t.rate_class,"
        # the file's last game with moves and no termination marker: cut short (`GameRow.cut`)
        " COALESCE(g.movetext_hash IS NOT NULL AND g.result_marker IS NULL"
        "          AND g.game_index = (SELECT max(x.game_index) FROM games x WHERE x.file_id = g.file_id), false),"
        # the tournament's distinct game dates (`GameRow.event_days`)
        " (SELECT count(DISTINCT x.game_date) FROM games x WHERE x.tournament_id = g.tournament_id)"
        " FROM games g JOIN tournaments t USING (tournament_id) ORDER BY g.game_id"
    ).fetchall()
    games = [game_links.GameRow(*r) for r in rows]
    spans = tournament_spans(con)
    events = _events_by_definition(games)
    rule_of: dict[tuple[int, int], str] = {}
    parent = {g.game_id: g.game_id for g in games}

    def find(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    def link(a: game_links.GameRow, b: game_links.GameRow, rule: str) -> None:
        rule_of[(a.game_id, b.game_id)] = rule_of[(b.game_id, a.game_id)] = rule
        ra, rb = find(a.game_id), find(b.game_id)
        parent[max(ra, rb)] = min(ra, rb)

    for a in games:
        for b in games:
            if a.game_id < b.game_id and (a.white_id, a.black_id) == (b.white_id, b.black_id):
                rule = game_links.match_rule(a, b, spans, events)
                if rule is not None:
                    link(a, b, rule)
    # the short games of two sources of one event some of whose long games link by the event's
    # day (dedup's docstring): each row the only one of its key in its tournament, facing the only
    # one in the other
    by_id = {g.game_id: g for g in games}
    dated = {
        (min(by_id[x].tournament_id, by_id[y].tournament_id), max(by_id[x].tournament_id, by_id[y].tournament_id))
        for (x, y), rule in rule_of.items()
        if rule == game_links.EVENT_DATE_RULE
    } & events

    def key(g: game_links.GameRow) -> tuple:
        return (
            g.tournament_id,
            g.white_id,
            g.black_id,
            g.round,
            game_links.label_key(g.round_label),
            g.movetext_hash,
            g.result,
        )

    rows_of = Counter(key(g) for g in games)
    for a in games:
        for b in games:
            pair = (min(a.tournament_id, b.tournament_id), max(a.tournament_id, b.tournament_id))
            if a.game_id >= b.game_id or (a.game_id, b.game_id) in rule_of or pair not in dated:
                continue
            short = max(a.ply_count or 0, b.ply_count or 0) < game_links.EVENT_DATE_PLIES
            if short and rows_of[key(a)] == rows_of[key(b)] == 1:
                if game_links.event_dated_short(a, b, spans):
                    link(a, b, game_links.EVENT_DATE_SHORT_RULE)
    clusters: dict[int, list] = {}
    for g in games:
        clusters.setdefault(find(g.game_id), []).append(g)
    out = []
    n = 0
    for members in clusters.values():
        if len(members) < 2:
            continue
        n += 1
        members.sort(key=game_links.precedence)
        canon = members[0]
        mover = None
        if canon.movetext_hash is None:
            mover = next((m for m in members[1:] if m.movetext_hash is not None), None)
        out.append((canon.game_id, canon.game_id, canon.file_id, "canonical", "result" if mover else "canonical"))
        for m in members[1:]:
            rule = rule_of.get((canon.game_id, m.game_id)) or next(
                rule_of[(o.game_id, m.game_id)] for o in members if (o.game_id, m.game_id) in rule_of
            )
            if "*" not in (m.result, canon.result) and m.result != canon.result:
                rule += ";result_differs"
            out.append((canon.game_id, m.game_id, m.file_id, rule, "moves" if m is mover else "duplicate"))
    return n, sorted(out)


@pytest.mark.parametrize(("kind", "first"), _BATCHES)
def test_relink_gives_the_pairwise_links(kind: str, first: int) -> None:
    """Seeds `first` .. `first + _BATCH - 1` in one store (`_shifted`); each seed's links are
    checked on their own, and named when they differ."""
    make, n = _STORES[kind]
    seeds = range(first, min(first + _BATCH, n))
    tournaments, games = [], []
    for k, seed in enumerate(seeds):
        t, g = _shifted(make(seed), k)
        tournaments += t
        games += g
    con = _store((tournaments, games))
    expected_clusters, expected = _pairwise(con)
    assert dedup.relink_all(con) == expected_clusters
    got = sorted(con.execute("SELECT * FROM game_sources").fetchall())
    for k, seed in enumerate(seeds):  # (canonical game, game, file, rule, role): its seed by the game
        mine = [r for r in got if r[1] // _OFFSET == k]
        assert mine == [r for r in expected if r[1] // _OFFSET == k], f"{kind} seed {seed}"
    assert got == expected


@pytest.mark.parametrize(("kind", "seed"), [(kind, seed) for kind, seed in _CASES if seed < 20])
def test_relinking_each_tournament_as_it_arrives_gives_the_full_relink(kind: str, seed: int) -> None:
    """The loader re-links only what a new file touches (`relink_tournaments` of its tournaments):
    whatever the order the tournaments arrive in, the links end as a full re-link gives them, so
    the tournaments related to a new one (one event, equal moves, linked before) are all found."""
    full = _store(_STORES[kind][0](seed))
    tournaments = full.sql("SELECT * FROM tournaments").pl()
    games = full.sql("SELECT * FROM games").pl()
    dedup.relink_all(full)
    expected = sorted(full.execute("SELECT * FROM game_sources").fetchall())
    con = schema_connect()
    con.register("_t", tournaments)
    con.register("_g", games)
    order = tournaments["tournament_id"].to_list()
    random.Random(seed).shuffle(order)
    for t in order:
        con.execute("INSERT INTO tournaments SELECT * FROM _t WHERE tournament_id = ?", [t])
        con.execute("INSERT INTO games SELECT * FROM _g WHERE tournament_id = ?", [t])
        dedup.relink_tournaments(con, {t})
    assert sorted(con.execute("SELECT * FROM game_sources").fetchall()) == expected


ONE_EVENT_TWO_EXPORTS = """[Event "Spring Cup"]
[Site "Oslo NOR"]
[Date "2023.04.01"]
[Round "1"]
[White "Carlsen, Magnus"]
[Black "Nepomniachtchi, Ian"]
[Result "1-0"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1-0

[Event "Spring Cup"]
[Site "Oslo NOR"]
[Date "2023.04.02"]
[Round "2"]
[White "Nepomniachtchi, Ian"]
[Black "Carlsen, Magnus"]
[Result "1/2-1/2"]

1. d4 d5 2. c4 e6 1/2-1/2

[Event "Spring Cup"]
[Site "Oslo"]
[Date "2023.04.01"]
[Round "1"]
[White "Carlsen,M"]
[Black "Nepomniachtchi,I"]
[Result "1-0"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1-0

[Event "Spring Cup"]
[Site "Oslo"]
[Date "2023.04.02"]
[Round "2"]
[White "Nepomniachtchi,I"]
[Black "Carlsen,M"]
[Result "*"]

1. d4 d5 2. c4 *
"""


def test_merges_inside_one_file_end_with_the_full_relink_links(tmp_path: Path) -> None:
    # two exports of one event in one file: 'Carlsen,M' merges into 'Carlsen, Magnus' inside the
    # file, so the loader links the file's games once, after the merge
    pgn = tmp_path / "cup.pgn"
    pgn.write_text(ONE_EVENT_TWO_EXPORTS, encoding="utf-8")
    db = tmp_path / "s.duckdb"
    assert ingest_paths([pgn], db).files[0].status == "loaded"
    con = duckdb.connect(str(db))
    merges = con.execute("SELECT decided_by FROM player_merges ORDER BY merge_id").fetchall()
    assert merges == [("rule:initials_context",), ("rule:initials_context",)]
    links = sorted(con.execute("SELECT * FROM game_sources").fetchall())
    assert [(r[3], r[4]) for r in links] == [
        ("canonical", "canonical"),
        ("round_players+hash", "duplicate"),
        ("canonical", "canonical"),
        ("round_players+broadcast", "duplicate"),
    ]
    assert con.execute("SELECT count(*) FROM canonical_games").fetchone()[0] == 2
    dedup.relink_all(con)
    assert sorted(con.execute("SELECT * FROM game_sources").fetchall()) == links
