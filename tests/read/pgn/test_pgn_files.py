"""Every real PGN file of shared/data/pgn is read without a crash, with independent counts.

Game counts are checked against python-chess's own scan (`chess.pgn.read_headers` until None,
which counts like `read_game` but skips the movetext) and against the counts documented in
shared/data/pgn/SOURCES.md.
"""

from __future__ import annotations

import datetime as dt
import io
import re
from collections import Counter
from pathlib import Path
from typing import Any

import chess.pgn
import pytest

from elopipe.read.pgn.reader import looks_like_pgn, read_pgn
from elopipe.read.records import ParsedFile
from elopipe.read.textio import decode_bytes
from tests.helpers.paths import REPO

DATA = REPO.parent / "shared" / "data" / "pgn"
FILES = sorted(p for p in DATA.iterdir() if p.suffix.lower() == ".pgn") if DATA.is_dir() else []
pytestmark = pytest.mark.skipif(not FILES, reason="shared/data/pgn not present")

_CACHE: dict[tuple[str, bool], tuple[str, ParsedFile]] = {}


def load(name: str, validate: bool = False) -> tuple[str, ParsedFile]:
    key = (name, validate)
    if key not in _CACHE:
        text = decode_bytes((DATA / name).read_bytes()).text
        _CACHE[key] = (text, read_pgn(text, validate_moves=validate, source_name=name))
    return _CACHE[key]


def documented_counts() -> dict[str, int]:
    """The `games` column of the table in SOURCES.md."""
    out = {}
    for line in (DATA / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 5 and cells[1].lower().endswith(".pgn") and cells[4].replace(",", "").isdigit():
            out[cells[1]] = int(cells[4].replace(",", ""))
    return out


def python_chess_count(text: str) -> int:
    handle = io.StringIO(text)
    n = 0
    while chess.pgn.read_headers(handle) is not None:
        n += 1
    return n


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_real_file_reads_with_python_chess_game_count(path: Path) -> None:
    text, pf = load(path.name)
    assert pf.rejected_reason is None
    assert looks_like_pgn(text)
    assert len(pf.games) == python_chess_count(text) == documented_counts()[path.name]
    assert [g.game_index for g in pf.games] == list(range(len(pf.games)))
    lines = [g.line for g in pf.games]
    assert lines == sorted(lines) and len(set(lines)) == len(lines)
    n_lines = text.count("\n") + 1
    assert all(1 <= i.line <= n_lines for i in pf.issues if i.line is not None)
    refs = {p.ref for p in pf.players}
    assert all(r in refs for g in pf.games for r in (g.white_ref, g.black_ref) if r is not None)
    assert pf.n_errors == 0


def test_line_numbers_point_at_the_event_tag() -> None:
    text, pf = load("Carlsen.pgn")
    lines = text.split("\n")
    assert all(lines[g.line - 1].startswith("[Event ") for g in pf.games)


def test_total_matches_sources() -> None:
    total = sum(len(load(p.name)[1].games) for p in FILES)
    m = re.search(r"Total: \d+ files, ([\d,]+) games", (DATA / "SOURCES.md").read_text(encoding="utf-8"))
    assert m is not None and total == int(m.group(1).replace(",", ""))


def test_olym22_forfeits_fide_ids_rounds() -> None:
    _, pf = load("olym22.pgn")
    doc = re.search(r"(\d+) games have a decisive Result and \*\*no moves\*\*", (DATA / "SOURCES.md").read_text())
    assert doc is not None
    forfeits = [g for g in pf.games if g.unplayed_code == "forfeit"]
    assert len(forfeits) == int(doc.group(1))
    assert all(not g.played and g.ply_count == 0 and g.result in ("1-0", "0-1") for g in forfeits)
    assert len(pf.tournaments) == 1
    assert all(p.fide_id is not None for p in pf.players)
    g = pf.games[0]
    assert (g.round, g.board, g.round_label) == (1, 1, "1.1")
    assert g.headers["WhiteTeam"] == pf.players[g.white_ref].team == "India"
    unrated = sum(1 for g in pf.games if not (g.headers.get("WhiteElo") or "").strip().isdigit())
    assert sum(1 for g in pf.games if g.white_rating is None) == unrated


def test_candidates_2022_pair_share_movetext_hashes() -> None:
    _, small = load("fide_candidates_2022_madrid_spain.pgn")
    _, full = load("wchcand22.pgn")
    shared = {g.movetext_hash for g in small.games} & {g.movetext_hash for g in full.games}
    assert len(shared) == len(small.games) == 20
    assert None not in shared
    # different headers for the same game: "Duda,J" vs "Duda, Jan-Krzysztof", no FideIds vs FideIds
    assert {p.name for p in small.players} != {p.name for p in full.players}
    assert all(p.fide_id is None for p in small.players)
    assert all(p.fide_id is not None for p in full.players)


def test_bom_crlf_chessbase_file() -> None:
    text, pf = load("tata2018.pgn")
    assert "\r" not in "".join(v for g in pf.games for v in g.headers.values())
    assert pf.games[0].headers["Event"].startswith("Tata Steel")
    assert all("\ufeff" not in k for g in pf.games for k in g.headers)


def test_latin1_dortmund_names_and_tournaments_per_year() -> None:
    _, pf = load("dortmund.pgn")
    names = {p.name for p in pf.players}
    assert {"Réti, Richard", "Sämisch, Friedrich"} <= names
    years: dict[int, set[int]] = {}
    for g in pf.games:
        years.setdefault(g.tournament_ref, set()).add(g.game_date.year)
    assert len(pf.tournaments) == len(years) > 1  # the Event is "Dortmund" for 1928 to 2010
    assert all(len(y) == 1 for y in years.values())


def test_partial_dates_keep_precision() -> None:
    _, pf = load("world_matches.pgn")
    precisions = Counter(g.date_precision for g in pf.games)
    assert precisions["year"] > 0
    first = pf.games[0]
    assert first.headers["Date"].endswith("??.??") and first.date_precision == "year"
    assert first.game_date == dt.date(int(first.headers["Date"][:4]), 1, 1)


def test_carlsen_empty_elo_and_name_spellings() -> None:
    _, pf = load("Carlsen.pgn")
    empty = sum(1 for g in pf.games if g.headers.get("WhiteElo") == "" or g.headers.get("BlackElo") == "")
    assert empty > 0
    assert sum(1 for g in pf.games if g.white_rating is None or g.black_rating is None) >= empty
    assert not [i for i in pf.issues if i.code == "rating_invalid"]


def test_cancer0707_games_keep_their_headers() -> None:
    _, pf = load("cancer0707.pgn")
    assert all(g.headers.get("White") not in (None, "?") for g in pf.games)
    assert all(g.headers["ECOUrl"] not in (g.headers.get("Event"), "") for g in pf.games if "ECOUrl" in g.headers)
    assert sum(1 for g in pf.games if g.variant == "chess960") == 5


@pytest.mark.parametrize(
    "name",
    [
        "chess960rwch.pgn",
        "fischerr19.pgn",
        "anastasian-lewis.pgn",
        "nepomniachtchi-liren-game1.pgn",
        "wchcand22.pgn",
        "kasparov-deep-blue-1997.pgn",
        "norway_chess_2022_classical.pgn",
    ],
)
def test_validated_real_games_are_legal(name: str) -> None:
    _, fast = load(name)
    _, pf = load(name, validate=True)
    assert not [i for i in pf.issues if i.code in ("illegal_move", "ambiguous_move", "fen_invalid")]
    assert [g.movetext_hash for g in pf.games] == [g.movetext_hash for g in fast.games]


def test_ply_counts_match_python_chess_main_line() -> None:
    text, pf = load("wjun19.pgn")
    handle = io.StringIO(text)
    plies = []
    while (g := chess.pgn.read_game(handle)) is not None:
        plies.append(g.end().ply())
    assert [g.ply_count for g in pf.games] == plies


def test_chess960_and_set_up() -> None:
    _, pf = load("chess960rwch.pgn")
    assert all(g.variant == "chess960" and g.fen and "chess960" in g.flags for g in pf.games)


def test_null_move_z0_file() -> None:
    _, pf = load("anastasian-lewis.pgn")
    assert "null_move" in pf.games[0].flags


def test_engine_fide_ids_ignored() -> None:
    _, pf = load("chessbase-empty-line.pgn")
    assert len(pf.games) == 1
    assert {"Event", "Date", "Board", "BlackFideId"} <= set(pf.games[0].headers)
    assert all(p.fide_id is None for p in pf.players)
    assert len([i for i in pf.issues if i.code == "fide_id_invalid"]) == 2


def test_time_controls_and_event_types() -> None:
    assert load("nepomniachtchi-liren-game1.pgn")[1].tournaments[0].rate_class == "standard"
    assert load("airthings_masters_prelim_2022.pgn")[1].tournaments[0].rate_class is None
    assert load("norway_chess_2022_armageddon.pgn")[1].tournaments[0].tournament_type == "armageddon"
    _, kasparov = load("kasparov-deep-blue-1997.pgn")
    assert len(kasparov.tournaments) == 1  # Site "01".."06" is a game number, not a place
    assert all(g.white_rating is None for g in kasparov.games)


def test_parallel_workers_give_the_same_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ranges of games are read in other processes only when moves are replayed (the column path
    reads the plain games otherwise): the same result as one reader, with the ingest's fork
    spread (elopipe.ingest.execution) and without one (every range read here)."""
    import elopipe.read.pgn.read_loop as read_loop
    from elopipe.ingest.execution import fork_spread

    # the smallest files first: many files' kinds of game in few games
    texts = [
        decode_bytes(p.read_bytes()).text.strip("\n") + "\n\n" for p in sorted(FILES, key=lambda p: p.stat().st_size)
    ]
    text = ""
    for t in texts:  # about 900 games (moves replayed three times): three ranges of at least 300
        if text.count("[Event ") >= 900:
            break
        text += t
    one = read_pgn(text, validate_moves=True)
    monkeypatch.setattr(read_loop, "_MIN_CHUNK_GAMES", 300)
    ranges: list[int] = []
    run_parallel = read_loop.ReadLoop._run_parallel

    def counted(self: Any, raw_games: Any, chunks: list[tuple[int, int]]) -> int:
        ranges.append(len(chunks))
        return run_parallel(self, raw_games, chunks)

    monkeypatch.setattr(read_loop.ReadLoop, "_run_parallel", counted)
    for spread in (fork_spread, None):
        three = read_pgn(text, validate_moves=True, workers=3, spread=spread)
        assert three.games == one.games
        assert three.players == one.players
        assert three.tournaments == one.tournaments
        assert three.unplayed == one.unplayed
        assert three.issues == one.issues
    assert ranges == [3, 3]
