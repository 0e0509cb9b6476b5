"""A FIDE ID of more than nine digits is no ID (`elopipe.read.ids.is_too_long_id`; issue 25 item 3):
in a TRF, a PGN and an official list alike, read as no ID with a warning at its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from elopipe.official.list_import import import_list
from elopipe.read.ids import FIDE_ID_MAX, is_too_long_id
from elopipe.read.pgn.reader import read_pgn
from elopipe.read.textio import decode_bytes
from elopipe.read.trf.reader import read_trf
from tests.helpers.official_lists import STD, fixed, memory_store
from tests.helpers.paths import SHARED_DATA

GRANDMOMMY = SHARED_DATA / "trf" / "fide_trf26_grandmommys_cup_team_sample_249players.trf"
needs_data = pytest.mark.skipif(not GRANDMOMMY.is_file(), reason="shared/data/trf not present")


@pytest.mark.parametrize("raw", ["72623454321", "1234567890", " 0001234567890 ", "70123454321"])
def test_more_than_nine_digits_is_no_id(raw: str) -> None:
    assert is_too_long_id(raw)


@pytest.mark.parametrize("raw", ["999999999"[:-1] + "8", "123456789", "000123456789", "1503014", "", "?"])
def test_nine_digits_or_fewer_are_not_too_long(raw: str) -> None:
    """Nine digits are the most a FIDE ID has; leading zeros are padding, not digits."""
    assert not is_too_long_id(raw)
    assert FIDE_ID_MAX == 999_999_999


@needs_data
def test_grandmommys_cup_eleven_digit_ids_are_no_ids_with_a_warning_at_the_line() -> None:
    decoded = decode_bytes(GRANDMOMMY.read_bytes())
    p = read_trf(decoded.text, GRANDMOMMY.name)
    by_ref = {pl.ref: pl for pl in p.players}
    # 'Test0026 Player0026', 72623454321 in the file
    assert by_ref[26].name == "Test0026 Player0026" and by_ref[26].fide_id is None
    assert all(pl.fide_id is None for pl in p.players)
    (warning,) = [i for i in p.issues if i.code == "trf_fide_id_too_long"]
    assert warning.severity == "warning" and warning.line == 33
    assert "more than 9 digits" in warning.message and "249 lines" in warning.message
    assert "70123454321" in (warning.raw or "")


@needs_data
def test_a_variant_with_one_real_id_keeps_it(tmp_path: Path) -> None:
    """The same file with player 26's ID cut to the nine digits a real ID may have: that one
    is kept, the 248 others are still no ID."""
    text = decode_bytes(GRANDMOMMY.read_bytes()).text.replace("72623454321", "  623454321")
    p = read_trf(text, "variant.trf")
    ids = {pl.ref: pl.fide_id for pl in p.players}
    assert ids[26] == 623454321 and sum(v is not None for v in ids.values()) == 1
    (warning,) = [i for i in p.issues if i.code == "trf_fide_id_too_long"]
    assert "248 lines" in warning.message


def _pgn(white_id: str) -> str:
    tags = {
        "Event": "Grandmommy's Cup",
        "Site": "Test",
        "Date": "2025.05.01",
        "Round": "1",
        "White": "Test0026 Player0026",
        "Black": "Test0001 Player0001",
        "Result": "1-0",
        "WhiteFideId": white_id,
        "BlackFideId": "1503014",
    }
    return "".join(f'[{k} "{v}"]\n' for k, v in tags.items()) + "\n1. e4 e5 2. Nf3 Nc6 1-0\n\n"


def test_pgn_eleven_digit_fide_id_is_no_id_with_a_warning() -> None:
    pf = read_pgn(_pgn("72623454321") + _pgn("1503015"))
    ids = {(p.name, p.fide_id) for p in pf.players}
    assert ("Test0026 Player0026", None) in ids and ("Test0026 Player0026", 1503015) in ids
    (warning,) = [i for i in pf.issues if i.code == "fide_id_too_long"]
    # at the line of the game (its first tag), as every tag's warning
    assert warning.line == 1 and warning.game_index == 0 and warning.raw == "72623454321"
    assert warning.message.startswith("WhiteFideId 72623454321 has more than 9 digits")


def test_list_import_eleven_digit_id_is_no_id_and_reported(tmp_path: Path) -> None:
    rows = [
        ["1503014", "Carlsen, Magnus", "NOR", "M", "GM", "", "", "", "2830", "2", "10", "1990", ""],
        ["72623454321", "Player0026, Test0026", "IND", "M", "", "", "", "", "2400", "4", "20", "1990", ""],
    ]
    f = tmp_path / "standard_mar24frl.txt"
    f.write_text(fixed(STD, rows), encoding="utf-8")
    con = memory_store()
    res = import_list(con, f, "fide")
    assert res.rows == {"fide": 1} and res.skip_counts() == {"no_id": 1}
    stored = con.execute("SELECT line, reason, detail FROM list_import_skips").fetchall()
    assert stored == [(3, "no_id", "ID 72623454321: more than 9 digits, which no FIDE ID has")]
    assert con.execute("SELECT count(*) FROM players WHERE fide_id > 999999999").fetchone()[0] == 0
