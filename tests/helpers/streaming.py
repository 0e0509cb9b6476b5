"""Shared by the streaming and pieces tests: the real PGN files, a hostile text, and the check that two
reads of one file gave the same result."""

from __future__ import annotations

from elopipe.read.game_frame import games_frame
from elopipe.read.textio import decode_bytes
from tests.helpers.paths import REPO

SHARED_PGN = REPO.parent / "shared" / "data" / "pgn"

FILES = sorted(p for p in SHARED_PGN.iterdir() if p.suffix.lower() == ".pgn")


def assert_same(whole, pieces) -> None:
    fields = ("sha256", "size", "format", "encoding", "newline", "rejected_reason")
    assert [getattr(pieces, f) for f in fields] == [getattr(whole, f) for f in fields]
    a, b = whole.parsed, pieces.parsed
    assert b.issues == a.issues
    assert b.tournaments == a.tournaments
    assert b.players == a.players
    assert b.unplayed == a.unplayed
    fa, fb = games_frame(a.games), games_frame(b.games)
    assert fb.height == fa.height
    assert fb.equals(fa)


def hostile_text() -> str:
    """Real games with what the reader treats per file rather than per game placed far apart:
    `%` lines, an unclosed comment, a blank line inside a tag section, games without [Event,
    a game without tags, a tab and a control character in tags, and (last) UTF-8 read as CP1252
    in a name, which makes the reader repair names in every game (here "Ø¨", early on, which
    alone would not)."""
    base = decode_bytes((SHARED_PGN / "wjun19.pgn").read_bytes()).text.strip("\n") + "\n\n"
    games = base.split('\n\n[Event "')
    odd = [
        '[Event "Odd"]\n[Site "Café"]\n[Date "2019.01.01"]\n[White "A, BØ¨"]\n[Black "C, D"]\n[Result "1-0"]\n\n'
        "1. e4 { an unclosed comment\n\n",
        '%a percent line\n[Event "Odd"]\n[White "E\tF"]\n\n[Black "G\x07H"]\n[Result "0-1"]\n\n1. d4 d5 0-1\n\n',
        '[White "No, Event"]\n[Black "Also, None"]\n[Result "1/2-1/2"]\n\n1. c4 c5 1/2-1/2\n\n',
        "1. Nf3 Nf6 2. g3 g6 1-0\n\n",
    ]
    out = []
    for i, g in enumerate(games):
        out.append(g if i == 0 else '[Event "' + g)
        if not out[-1].endswith("\n\n"):
            out[-1] = out[-1].rstrip("\n") + "\n\n"
        if i % 40 == 7:
            out.append(odd[(i // 40) % len(odd)])
    out.append('[Event "Last"]\n[White "JosÃ© Ã‰mile"]\n[Black "X, Y"]\n[Result "1-0"]\n\n1. e4 e5 1-0\n')
    return "".join(out)
