"""Cross-source dedup decided on evidence, not on names (issue 13, item 3).

Two tournaments are sources of one event only when they hold games in common (same White, Black
and round), at least half of those agree, and they are most of the smaller side (dedup's module
docstring). A pairing that two events share by chance never removes a game; real duplicates (two
exports, a partial and a final TRF, a broadcast of the top boards and the official TRF, a
re-export with one corrected result) still link, whatever the order of ingestion.
"""

from __future__ import annotations

import random
from pathlib import Path

import chess
import duckdb
import pytest

from elopipe.identity import dedup
from elopipe.ingest.driver import ingest_paths

OTHER = {"1": "0", "0": "1", "=": "="}
PGN_RESULT = {"1": "1-0", "0": "0-1", "=": "1/2-1/2", "*": "*"}

Round = list[tuple[int, int, str]]  # (White, Black, White's result '1' / '0' / '='), players by number


def _name(p: int) -> str:
    return f"Player{p:03d}, Test"


def _trf(name: str, start: str, end: str, players: list[int], rounds: list[Round]) -> str:
    """A TRF16 file: `players` (numbers; FIDE ID 29000000 + number) in start-rank order, each
    paired in every round of `rounds`."""
    rank = {p: i for i, p in enumerate(players, 1)}
    cells = {p: "" for p in players}
    for pairings in rounds:
        for w, b, res in pairings:
            cells[w] += f"  {rank[b]:4d} w {res}"
            cells[b] += f"  {rank[w]:4d} b {OTHER[res]}"
    assert all(len(c) == 10 * len(rounds) for c in cells.values()), "every player plays every round"
    lines = [f"012 {name}", f"042 {start}", f"052 {end}", f"062 {len(players)}"]
    lines.append("122 90 minutes + 30 seconds per move")
    for p in players:
        lines.append(
            f"001 {rank[p]:4d} m    {_name(p):<33} {2000 + p:4d} IRL {29000000 + p:11d} 1980/01/01"
            f"  0.0 {rank[p]:4d}{cells[p]}"
        )
    return "\n".join(lines) + "\n"


def _moves(seed: int, plies: int) -> str:
    """A legal movetext of `plies` half-moves, different for each seed."""
    rnd, board, sans = random.Random(seed), chess.Board(), []
    for _ in range(plies):
        moves = sorted(board.legal_moves, key=lambda m: m.uci())
        if not moves:
            break
        move = rnd.choice(moves)
        sans.append(board.san(move))
        board.push(move)
    return " ".join(f"{i // 2 + 1}. {s}" if i % 2 == 0 else s for i, s in enumerate(sans))


def _pgn(event: str, dates: list[str], games: list[tuple[int, int, int, str, str]]) -> str:
    """A PGN file: games (round, White, Black, White's result or '*', movetext), played on
    `dates[round - 1]` ('YYYY.MM.DD')."""
    chunks = []
    for rnd, w, b, res, moves in games:
        result = PGN_RESULT[res]
        tags = [
            f'[Event "{event}"]', '[Site "Galway IRL"]', f'[Date "{dates[rnd - 1]}"]', f'[Round "{rnd}"]',
            f'[White "{_name(w)}"]', f'[Black "{_name(b)}"]', f'[Result "{result}"]',
            f'[WhiteFideId "{29000000 + w}"]', f'[BlackFideId "{29000000 + b}"]',
        ]  # fmt: skip
        chunks.append("\n".join(tags) + f"\n\n{moves} {result}\n")
    return "\n".join(chunks)


# A round robin of six: (White, Black, result) by round, players 1-6 relabelled per event.
SIX = [
    [(1, 2, "1"), (3, 4, "="), (5, 6, "0")],
    [(2, 3, "1"), (4, 5, "1"), (6, 1, "0")],
    [(1, 3, "="), (2, 5, "1"), (4, 6, "0")],
]
# A Swiss-like schedule of eight over four rounds.
EIGHT = [
    [(1, 5, "1"), (6, 2, "0"), (3, 7, "="), (8, 4, "0")],
    [(2, 1, "="), (4, 3, "1"), (5, 6, "1"), (7, 8, "0")],
    [(1, 4, "1"), (3, 2, "0"), (8, 5, "="), (6, 7, "1")],
    [(2, 4, "0"), (5, 3, "1"), (1, 6, "="), (7, 8, "1")],
]


def _relabel(schedule: list[Round], players: dict[int, int]) -> list[Round]:
    return [[(players[w], players[b], res) for w, b, res in pairings] for pairings in schedule]


def _ingest_each_order(tmp_path: Path, files: dict[str, str], sql: str) -> list[list[tuple]]:
    """`sql`'s rows on stores that ingested `files` (name -> text) one by one in every order of
    two (first to last, last to first) and all in one call."""
    paths = []
    for name, text in files.items():
        paths.append(tmp_path / name)
        paths[-1].parent.mkdir(parents=True, exist_ok=True)
        paths[-1].write_text(text, encoding="utf-8")
    out = []
    for i, run in enumerate(([[p] for p in paths], [[p] for p in paths[::-1]], [paths])):
        db = tmp_path / f"store{i}.duckdb"
        for batch in run:
            assert {f.status for f in ingest_paths(batch, db).files} == {"loaded"}
        con = duckdb.connect(str(db))
        rows = con.execute(sql).fetchall()
        # the batch re-link the loader will call, and a full rebuild: the same links
        before = sorted(con.execute("SELECT * FROM game_sources").fetchall())
        tids = {r[0] for r in con.execute("SELECT tournament_id FROM tournaments").fetchall()}
        dedup.relink_tournaments(con, tids)
        assert sorted(con.execute("SELECT * FROM game_sources").fetchall()) == before
        dedup.relink_all(con)
        assert sorted(con.execute("SELECT * FROM game_sources").fetchall()) == before
        con.close()
        out.append(rows)
    return out


COUNTS = (
    "SELECT (SELECT count(*) FROM canonical_games), (SELECT count(*) FROM game_sources),"
    " (SELECT count(*) FROM game_sources WHERE role = 'duplicate')"
)


# ---- a pairing two events share by chance removes no game ------------------------------------


def test_two_weekend_opens_sharing_one_pairing_keep_both_games(tmp_path: Path) -> None:
    """'Weekend Open 2025' twice (one event key), overlapping dates, other players but for two
    who meet in round 1 of both with the same colours and result: 18 games, no link."""
    a = _trf("Weekend Open 2025", "2025/03/01", "2025/03/02", [1, 2, 3, 4, 5, 6], SIX)
    b_players = {1: 1, 2: 2, 3: 13, 4: 14, 5: 15, 6: 16}
    b = _trf("Weekend Open 2025", "2025/03/02", "2025/03/03", list(b_players.values()), _relabel(SIX, b_players))
    got = _ingest_each_order(tmp_path, {"open_a.trf": a, "open_b.trf": b}, COUNTS)
    assert got == [[(18, 0, 0)]] * 3


def test_two_championships_a_day_apart_sharing_a_round_two_pairing_keep_both_games(tmp_path: Path) -> None:
    """'Selvenven Championship 2025' (1-8 January) and 'Linnikvik Championship 2025' (9-14
    January, within the date slack): other players, but round 2 of each pairs the same two
    players with the same colours and result. Both games count."""
    sel_players = {i: i for i in range(1, 7)}
    lin_players = {1: 21, 2: 2, 3: 3, 4: 24, 5: 25, 6: 26}  # 2 v 3 in round 2 of both
    sel = _trf("Selvenven Championship 2025", "2025/01/01", "2025/01/08", [1, 2, 3, 4, 5, 6], SIX)
    lin = _trf(
        "Linnikvik Championship 2025",
        "2025/01/09",
        "2025/01/14",
        list(lin_players.values()),
        _relabel(SIX, lin_players),
    )
    assert _relabel(SIX, sel_players)[1][0] == (2, 3, "1") == _relabel(SIX, lin_players)[1][0]
    got = _ingest_each_order(tmp_path, {"selvenven.trf": sel, "linnikvik.trf": lin}, COUNTS)
    assert got == [[(18, 0, 0)]] * 3


# ---- real duplicates still link ------------------------------------------------------------


def test_a_partial_trf_and_the_final_trf_are_one_event(tmp_path: Path) -> None:
    """The TRF after round 2 and the final TRF, at two paths: 16 games, every one from the final
    file (the fuller source), the 8 games of the partial file its duplicates."""
    players = list(range(1, 9))
    partial = _trf("Galway Spring Open 2025", "2025/04/05", "2025/04/06", players, EIGHT[:2])
    final = _trf("Galway Spring Open 2025", "2025/04/05", "2025/04/07", players, EIGHT)
    sql = (
        "SELECT f.path LIKE '%final.trf', count(*) FROM canonical_games c JOIN source_files f USING (file_id)"
        " GROUP BY 1 ORDER BY 1"
    )
    assert _ingest_each_order(tmp_path, {"r2/partial.trf": partial, "final.trf": final}, sql) == [[(True, 16)]] * 3
    assert (
        _ingest_each_order(tmp_path / "counts", {"partial.trf": partial, "final.trf": final}, COUNTS)
        == [[(16, 16, 8)]] * 3
    )


def test_a_re_export_with_one_corrected_result_is_one_event(tmp_path: Path) -> None:
    """The same TRF exported again elsewhere with one result corrected: one event, 16 games,
    the correction recorded as result_differs, and one canonical result whatever the order."""
    players = list(range(1, 9))
    corrected = [list(r) for r in EIGHT]
    corrected[2][1] = (3, 2, "1")  # was '0'
    first = _trf("Galway Spring Open 2025", "2025/04/05", "2025/04/07", players, EIGHT)
    second = _trf("Galway Spring Open 2025", "2025/04/05", "2025/04/07", players, corrected)
    sql = (
        "SELECT (SELECT count(*) FROM canonical_games), (SELECT list(match_rule) FROM game_sources"
        " WHERE match_rule LIKE '%result_differs'), (SELECT result FROM canonical_games g JOIN players w"
        " ON w.player_id = g.white_id WHERE g.round = 3 AND w.fide_id = 29000003)"
    )
    got = _ingest_each_order(tmp_path, {"a/open.trf": first, "b/open.trf": second}, sql)
    # the two rows are equal but for the result: the result settles the precedence ('0-1' first)
    assert got == [[(16, ["round_players;result_differs"], "0-1")]] * 3


def test_a_broadcast_of_the_top_boards_and_the_official_trf_are_one_event(tmp_path: Path) -> None:
    """A live PGN of boards 1-2 under another name (one game still in progress) and the official
    TRF: 16 games, the TRF's results, the PGN's moves."""
    trf = _trf("Galway Spring Open 2025", "2025/04/05", "2025/04/07", list(range(1, 9)), EIGHT)
    live = [
        (rnd, w, b, "*" if (rnd, board) == (4, 1) else res, _moves(10 * rnd + board, 30 + rnd))
        for rnd, pairings in enumerate(EIGHT, 1)
        for board, (w, b, res) in enumerate(pairings[:2], 1)
    ]
    pgn = _pgn("GSO25 live boards", ["2025.04.05", "2025.04.05", "2025.04.06", "2025.04.07"], live)
    sql = (
        "SELECT (SELECT count(*) FROM canonical_games), (SELECT list(DISTINCT t.source_format) FROM canonical_games"
        " JOIN tournaments t USING (tournament_id)), (SELECT list(role ORDER BY role) FROM game_sources)"
    )
    got = _ingest_each_order(tmp_path, {"live.pgn": pgn, "official.trf": trf}, sql)
    assert got == [[(16, ["trf"], ["moves"] * 8 + ["result"] * 8)]] * 3


# ---- equal moves are evidence on their own; short ones are not ------------------------------


@pytest.mark.parametrize(("plies", "linked"), [(40, True), (12, False)])
def test_equal_moves_link_two_events_unless_the_game_is_short(tmp_path: Path, plies: int, linked: bool) -> None:
    """Two PGN events of the same days, other games, one game with the same players, round and
    moves: 40 identical plies are one game (round_players+hash); 12 (a quick draw the two can
    repeat) need the event evidence, which one shared game out of four is not."""
    same = _moves(99, plies)
    a = [
        (1, 1, 2, "=", same),
        (1, 3, 4, "1", _moves(1, 40)),
        (2, 2, 3, "0", _moves(2, 40)),
        (2, 4, 1, "1", _moves(3, 40)),
    ]
    b = [
        (1, 1, 2, "=", same),
        (1, 5, 6, "1", _moves(4, 40)),
        (2, 2, 5, "0", _moves(5, 40)),
        (2, 6, 1, "1", _moves(6, 40)),
    ]
    days = ["2025.05.10", "2025.05.11"]
    files = {"autumn.pgn": _pgn("Autumn Open 2025", days, a), "harvest.pgn": _pgn("Harvest Cup 2025", days, b)}
    sql = (
        "SELECT (SELECT count(*) FROM canonical_games), (SELECT list(match_rule ORDER BY match_rule) FROM game_sources)"
    )
    expected = (7, ["canonical", "round_players+hash"]) if linked else (8, None)
    assert _ingest_each_order(tmp_path, files, sql) == [[expected]] * 3


def test_the_other_sources_of_a_deleted_file_link_again_when_their_links_were_taken_first(tmp_path: Path) -> None:
    """The official TRF and two PGN exports of its top boards: one cluster per game, the TRF
    canonical. Deleting the TRF's rows (a loader replacing it) drops the clusters' links, the
    two exports' too; `linked_tournaments`, taken before, names what to re-link."""
    from elopipe.ingest.loader import delete_file_rows

    trf = _trf("Galway Spring Open 2025", "2025/04/05", "2025/04/07", list(range(1, 9)), EIGHT)
    top = [
        (rnd, w, b, res, _moves(10 * rnd + board, 40))
        for rnd, pairings in enumerate(EIGHT, 1)
        for board, (w, b, res) in enumerate(pairings[:2], 1)
    ]
    days = ["2025.04.05", "2025.04.05", "2025.04.06", "2025.04.07"]
    paths = [tmp_path / "official.trf", tmp_path / "boards.pgn", tmp_path / "twic.pgn"]
    for path, text in zip(paths, (trf, _pgn("GSO live", days, top), _pgn("Galway Open 2025", days, top)), strict=True):
        path.write_text(text, encoding="utf-8")
    db = tmp_path / "s.duckdb"
    ingest_paths(paths, db)
    con = duckdb.connect(str(db))
    canonical = "SELECT count(*) FROM canonical_games"
    assert con.execute(canonical).fetchone()[0] == 16
    file_id, tid = con.execute("SELECT file_id, tournament_id FROM tournaments WHERE source_format = 'trf'").fetchone()
    keep = dedup.linked_tournaments(con, {tid}) - {tid}
    assert len(keep) == 2
    delete_file_rows(con, file_id)
    assert con.execute(canonical).fetchone()[0] == 8 + 8  # the two exports, no longer linked
    dedup.relink_tournaments(con, keep)
    assert con.execute(canonical).fetchone()[0] == 8
    assert con.execute("SELECT DISTINCT match_rule FROM game_sources WHERE role = 'duplicate'").fetchall() == [
        ("round_players+hash",)
    ]


def test_a_two_game_event_sharing_one_pairing_with_an_open_keeps_both_games(tmp_path: Path) -> None:
    """One shared pairing is half of a two-game event's games, but one game is no evidence: two
    events, 9 + 2 games."""
    open_six = _trf("Open 2025", "2025/03/08", "2025/03/09", [1, 2, 3, 4, 5, 6], SIX)
    # a two-player match of two games, its first game the same pairing as the open's round 1
    match = _trf("Open 2025", "2025/03/08", "2025/03/09", [1, 2], [[(1, 2, "1")], [(2, 1, "=")]])
    got = _ingest_each_order(tmp_path, {"a/open.trf": open_six, "b/match.trf": match}, COUNTS)
    assert got[0] == got[1] == got[2] == [(11, 0, 0)]
