"""Damaged TRF text never crashes the reader (no 'trf_reader_crash'), and every block still lands once."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elopipe.read.trf.reader import read_trf
from tests.helpers.trf_build import block, row, trf

BASE = trf(
    "132" + " " * 88 + "24/03/01  24/03/02  24/03/03",
    "XXR 3",
    row(1, "Alpha, Ann", [block(2, "w", "1"), block(3, "b", "+"), block(0, "-", "H")], points="2.5"),
    row(2, "Beta, Bob", [block(1, "b", "0"), block(0, "-", "U"), block(3, "w", "=")], points="1.5"),
    row(3, "Gamma, Gil", [block(None, " ", " "), block(1, "w", "-"), block(2, "b", "=")], points="0.5"),
    "013 " + "Team".ljust(32) + "   1    2",
    "FRA    3    A                                   1800 IDF      D12345",
)
ALPHABET = st.sampled_from(list("0123456789 wb-+=HFUZWDL|\t/.éΩ\n") + ["001", "012 ", "###"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(BASE) - 1), st.integers(0, 3), ALPHABET), max_size=12))
def test_mutated_files_never_crash(edits):
    text = BASE
    for pos, cut, insert in edits:
        pos = min(pos, len(text))
        text = text[:pos] + insert + text[pos + cut :]
    p = read_trf(text)
    assert not any(i.code == "trf_reader_crash" for i in p.issues), p.issues
    if p.rejected_reason:
        return
    n_rounds = p.tournaments[0].extra.get("rounds_in_blocks", 0)
    per_player = Counter(u.player_ref for u in p.unplayed)
    for g in p.games:
        if g.played:
            per_player[g.white_ref] += 1
            per_player[g.black_ref] += 1
            assert g.result in ("1-0", "0-1", "1/2-1/2")
    assert set(per_player.values()) <= {n_rounds}
    refs = {pl.ref for pl in p.players}
    assert all(g.white_ref in refs and g.black_ref in refs for g in p.games)


@given(st.text(max_size=400))
@settings(max_examples=150, deadline=None)
def test_arbitrary_text_never_crashes(text):
    p = read_trf(text)
    assert not any(i.code == "trf_reader_crash" for i in p.issues)
