"""Every real TRF file of shared/data/trf parses, with counts checked by an independent scan.

The scan below does not use the reader: it counts `001` lines and the played pairings that
both players confirm (A names B with colour w/b and 1/=/0, B names A with the other colour
and the mirrored result), which is what `read_trf` must store as played games.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest

from elopipe.read.textio import decode_bytes
from elopipe.read.trf.reader import looks_like_trf, read_trf
from tests.helpers.paths import REPO

DATA = REPO.parent / "shared" / "data" / "trf"
FILES = sorted(DATA.glob("*.trf")) if DATA.is_dir() else []
pytestmark = pytest.mark.skipif(not FILES, reason="shared/data/trf not present")

_CACHE: dict[str, tuple] = {}


def load(name: str):
    if name not in _CACHE:
        decoded = decode_bytes((DATA / name).read_bytes())
        _CACHE[name] = (decoded, read_trf(decoded.text, name))
    return _CACHE[name]


def scan(raw: bytes) -> tuple[int, int]:
    """(number of 001 lines, mutually confirmed played pairings) straight from the text."""
    text = raw.decode("utf-8-sig") if _is_utf8(raw) else raw.decode("cp1252", errors="replace")
    lines = re.split(r"\r\n|\r|\n", text)
    claims = {}
    n_rows = 0
    for line in lines:
        if not line.startswith("001"):
            continue
        n_rows += 1
        me = int(line[4:8])
        for m in re.finditer(r"(?<=  )([ \d]{4}) ([wb]) ([10=])", line[89:]):
            start = 89 + m.start()
            if (start - 91) % 10:
                continue
            rnd = (start - 91) // 10 + 1
            claims[(rnd, me)] = (int(m.group(1)), m.group(2), m.group(3))
    mirror = {"1": "0", "0": "1", "=": "="}
    confirmed = 0
    for (rnd, me), (opp, colour, res) in claims.items():
        other = claims.get((rnd, opp))
        if other and other[0] == me and other[1] != colour and other[2] == mirror[res]:
            confirmed += 1
    return n_rows, confirmed // 2


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_real_file_parses_with_independent_counts(path: Path):
    decoded, p = load(path.name)
    assert p.rejected_reason is None
    assert looks_like_trf(decoded.text)
    n_rows, confirmed = scan(path.read_bytes())
    assert len(p.players) == n_rows
    assert sum(g.played for g in p.games) == confirmed
    assert all(g.result in ("1-0", "0-1", "1/2-1/2") for g in p.games if g.played)
    assert len(p.tournaments) == 1
    # every round block of every player lands once: in a played game or as an unplayed round
    n_rounds = p.tournaments[0].extra.get("rounds_in_blocks", 0)
    per_player = Counter(u.player_ref for u in p.unplayed)
    for g in p.games:
        if g.played:
            per_player[g.white_ref] += 1
            per_player[g.black_ref] += 1
    assert set(per_player.values()) <= {n_rounds}
    assert len({(u.player_ref, u.round) for u in p.unplayed}) == len(p.unplayed)
    refs = {pl.ref for pl in p.players}
    assert all(g.white_ref in refs and g.black_ref in refs for g in p.games)
    assert all(i.line is None or i.line >= 1 for i in p.issues)


def test_ruler_starting_with_012_and_013_teams():
    _, p = load("irl_armstrong_cup_2010_11_team_league_013.trf")
    t = p.tournaments[0]
    assert t.name == "Leinster Chess Union Div 1 Armstrong Cup 2010 - 2011"
    assert (t.start_date, t.end_date) == (dt.date(2010, 9, 13), dt.date(2011, 3, 13))
    assert t.is_team and len(p.teams) == 12 and all(tm.record == "013" for tm in p.teams)
    assert any(i.code == "trf_ruler_line" and i.line == 28 for i in p.issues)
    assert all(pl.final_rank is None for pl in p.players)


def test_bom_and_ruler_file():
    decoded, p = load("irl_armstrong_cup_2011_12_utf8_bom_ruler_line.trf")
    assert decoded.encoding == "utf-8-sig"
    assert p.tournaments[0].name.startswith("Leinster")
    assert len(p.players) == 2 and [g.played for g in p.games] == [True]


def test_latin1_and_utf8_copies_read_the_same():
    d1, latin = load("irl_las_vegas_sample_latin1_names.trf")
    d2, utf8 = load("irl_las_vegas_sample_utf8_names.trf")
    assert (d1.encoding, d2.encoding) == ("cp1252", "utf-8")
    assert [pl.name for pl in latin.players] == [pl.name for pl in utf8.players]
    assert latin.tournaments[0].name == utf8.tournaments[0].name == "Läs Végas National Opeñ"
    assert [(pl.title, pl.points) for pl in latin.players] == [(pl.title, pl.points) for pl in utf8.players]
    assert {pl.title for pl in latin.players} >= {"GM", "IM"}


def test_cp1252_irish_names():
    decoded, p = load("irl_irish_junior_champs_2011_crlf.trf")
    assert decoded.encoding == "cp1252" and decoded.newline == "CRLF"
    names = " ".join(pl.name for pl in p.players)
    assert "Ó Muireagáin" in names and "Ní Mhuireagáin" in names
    assert all(pl.fide_id is None and pl.national_id for pl in p.players)  # ICU numbers


def test_greek_team_swiss_counts_columns_in_characters():
    _, p = load("gre_friendship_cup_2024_team_swiss_greek_utf8.trf")
    t = p.tournaments[0]
    assert t.name.startswith("ΔΙΑΣΥΛΛΟΓΙΚΟ") and t.is_team and t.extra["declared_players"] == 129
    assert len(p.teams) == 15
    members = [m for tm in p.teams for m in tm.member_ranks]
    assert len(members) == len(set(members)) and set(members) <= {pl.ref for pl in p.players}
    assert not any(i.code.startswith("trf_team") for i in p.issues)
    assert {pl.birth_year for pl in p.players if pl.birth_year} and all(
        pl.birth_date is None for pl in p.players if pl.birth_year == 2014
    )


def test_cr_only_file():
    decoded, p = load("bbp_autotest_cr_only_line_endings.trf")
    assert decoded.newline == "CR"
    assert len(p.players) == 180 and p.tournaments[0].rounds == 11


def test_vega_file_bye_kinds_match_sources_md():
    _, p = load("esp_torneo_san_viator_2018_vega_137players.trf")
    codes = Counter(u.code for u in p.unplayed)
    assert (codes["H"], codes["Z"], codes["U"], codes["F"]) == (99, 30, 5, 3)
    assert codes["+"] == codes["-"] > 0
    forfeits = [g for g in p.games if g.unplayed_code in ("+", "-")]
    assert forfeits and not any(g.played for g in forfeits)
    t = p.tournaments[0]
    assert (t.start_date, t.end_date) == (dt.date(2018, 4, 8), dt.date(2018, 6, 10))
    assert t.extra["round_dates"]["1"] == "2018-04-08"
    assert {g.game_date for g in p.games if g.round == 1} == {dt.date(2018, 4, 8)}


def test_fide_example1_legacy_layout():
    _, p = load("ger_karl_mala_gedenkturnier_2005_fide_example1_284players.trf")
    t = p.tournaments[0]
    assert (t.start_date, t.end_date) == (dt.date(2005, 7, 28), dt.date(2005, 7, 31))
    forfeits = [g for g in p.games if not g.played]
    raw = (DATA / "ger_karl_mala_gedenkturnier_2005_fide_example1_284players.trf").read_text()
    assert len(forfeits) == len(re.findall(r" +[1-9]\d* - \+", raw)) == 10  # '153 - +' style, one per game
    assert all(set(g.flags) == {"trf_colour_unknown", "trf_forfeit"} for g in forfeits)
    assert all(g.white_ref < g.black_ref for g in forfeits)  # colour unknown: lower start rank listed first
    assert any(pl.birth_date == dt.date(1969, 12, 6) for pl in p.players)
    assert sum(pl.fide_id is not None for pl in p.players) > 100


def test_irregular_rows():
    _, p = load("irl_u19_all_ireland_2010_irregular_rows.trf")
    (forfeit,) = [g for g in p.games if not g.played]
    assert (forfeit.white_ref, forfeit.black_ref, forfeit.result, forfeit.unplayed_code) == (1, 5, "1-0", "+")
    assert "dunne,thomas" in [pl.name for pl in p.players]
    assert any(pl.name.startswith("Hülleman") for pl in p.players)
    codes = {(u.player_ref, u.round): u.code for u in p.unplayed}
    assert codes[(2, 1)] == "H" and codes[(7, 1)] == "Z" and codes[(6, 1)] == " "


def test_partial_birth_dates_and_wrong_round_year():
    _, p = load("irl_galway_major_2011_partial_birthdates.trf")
    assert any(pl.birth_year == 1975 and pl.birth_date is None for pl in p.players)
    assert any(pl.birth_date == dt.date(1942, 2, 10) for pl in p.players)
    assert p.tournaments[0].extra["round_dates"]["1"] == "2011-09-30"
    assert any(i.code == "trf_round_date_year" for i in p.issues)


def test_swapped_round_dates_and_bye_points_only_in_total():
    _, p = load("irl_bunratty_masters_2011_crlf.trf")
    assert p.tournaments[0].extra["round_dates"]["1"] == "2011-02-25"
    assert sum(i.code == "trf_points_mismatch" for i in p.issues) == 5  # SOURCES.md: pts≠sum for 5
    assert all(u.code == "Z" and u.score is None for u in p.unplayed)
    feds = Counter(pl.federation for pl in p.players)
    assert feds["ENG"] > 0 and "DUB" not in feds  # club codes are not federations


def test_points_all_zero_is_reported():
    _, p = load("rus_sds_classic_2016_points_all_zero.trf")
    assert any(i.code == "trf_points_all_zero" for i in p.issues)
    assert all(pl.points == Decimal("0.0") for pl in p.players)


def test_roster_without_header():
    _, p = load("tur_bilkent_roster_no_header_unordered.trf")
    assert p.tournaments[0].name is None and [pl.ref for pl in p.players] == list(range(1, 22))
    assert all(pl.fide_id is None for pl in p.players) and not p.games


def test_in_progress_round_is_scheduled_not_lost():
    _, p = load("tur_bilkent_round2_paired_unplayed_utf8.trf")
    scheduled = [g for g in p.games if g.round == 2]
    assert scheduled and all(g.result == "*" and not g.played for g in scheduled)
    assert any("Hüseyin" in pl.name for pl in p.players)


def test_lichess_export():
    _, p = load("lichess_swiss_2020_05_mai_5plus0_13players.trf")
    t = p.tournaments[0]
    assert t.start_date == dt.date(2020, 5, 29) and t.rounds == 10
    assert t.city.startswith("https://lichess.org") and t.extra["platform"] == "lichess"
    assert any(i.code == "trf_online_export" for i in p.issues)
    assert {u.code for u in p.unplayed} <= {"U", "H", "Z"}
    assert all(pl.rating is None and pl.final_rank is None for pl in p.players)


def test_trf26_samples():
    _, p = load("fra_sharly_trf26_individual_nrs_240_byes.trf")
    by_ref = {pl.ref: pl for pl in p.players}
    assert (by_ref[1].national_id, by_ref[1].national_rating, by_ref[1].title) == ("D50113", 2200, "GM")
    assert not any(i.code.startswith("trf_240") for i in p.issues)  # 240 repeats the 001 byes
    _, p = load("fide_trf26_grandmommys_cup_team_sample_249players.trf")
    by_ref = {pl.ref: pl for pl in p.players}
    assert by_ref[14].national_id == "L01854" and by_ref[14].national_rating == 2700
    # its 11-digit numbers (70123454321 ...) are no FIDE IDs: more than nine digits (issue 25)
    assert all(pl.fide_id is None for pl in p.players)
    assert any(i.code == "trf_fide_id_too_long" for i in p.issues)
    assert {tm.record for tm in p.teams} == {"013", "310"}
    assert p.tournaments[0].rounds == 14
    _, p = load("fra_sharly_trf26_team_310_in_progress.trf")
    assert len(p.teams) == 5 and p.tournaments[0].is_team
    assert any(g.result == "*" for g in p.games) and p.tournaments[0].extra["headers"]["352"] == "WBBW"


def test_javafo_in_progress_file():
    _, p = load("esp_open_gros_2010_javafo_trfx_round5_partial.trf")
    t = p.tournaments[0]
    assert t.rounds == 9 and t.extra["rounds_in_blocks"] == 5
    assert len(t.extra["extensions"]["XXA"]) == 26
