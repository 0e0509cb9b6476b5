"""Cross-source game deduplication (issue 7): one canonical game per game, every source kept."""

from __future__ import annotations

import datetime as dt
import hashlib
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from elopipe.identity import dedup
from elopipe.ingest.driver import ingest_paths
from elopipe.ingest.loader import load_parsed_source
from elopipe.read.parse import ParsedSource
from elopipe.read.records import GameRec, ParsedFile, PlayerRec, TournamentRec
from elopipe.read.sources import Source
from tests.helpers.paths import REPO
from tests.helpers.schema_store import schema_connect

DATA = REPO.parent / "shared" / "data"
CAND_TWIC = DATA / "pgn" / "wchcand22.pgn"
CAND_OTHER = DATA / "pgn" / "fide_candidates_2022_madrid_spain.pgn"
SAN_VIATOR = DATA / "trf" / "esp_torneo_san_viator_2018_vega_137players.trf"

needs_data = pytest.mark.skipif(not CAND_TWIC.exists(), reason="shared data not present")


def _ro(db: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(db), read_only=True)


def _canonical(con) -> list[tuple]:
    """Canonical games as (round, white, black, result), players by FIDE ID else name key."""
    return sorted(
        con.execute(
            """
            SELECT g.round, COALESCE(w.fide_id::VARCHAR, w.name_key), COALESCE(b.fide_id::VARCHAR, b.name_key),
                   g.result
            FROM canonical_games g JOIN players w ON w.player_id = g.white_id JOIN players b ON b.player_id = g.black_id
            """
        ).fetchall()
    )


@needs_data
@pytest.mark.parametrize("order", ["twic_first", "other_first"])
def test_candidates_2022_pair_counts_each_game_once(tmp_path: Path, order: str) -> None:
    files = [CAND_TWIC, CAND_OTHER] if order == "twic_first" else [CAND_OTHER, CAND_TWIC]
    db = tmp_path / "s.duckdb"
    ingest_paths(files, db)
    ingest_paths(files, db)  # the same bytes again: nothing new
    con = _ro(db)
    assert con.execute("SELECT count(*) FROM games").fetchone()[0] == 76
    assert con.execute("SELECT count(*) FROM canonical_games").fetchone()[0] == 56
    assert con.execute("SELECT count(*) FROM players WHERE merged_into IS NULL").fetchone()[0] == 8
    clusters = con.execute("SELECT game_id, count(*) FROM game_sources GROUP BY 1 HAVING count(*) = 2").fetchall()
    assert len(clusters) == 20
    # the TWIC rows (with FideIds and the longer headers) are the canonical ones: same moves
    canon_files = con.execute(
        "SELECT DISTINCT f.path FROM game_sources s JOIN games g ON g.game_id = s.game_id"
        " JOIN source_files f ON f.file_id = g.file_id WHERE s.role = 'canonical'"
    ).fetchall()
    assert len(canon_files) == 1
    con.close()


def _pgn_of_trf_games(con, out: Path, event: str, abbreviate: bool) -> int:
    """Write a PGN of the played games of the store's only TRF (another source of the event)."""
    rows = con.execute(
        """
        SELECT g.round, g.game_date, w.name, w.fide_id, b.name, b.fide_id, g.result, t.start_date
        FROM games g JOIN tournaments t USING (tournament_id)
        JOIN players w ON w.player_id = g.white_id JOIN players b ON b.player_id = g.black_id
        WHERE g.played AND g.result IN ('1-0', '0-1', '1/2-1/2') ORDER BY g.round, g.game_id
        """
    ).fetchall()
    chunks = []
    for i, (rnd, gdate, wn, wf, bn, bf, res, start) in enumerate(rows):
        day = (gdate or start).strftime("%Y.%m.%d")
        tags = [f'[Event "{event}"]', f'[Date "{day}"]', f'[Round "{rnd}.{i % 40 + 1}"]']
        for side, name, fid in (("White", wn, wf), ("Black", bn, bf)):
            if abbreviate and i % 2 and "," in name:  # broadcast style: 'Last,F' and no FIDE ID
                last, first = name.split(",", 1)
                tags.append(f'[{side} "{last.strip()},{first.strip()[:1]}"]')
            else:
                tags.append(f'[{side} "{name}"]')
                if fid:
                    tags.append(f'[{side}FideId "{fid}"]')
        tags.append(f'[Result "{res}"]')
        chunks.append("\n".join(tags) + f"\n\n1. e4 e5 2. Nf3 Nc6 {res}\n")
    out.write_text("\n".join(chunks), encoding="utf-8")
    return len(rows)


@needs_data
@pytest.mark.parametrize("pgn_first", [False, True])
def test_trf_alone_and_trf_plus_pgn_give_the_same_canonical_games(tmp_path: Path, pgn_first: bool) -> None:
    alone = tmp_path / "alone.duckdb"
    ingest_paths([SAN_VIATOR], alone)
    con = _ro(alone)
    expected = _canonical(con)
    pgn = tmp_path / "san_viator_broadcast.pgn"
    n_pgn = _pgn_of_trf_games(con, pgn, "Memorial Pepe Domaica B 2018", abbreviate=True)
    con.close()
    assert n_pgn > 300
    both = tmp_path / "both.duckdb"
    ingest_paths([pgn, SAN_VIATOR] if pgn_first else [SAN_VIATOR, pgn], both)
    con = _ro(both)
    assert _canonical(con) == expected
    roles = dict(con.execute("SELECT role, count(*) FROM game_sources GROUP BY 1").fetchall())
    assert roles == {"result": n_pgn, "moves": n_pgn}  # TRF rows keep the result, PGN rows give moves
    formats = con.execute(
        "SELECT DISTINCT t.source_format FROM canonical_games g JOIN tournaments t USING (tournament_id)"
    ).fetchall()
    assert formats == [("trf",)]
    con.close()


def _store() -> duckdb.DuckDBPyConnection:
    con = schema_connect()
    return con


def _load(con, parsed: ParsedFile, path: str) -> None:
    sha = hashlib.sha256(repr(parsed).encode()).hexdigest()
    res = load_parsed_source(con, ParsedSource(Source(path), sha, 1, parsed.format, "utf-8", "LF", parsed))
    assert res.status == "loaded", res.reason


def _broadcast(result: str, moves: str, plies: int, fmt: str = "pgn") -> ParsedFile:
    score = {"1-0": (1, 0), "0-1": (0, 1), "1/2-1/2": (0.5, 0.5)}.get(result)
    return ParsedFile(
        fmt,
        tournaments=[TournamentRec(1, name="Live Open 2025", start_date=dt.date(2025, 3, 1), end_date=dt.date(2025, 3, 3))],  # noqa: E501
        players=[PlayerRec(1, 1, "Alpha, Ann", fide_id=501), PlayerRec(2, 1, "Beta, Bob", fide_id=502)],
        games=[
            GameRec(
                1, 1, 2, result, round=2,
                movetext_hash=None if fmt == "trf" else hashlib.sha1(moves.encode()).hexdigest(),
                ply_count=None if fmt == "trf" else plies,
                white_score=None if score is None else Decimal(str(score[0])),
                black_score=None if score is None else Decimal(str(score[1])),
            )
        ],
    )  # fmt: skip


@pytest.mark.parametrize("final_first", [False, True])
def test_broadcast_star_game_is_replaced_by_the_final_result(final_first: bool) -> None:
    con = _store()
    live = _broadcast("*", "e4 e5 Nf3", 3)
    final = _broadcast("1-0", "e4 e5 Nf3 Nc6 Bb5 a6 Ba4", 7)
    for i, parsed in enumerate([final, live] if final_first else [live, final]):
        _load(con, parsed, f"/v/live{i}.pgn")
    assert con.execute("SELECT result, ply_count FROM canonical_games").fetchall() == [("1-0", 7)]
    rules = con.execute("SELECT match_rule FROM game_sources WHERE role = 'duplicate'").fetchall()
    assert rules == [("round_players+broadcast",)]


def test_different_moves_with_final_results_are_different_games() -> None:
    con = _store()
    _load(con, _broadcast("1-0", "e4 e5 Qh5 Nc6 Bc4 Nf6 Qxf7", 7), "/v/a.pgn")
    _load(con, _broadcast("0-1", "d4 d5 c4", 40), "/v/b.pgn")  # e.g. an armageddon game, same round
    assert con.execute("SELECT count(*) FROM canonical_games").fetchone()[0] == 2


def test_trf_result_takes_precedence_and_a_disagreement_is_recorded() -> None:
    con = _store()
    pgn = _broadcast("0-1", "e4 e5", 2)  # the PGN got the result wrong
    trf = _broadcast("1-0", "", 0, fmt="trf")
    # a second game both sources agree on: the evidence that they are one event (one shared
    # game with two results is none, whatever the names: see test_dedup_evidence)
    for parsed in (pgn, trf):
        parsed.games.append(
            GameRec(1, 2, 1, "1/2-1/2", round=1, white_score=Decimal("0.5"), black_score=Decimal("0.5"))
        )
    _load(con, pgn, "/v/a.pgn")
    _load(con, trf, "/v/a.trf")
    assert con.execute("SELECT round, result FROM canonical_games ORDER BY round").fetchall() == [
        (1, "1/2-1/2"),
        (2, "1-0"),
    ]
    row = con.execute(
        "SELECT s.role, s.match_rule FROM game_sources s JOIN games g ON g.game_id = s.source_game_id"
        " WHERE s.role <> 'result' AND g.round = 2"
    ).fetchall()
    assert row == [("moves", "round_players;result_differs")]


def test_relink_all_is_idempotent() -> None:
    con = _store()
    _load(con, _broadcast("*", "e4", 1), "/v/a.pgn")
    _load(con, _broadcast("1-0", "e4 e5 Nf3", 3), "/v/b.pgn")
    before = con.execute("SELECT * FROM game_sources ORDER BY ALL").fetchall()
    assert dedup.relink_all(con) == 1
    assert con.execute("SELECT * FROM game_sources ORDER BY ALL").fetchall() == before


@needs_data
def test_fide_lists_identical_for_trf_alone_and_trf_plus_pgn(tmp_path: Path) -> None:
    from elopipe.rating.run import rate

    alone, both, pgn = tmp_path / "alone.duckdb", tmp_path / "both.duckdb", tmp_path / "bc.pgn"
    ingest_paths([SAN_VIATOR], alone)
    con = duckdb.connect(str(alone))
    _pgn_of_trf_games(con, pgn, "Memorial Pepe Domaica B 2018", abbreviate=True)
    con.close()
    ingest_paths([pgn, SAN_VIATOR], both)
    lists = []
    for db in (alone, both):
        con = duckdb.connect(str(db))
        rate(con, "fide")
        lists.append(
            con.execute(
                "SELECT r.list_date, p.fide_id, r.rating, r.games, r.k, r.change FROM rating_lists r"
                " JOIN players p USING (player_id) WHERE r.system = 'fide' ORDER BY ALL"
            ).fetchall()
        )
        con.close()
    assert len(lists[0]) > 100
    assert lists[0] == lists[1]


def _partition(db: Path) -> tuple[dict, set]:
    """Counts, and the people as sets of (file, spelling, tournament) they were written as."""
    con = _ro(db)
    counts = {
        "players": con.execute("SELECT count(*) FROM players WHERE merged_into IS NULL").fetchone()[0],
        "games": con.execute("SELECT count(*) FROM games").fetchone()[0],
        "canonical": con.execute("SELECT count(*) FROM canonical_games").fetchone()[0],
    }
    people: dict[int, set] = {}
    for pid, f, name, t in con.execute(
        "SELECT a.player_id, regexp_replace(f.path, '.*/', ''), a.name_as_written, t.name FROM player_aliases a"
        " JOIN source_files f USING (file_id) JOIN tournaments t USING (tournament_id)"
    ).fetchall():
        people.setdefault(pid, set()).add((f, name, t))
    con.close()
    return counts, {frozenset(v) for v in people.values()}


@needs_data
def test_ingesting_twice_in_either_order_gives_one_player_per_person_and_one_game_per_game(tmp_path: Path) -> None:
    files = [
        CAND_TWIC,
        CAND_OTHER,
        DATA / "pgn" / "norway_chess_2022_classical.pgn",
        DATA / "pgn" / "norway_chess_2022_armageddon.pgn",
        DATA / "pgn" / "airthings_masters_prelim_2022.pgn",
        DATA / "trf" / "irl_bunratty_masters_2011_crlf.trf",
        DATA / "trf" / "irl_gonzaga_classic_2008_fide_ids.trf",
        SAN_VIATOR,
    ]
    results = []
    for name, order in (("fwd", files), ("rev", files[::-1])):
        db = tmp_path / f"{name}.duckdb"
        ingest_paths(order, db)
        ingest_paths(order, db)
        results.append(_partition(db))
    (c1, p1), (c2, p2) = results
    assert c1 == c2
    assert p1 == p2
    assert c1["canonical"] == c1["games"] - 20  # the 20 candidates games present twice
    # every person with a FIDE ID is one player
    con = _ro(tmp_path / "fwd.duckdb")
    assert (
        con.execute(
            "SELECT count(*) FROM (SELECT fide_id FROM players WHERE merged_into IS NULL AND fide_id IS NOT NULL"
            " GROUP BY 1 HAVING count(*) > 1)"
        ).fetchone()[0]
        == 0
    )
    # the classical Norway file has no FideIds: its players are the armageddon file's (same event)
    assert (
        con.execute(
            "SELECT count(*) FROM tournament_players tp JOIN players p USING (player_id) JOIN source_files f"
            " ON f.file_id = tp.file_id WHERE f.path LIKE '%norway_chess_2022_classical%' AND p.fide_id IS NULL"
        ).fetchone()[0]
        == 0
    )
    con.close()


_RUY = (
    "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Nb8 "
    "10. d4 Nbd7 11. c4 c6 12. cxb5 axb5 13. Nc3 Bb7 "
)


def _copy(round_tag: str, moves: str = _RUY) -> str:
    return (
        f'[Event "Club Ch 2023"]\n[Site "Dublin IRL"]\n[Date "2023.05.01"]\n{round_tag}[White "Alpha, Anton"]\n'
        f'[Black "Beta, Bernd"]\n[Result "1-0"]\n\n{moves}1-0\n\n'
    )


@pytest.mark.parametrize("round_tag", ['[Round "-"]\n', '[Round ""]\n', ""])
def test_a_game_twice_in_one_file_one_copy_without_its_round_counts_once(tmp_path: Path, round_tag: str) -> None:
    """The same 26 plies twice in one file, one copy with its round and one without: one game (a
    hostile tester: counted twice, where two files with the same copies counted once). Two short
    equal games of one pair in a file stay two (a quick draw can be repeated)."""
    f = tmp_path / "one.pgn"
    f.write_text(_copy('[Round "1"]\n') + _copy(round_tag), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    ingest_paths([f], db)
    con = _ro(db)
    assert con.execute("SELECT count(*) FROM games").fetchone()[0] == 2
    assert con.execute("SELECT count(*) FROM canonical_games").fetchone()[0] == 1
    short = tmp_path / "short.pgn"
    quick = "1. e4 e5 2. Nf3 "
    short.write_text(_copy('[Round "1"]\n', quick) + _copy(round_tag, quick), encoding="utf-8")
    db2 = tmp_path / "s2.duckdb"
    ingest_paths([short], db2)
    assert _ro(db2).execute("SELECT count(*) FROM canonical_games").fetchone()[0] == 2


@needs_data
@pytest.mark.parametrize("order", ["full_first", "cut_first"])
def test_a_copy_cut_short_in_its_last_game_counts_each_game_once(tmp_path: Path, order: str) -> None:
    """The first 5,000 bytes of the Candidates 2022 file (a copy that stopped, taken by `watch`
    after --incomplete-wait): its last game holds 86 of its plies and no termination marker. It
    is the same game as the full file's (a fresh user: counted twice, on two lists)."""
    cut = tmp_path / "cut.pgn"
    cut.write_bytes(CAND_TWIC.read_bytes()[:5000])
    db = tmp_path / "s.duckdb"
    for f in [CAND_TWIC, cut] if order == "full_first" else [cut, CAND_TWIC]:
        ingest_paths([f], db)
    con = _ro(db)
    assert con.execute("SELECT count(*) FROM games").fetchone()[0] == 61
    assert con.execute("SELECT count(*) FROM canonical_games").fetchone()[0] == 56
    dup = "SELECT match_rule, count(*) FROM game_sources WHERE role = 'duplicate' GROUP BY 1"
    rules = dict(con.execute(dup).fetchall())
    assert rules == {"round_players+hash": 4, "round_players+broadcast": 1}


def _ko(round_label: str, white: str, black: str, moves: str, result: str, day: str) -> str:
    return (
        f'[Event "Linnikvik Cup 2023"]\n[Site "Linnikvik"]\n[Date "2023.05.{day}"]\n[Round "{round_label}"]\n'
        f'[White "{white}"]\n[Black "{black}"]\n[Result "{result}"]\n\n{moves}{result}\n\n'
    )


def test_a_knockout_round_repeating_one_draw_with_the_same_colours_keeps_both_games(tmp_path: Path) -> None:
    """A knockout's round 3: game 3.1 and the first tiebreak 3.3, Alpha White in both, the same
    26-ply draw, two games (`same_file_hash` took them for one written twice: same main round and
    moves); the same game written twice under one label is still one."""
    a, b = "Alpha, Anton", "Beta, Bernd"
    games = [
        _ko("3.1", a, b, _RUY, "1/2-1/2", "01"),
        _ko("3.2", b, a, _RUY, "1/2-1/2", "02"),
        _ko("3.3", a, b, _RUY, "1/2-1/2", "03"),
        _ko("3.4", b, a, "1. d4 d5 2. c4 e6 ", "0-1", "03"),
    ]
    f = tmp_path / "cup.pgn"
    f.write_text("".join(games), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    ingest_paths([f], db)
    assert _ro(db).execute("SELECT count(*) FROM canonical_games").fetchone()[0] == 4
    twice = tmp_path / "twice.pgn"
    twice.write_text("".join(games) + games[2], encoding="utf-8")
    db2 = tmp_path / "s2.duckdb"
    ingest_paths([twice], db2)
    con = _ro(db2)
    assert con.execute("SELECT count(*) FROM canonical_games").fetchone()[0] == 4
    assert con.execute("SELECT match_rule FROM game_sources WHERE role = 'duplicate'").fetchall() == [
        ("same_file_hash",)
    ]
