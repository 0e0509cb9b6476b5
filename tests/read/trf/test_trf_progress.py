"""An event still in progress (`elopipe.read.trf.progress`, issue 25 item 3): the real files of
shared/data/trf and variants made from them, paired rounds with and without results."""

from __future__ import annotations

import pytest

from elopipe.read.records import ParsedFile
from elopipe.read.textio import decode_bytes
from elopipe.read.trf.reader import read_trf
from tests.helpers.paths import SHARED_DATA
from tests.helpers.trf_build import results_in_round

DATA = SHARED_DATA / "trf"
FILES = sorted(DATA.glob("*.trf")) if DATA.is_dir() else []
pytestmark = pytest.mark.skipif(not FILES, reason="shared/data/trf not present")
SHARLY = "fra_sharly_trf26_team_310_in_progress.trf"
BILKENT = "tur_bilkent_round2_paired_unplayed_utf8.trf"
GROS = "esp_open_gros_2010_javafo_trfx_round5_partial.trf"
IN_PROGRESS = {SHARLY, BILKENT, GROS}


def text_of(name: str) -> str:
    return decode_bytes((DATA / name).read_bytes()).text


def in_progress(p: ParsedFile) -> str | None:
    value = p.tournaments[0].extra.get("in_progress")
    return str(value) if value is not None else None


def declare_rounds(text: str, n: int) -> str:
    return "\n".join(f"142 {n}" if line.startswith("142") else line for line in text.split("\n"))


def test_the_sharly_team_file_is_in_progress_at_round_2() -> None:
    p = read_trf(text_of(SHARLY), SHARLY)
    assert in_progress(p) == "round 2 of 3 is paired with no result on 6 of 6 boards"
    (issue,) = [i for i in p.issues if i.code == "trf_in_progress"]
    assert issue.severity == "warning" and issue.line == 20  # SIMON's row, the first paired board
    assert "not rated until a file with its results is loaded" in issue.message
    # nothing is lost: the round's pairings are kept, not played
    assert [g for g in p.games if g.round == 2] and all(not g.played for g in p.games if g.round == 2)


def test_bilkent_round_2_paired_unplayed_is_in_progress() -> None:
    p = read_trf(text_of(BILKENT), BILKENT)
    assert in_progress(p) == "round 2 of 6 is paired with no result on 10 of 10 boards"


@pytest.mark.parametrize("path", [f for f in FILES if f.name not in IN_PROGRESS], ids=lambda f: f.name[:40])
def test_the_other_real_files_are_complete(path) -> None:
    """The lichess export that declares 21 rounds and played 20 among them: nothing is paired and
    waiting, and no round is prepared: an event may end early."""
    p = read_trf(decode_bytes(path.read_bytes()).text, path.name)
    assert in_progress(p) is None
    assert not [i for i in p.issues if i.code == "trf_in_progress"]


def test_gros_with_round_5_byes_entered_ahead_is_in_progress() -> None:
    """JaVaFo's Gros 2010 sample (SOURCES.md: an in-progress file): 4 of its 9 declared rounds
    played, then round 5 holds only the absences entered ahead (one H, two Z), no pairing: the
    arbiter is preparing round 5."""
    p = read_trf(text_of(GROS), GROS)
    assert in_progress(p) == "round 5 of 9 is not paired yet: 3 byes are entered ahead"
    (issue,) = [i for i in p.issues if i.code == "trf_in_progress"]
    assert issue.severity == "warning" and "not rated until a file with its results is loaded" in issue.message
    # declared as the 4 rounds it played, the same file is complete
    assert in_progress(read_trf(text_of(GROS).replace("XXR 9", "XXR 4"), GROS)) is None
    # round-5 blocks left empty (no entry ahead): nothing is prepared, and an event may end early
    blank = text_of(GROS).replace("0000 - H", " " * 8).replace("0000 - Z", " " * 8)
    assert in_progress(read_trf(blank, GROS)) is None


def test_the_sharly_file_with_its_round_2_results_is_complete() -> None:
    p = read_trf(results_in_round(text_of(SHARLY), 2), SHARLY)
    assert in_progress(p) is None
    assert [g for g in p.games if g.round == 2 and g.played]


def test_a_last_round_with_a_few_unplayed_boards_is_complete() -> None:
    """The last declared round, 5 boards with results and 1 without: that game was not played
    (stored not played, never rated), and the event is rated."""
    text = declare_rounds(results_in_round(text_of(SHARLY), 2, skip=1), 2)
    p = read_trf(text, SHARLY)
    assert in_progress(p) is None
    waiting = [g for g in p.games if g.round == 2 and "trf_scheduled" in g.flags]
    assert len(waiting) == 1 and not waiting[0].played


def test_a_round_under_way_with_more_rounds_to_come_is_in_progress() -> None:
    """The same results, but 3 rounds declared: round 2 is being played."""
    p = read_trf(results_in_round(text_of(SHARLY), 2, skip=1), SHARLY)
    assert in_progress(p) == "round 2 of 3 is paired with no result on 1 of 6 boards"


def test_a_last_round_with_most_boards_waiting_is_in_progress() -> None:
    text = declare_rounds(results_in_round(text_of(SHARLY), 2, skip=4), 2)
    assert in_progress(read_trf(text, SHARLY)) == "round 2 of 2 is paired with no result on 4 of 6 boards"
