"""Placeholder IDs (`elopipe.read.ids`): the forms the specs name mean "no ID", in TRF and PGN,
and two players who carry the same placeholder stay two players in the store."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from elopipe.read.ids import is_placeholder_id
from elopipe.read.pgn.reader import read_pgn
from elopipe.read.trf.reader import read_trf
from tests.helpers.trf_build import block, row, trf

PLACEHOLDERS = ["", "   ", "0", "00000000", "0000000000", "9999", "999999", "9999999", "99999999", "?", "-", "---"]
REAL_IDS = ["1503014", "24101605", "100001", "12345", "9", "99", "19999999", "990000"]


@pytest.mark.parametrize("raw", PLACEHOLDERS)
def test_placeholder_forms_mean_no_id(raw: str) -> None:
    assert is_placeholder_id(raw)


@pytest.mark.parametrize("raw", REAL_IDS)
def test_ids_are_not_placeholders(raw: str) -> None:
    assert not is_placeholder_id(raw)


@pytest.mark.parametrize("raw", ["0", "00000000", "999999", "99999999", "9999999"])
def test_trf_placeholder_fide_id_is_no_id(raw: str) -> None:
    """The Irish 2011 file writes 999999 for a player with no FIDE ID: no FIDE ID, no national ID."""
    p = read_trf(trf(row(1, "Kalinins, Valentine", [block(0, "-", "H")], fed="IRL", fide_id=raw)))
    (player,) = p.players
    assert (player.fide_id, player.national_id) == (None, None)
    reported = [i for i in p.issues if i.code == "trf_placeholder_fide_id"]
    assert bool(reported) is raw.startswith("9")  # zeros are the format's own "no ID"
    if reported:
        assert reported[0].line == 6 and raw in (reported[0].raw or "")


def _pgn(white_id: str, black_id: str, rnd: str = "1", moves: str = "1. e4 e5 1-0") -> str:
    tags = {
        "Event": "Club Open",
        "Site": "Cork IRL",
        "Date": "2011.07.02",
        "Round": rnd,
        "White": f"White {rnd}",
        "Black": f"Black {rnd}",
        "Result": moves.rsplit(" ", 1)[1],
        "WhiteFideId": white_id,
        "BlackFideId": black_id,
    }
    return "".join(f'[{k} "{v}"]\n' for k, v in tags.items()) + "\n" + moves + "\n\n"


@pytest.mark.parametrize("raw", ["999999", "99999999", "00000000", "0"])
def test_pgn_placeholder_fide_id_is_no_id(raw: str) -> None:
    pf = read_pgn(_pgn(raw, "1503014"))
    white, black = pf.players
    assert (white.fide_id, black.fide_id) == (None, 1503014)
    placeholder = [i for i in pf.issues if i.code == "fide_id_placeholder"]
    assert bool(placeholder) is raw.startswith("9")
    assert not [i for i in pf.issues if i.code == "fide_id_invalid"]
    if placeholder:
        assert placeholder[0].raw == raw and "placeholder" in placeholder[0].message


def test_pgn_players_sharing_a_placeholder_are_not_one_player() -> None:
    """Within a file, players are keyed by FIDE ID when they have one: a placeholder must not
    make one player of White 1 and White 2 (nor of the column-wise path's fast games)."""
    text = _pgn("999999", "999999", "1") + _pgn("999999", "0", "2")
    pf = read_pgn(text)
    assert sorted(p.name for p in pf.players) == ["Black 1", "Black 2", "White 1", "White 2"]
    assert all(p.fide_id is None for p in pf.players)


def test_store_never_joins_players_on_a_placeholder(tmp_path: Path) -> None:
    """Two files, four different people, every one written with 999999: four players in the
    store, none with a FIDE ID."""
    from elopipe.ingest.driver import ingest_paths

    a = tmp_path / "a.trf"
    a.write_text(
        trf(
            row(1, "Kalinins, Valentine", [block(2, "w", "1")], fed="IRL", fide_id="999999", rating=1800),
            row(2, "Murphy, Sean", [block(1, "b", "0")], fed="IRL", fide_id="999999", rating=1700),
        ),
        encoding="utf-8",
    )
    b = tmp_path / "b.pgn"
    b.write_text(_pgn("999999", "99999999", "1"), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    ingest_paths([a, b], db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT name, fide_id FROM players ORDER BY name").fetchall()
    finally:
        con.close()
    assert rows == [("Black 1", None), ("Kalinins, Valentine", None), ("Murphy, Sean", None), ("White 1", None)]


def _nrs(rank: int, national_id: str) -> str:
    """A TRF-2026 national rating row (trf-format.md §6): federation, start rank, rating 1500,
    the national id at cols 58-68."""
    line = f"FRA {rank:>4}".ljust(48) + "1500".ljust(9) + f"{national_id:>11}"
    assert line[57:68].strip() == national_id.strip(), line
    return line


@pytest.mark.parametrize("raw", ["none", "NONE", "unknown", "xxx", "n.a."])
def test_a_word_in_the_fide_id_column_is_no_id(raw: str) -> None:
    """A word holds no digit: no FIDE ID and no national ID (kept as one, every player who
    carries it became one player: a hostile tester's file, 'none' on every row)."""
    p = read_trf(trf(row(1, "Kalinins, Valentine", [block(0, "-", "H")], fed="IRL", fide_id=raw)))
    (player,) = p.players
    assert (player.fide_id, player.national_id) == (None, None)
    (issue,) = [i for i in p.issues if i.code == "trf_bad_fide_id"]
    assert issue.line == 6 and "holds no digit: read as no ID" in issue.message


def test_a_letter_and_digits_in_the_fide_id_column_stays_a_national_id() -> None:
    p = read_trf(trf(row(1, "Roux, Paul", [block(0, "-", "H")], fed="FRA", fide_id="K59857")))
    assert (p.players[0].fide_id, p.players[0].national_id) == (None, "K59857")


@pytest.mark.parametrize("raw", ["0", "999999", "-", "none"])
def test_a_placeholder_national_id_of_a_national_rating_row_is_no_id(raw: str) -> None:
    p = read_trf(trf(row(1, "Dupont, Jean", [block(0, "-", "H")], fed="FRA"), _nrs(1, raw)))
    (player,) = p.players
    assert player.national_id is None and player.national_rating == 1500
    (issue,) = [i for i in p.issues if i.code == "trf_nrs_placeholder_id"]
    assert f"player 1: national id '{raw}' is no ID: ignored" == issue.message
    assert p.tournaments[0].extra["nrs"][0]["national_id"] == raw  # the row stays as written


def test_store_never_joins_players_on_a_word_or_a_national_placeholder(tmp_path: Path) -> None:
    """Two files, eight different people: 'none' in every FIDE-ID column of one, 0 as every
    national id of the other. Eight players, each tournament's four games between four of them."""
    from elopipe.ingest.driver import ingest_paths

    names = [["Kelly, Martin", "Byrne, Sean", "Foran, Ann", "Smith, Tom"], ["Dupont, Jean", "Bernard, Paul",
             "Martin, Luc", "Petit, Eve"]]  # fmt: skip
    for i, (four, extra) in enumerate(zip(names, ["none", "0"], strict=True)):
        rows = [
            row(r + 1, n, [block(4 - r, "w" if r < 2 else "b", "1" if r < 2 else "0")], fed="FRA",
                fide_id=extra if i == 0 else "")
            for r, n in enumerate(four)
        ]  # fmt: skip
        nrs = [_nrs(r + 1, extra) for r in range(4)] if i == 1 else []
        (tmp_path / f"{i}.trf").write_text(trf(*rows, *nrs), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    ingest_paths([tmp_path / "0.trf", tmp_path / "1.trf"], db)
    with duckdb.connect(str(db), read_only=True) as con:
        players = con.execute("SELECT count(*), count(national_id) FROM players").fetchall()
        selfgames = con.execute("SELECT count(*) FROM games WHERE white_id = black_id").fetchall()
    assert players == [(8, 0)] and selfgames == [(0,)]
