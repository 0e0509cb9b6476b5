"""The column-wise PGN path (elopipe.read.pgn.columns) gives exactly what reading game by game gives.

`read_pgn` reads the games `pgn_columns.analyse` vouches for as columns and the others one by
one. Each test reads a text both ways (the one-by-one way with `read_loop.USE_COLUMNS` off: the
reader as it was before the column path) and compares every part of the result: tournaments,
players, games (all fields, refs included), byes, issues.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elopipe.read.pgn import columns as pgn_columns
from elopipe.read.pgn import read_loop
from elopipe.read.pgn import reader as pgn_reader
from elopipe.read.pgn import split as pgn_split
from elopipe.read.pgn import values as pgn_values
from elopipe.read.pgn.reader import read_pgn
from elopipe.read.records import GameTable, ParsedFile
from elopipe.read.textio import decode_bytes
from tests.helpers.paths import REPO

ROOT = REPO
SHARED_PGN = ROOT.parent / "shared" / "data" / "pgn"
PGN_FILES = sorted(
    [p for p in SHARED_PGN.glob("*") if p.suffix.lower() == ".pgn"]
    + [p for p in (ROOT / "sample_pgn").glob("*") if p.suffix.lower() == ".pgn"]
)


def _one_by_one(text: str, monkeypatch: pytest.MonkeyPatch) -> ParsedFile:
    with monkeypatch.context() as m:
        m.setattr(read_loop, "USE_COLUMNS", False)
        return read_pgn(text)


def _assert_same(text: str, monkeypatch: pytest.MonkeyPatch) -> ParsedFile:
    slow = _one_by_one(text, monkeypatch)
    fast = read_pgn(text)
    for part in ("tournaments", "players", "unplayed", "issues", "rejected_reason"):
        assert getattr(fast, part) == getattr(slow, part), part
    assert len(fast.games) == len(slow.games)
    for i, (a, b) in enumerate(zip(fast.games, slow.games, strict=True)):
        assert a == b, f"game {i}: " + ", ".join(
            f"{k}: {getattr(a, k)!r} != {getattr(b, k)!r}"
            for k in a.__dataclass_fields__
            if getattr(a, k) != getattr(b, k)
        )
    return fast


@pytest.mark.parametrize("path", PGN_FILES, ids=lambda p: p.name)
def test_real_files_read_the_same_both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _assert_same(decode_bytes(path.read_bytes()).text, monkeypatch)


def test_most_real_games_take_the_column_path() -> None:
    """Guards the speed: on real files nearly every game must be vouched for by `analyse`."""
    text = decode_bytes((SHARED_PGN / "olym22.pgn").read_bytes()).text
    data = ("\n" + text).encode()
    raw = pgn_split.split_games(data)
    res = pgn_columns.analyse(
        [r.header for r in raw],
        [data[r.mt_start : r.mt_end] for r in raw],
        pgn_values.VALUE_RULES,
        ascii_headers=False,
    )
    assert res is not None
    share = res.games.get_column("fast").mean()
    assert share is not None and share > 0.95, share
    assert isinstance(read_pgn(text).games, GameTable)


# ---- fuzzing: real games with awkward tokens and tag values ----------------------------------

_MOVE_TOKENS = [
    "0-0", "0-0-0", "O-O", "O-O-O", "--", "Z0", "e.p.", "exf6e.p.", "axc5", "axh5", "a8Q", "a5Q", "exd8=Q+",
    "bxa1=N", "h8=K", "e8=Q#", "Nbd7", "N1xd2", "Qh4xe1", "Qh4e1", "Kxe1", "1-0", "0-1", "1/2-1/2", "*", "1/2",
    "\u00bd-\u00bd", "Ke1!!", "Nf3!?", "Nf3+!?", "Nf3!?+", "e4\u00a0e5", "$14", "{c}", "{unterminated", "}",
    "(1. e4)", "(e4 (d4 d5) c5)", "((((((e4))))))", ";c\n", "12...", "12.", "12", "Bb5+", "P-K4", "e4#",
    "i4", "e9", "RR", "\t", "\x0c", "\u3000", "+", "!", "1.e4", "1...e5", "Nf3.", "N@f3", "Pe4", "ef",
    "e4ep", "K", "x", "Rxa", "Raa1", "R1a3", "Qa1b2", "Q1xb2", "\u2013", "0-0+", "O-O#", "O-O-O!", "\n\n",
    "{ [Event \"x\"] }", "\n[Event \"in movetext\"]\n",
]  # fmt: skip
_TAG_VALUES = {
    "WhiteElo": ["", "0", "?", "-", "2700", "99", "3600", "27OO", " 2650 ", "\u0662\u0667\u0660\u0660"],
    "BlackElo": ["", "0", "2500", "abc"],
    "WhiteFideId": ["", "0", "1503014", "12a", "-", "1234567890123", "\u0661\u0662"],
    "BlackFideId": ["4100018", "?", "x"],
    "Date": ["2021.??.??", "????.??.??", "2021.13.45", "2021-05-06", "", "2021", "junk", "?"],
    "EventDate": ["2021.05.01", "????.??.??", "", "bad"],
    "Round": ["1", "3.12", "-", "?", "0", "10000", "a", "2.0", "1.99999"],
    "Board": ["1", "0", "x", "", "?"],
    "Result": ["1-0", "0-1", "1/2-1/2", "*", "+:-", "0-0", "1-0 (forfeit)", "½-½", ""],
    "White": ["", "?", "bye", "BYE", " Carlsen, Magnus ", "Müller, Jörg", "NN", "Ã¶zil"],
    "Black": ["-", "Kasparov,G", "spielfrei", "Freilos", "N.N.", "Bye (1 pt)", "No opponent"],
    "Termination": ["normal", "Forfeit", "time forfeit", "bye", "BYE", "İllegal", "abandoned"],
    "FEN": ["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "bad fen"],
    "Variant": ["Chess960", "standard"],
    "TimeControl": ["40/7200:3600", "-", "?", "600+5"],
    "ECO": ["?", "B90", ""],
    "Event": ["", "?", "Open \\\"A\\\"", "Tab\there", "Ctrl\x1b[31mred"],
    "Site": ["Oslo NOR", "01", "?"],
    "WhiteTitle": ["gm", "?"],
    "WhiteFed": ["nor", "?"],
    "WhiteBirthDate": ["2001.05.06", "9999.12.31"],
    "BlackSex": ["f", "m", "x"],
    "Annotator": ["", " ", " x ", "a  b", "x]", "{y}", "é ü", "\u00a0"],
}  # fmt: skip


def _games(text: str) -> list[str]:
    """The games of a clean real file as texts (header + movetext)."""
    parts = ("\n" + text).split("\n[Event ")
    return ["[Event " + p.strip() + "\n" for p in parts[1:]]


def _mutate(game: str, rnd: random.Random) -> str:
    head, _, moves = game.partition("\n\n")
    lines = head.split("\n")
    if rnd.random() < 0.3:  # a game date can then no longer come from EventDate
        lines = [x for x in lines if not x.startswith("[EventDate ")]
    for _ in range(rnd.choice((0, 0, 1, 1, 2, 3))):
        tag = rnd.choice(list(_TAG_VALUES))
        value = rnd.choice(_TAG_VALUES[tag])
        line = f'[{tag} "{value}"]'
        k = next((i for i, x in enumerate(lines) if x.startswith(f"[{tag} ")), None)
        roll = rnd.random()
        if roll < 0.1:
            lines.append(line)  # possibly the same tag twice
        elif roll < 0.15:
            lines.append(f"[{tag} {value}]")  # unquoted
        elif roll < 0.2 and k is not None:
            lines[k] += " junk after the tag"
        elif roll < 0.25 and k is not None:
            del lines[k]
        elif k is not None:
            lines[k] = line
        else:
            lines.insert(rnd.randrange(len(lines) + 1), line)
    words = moves.split(" ")
    for _ in range(rnd.choice((0, 0, 1, 2, 3))):
        k = rnd.randrange(len(words) + 1)
        tok = rnd.choice(_MOVE_TOKENS)
        if rnd.random() < 0.2 and k < len(words):
            words[k] = words[k] + tok
        else:
            words.insert(k, tok)
    moves = " ".join(words)
    if rnd.random() < 0.05:
        moves = moves.rstrip().rsplit(" ", 1)[0]  # no final marker
    if rnd.random() < 0.03:
        moves = ""
    sep = "\n" if rnd.random() < 0.05 else "\n\n"
    return "\n".join(lines) + sep + moves + "\n"


@pytest.mark.parametrize(("seed", "chunk_games"), [(1, 15_000), (2, 15_000), (3, 300)])
def test_mutated_games_read_the_same_both_ways(seed: int, chunk_games: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """`chunk_games` 300: the file is analysed in 4 chunks (refs and caches cross chunk borders)."""
    monkeypatch.setattr(pgn_split, "COLUMN_CHUNK_GAMES", chunk_games)
    rnd = random.Random(seed)
    base = []
    for name in ("olym22.pgn", "tata2018.pgn", "fide_grand_swiss_2021_riga.pgn"):
        base += _games(decode_bytes((SHARED_PGN / name).read_bytes()).text)
    games = [_mutate(rnd.choice(base), rnd) for _ in range(2000)]
    fast = _assert_same("\n".join(games), monkeypatch)
    assert isinstance(fast.games, GameTable)  # the column path ran


def _game(tags: dict[str, str], moves: str) -> str:
    return "".join(f'[{k} "{v}"]\n' for k, v in tags.items()) + "\n" + moves + "\n\n"


_TAGS = {"Event": "Club", "Site": "Oslo NOR", "Date": "2024.01.02", "Round": "1", "White": "A, B", "Black": "C, D"}


def test_rare_cases_read_the_same_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cases the fuzzing meets too rarely: a player's invalid FIDE ID is reported in every game,
    not only the first; more than PLY_MAX plies; a player's first valid rating comes later."""
    long_game = " ".join(["Nf3 Nf6 Ng1 Ng8"] * 2501) + " 1/2-1/2"
    text = "".join(
        [
            _game({**_TAGS, "Result": "1-0", "WhiteFideId": "12a"}, "1. e4 e5 2. Qh5 Nc6 1-0"),
            _game({**_TAGS, "Result": "0-1", "WhiteFideId": "12a", "WhiteElo": "2400"}, "1. d4 d5 0-1"),
            _game({**_TAGS, "Result": "1/2-1/2", "WhiteElo": "abc"}, "1. c4 c5 1/2-1/2"),
            _game({**_TAGS, "Result": "1/2-1/2", "WhiteElo": "2300", "BlackElo": "2200"}, "1. c4 c5 1/2-1/2"),
            _game({**_TAGS, "Result": "1/2-1/2"}, long_game),
        ]
    )
    fast = _assert_same(text, monkeypatch)
    assert [i.code for i in fast.issues].count("fide_id_invalid") == 2
    assert fast.games[4].ply_count is None


def test_text_inside_a_tag_line_is_read_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tag line with text after its tag (`[Date "..."]ound "1"]`, a cut `[Round` line) is read
    one by one: its JSON must not be built by the literal replacements."""
    text = _game(_TAGS, "1. e4 e5 1-0").replace('[Round "1"]', '[Date "2024.01.02"]ound "1"]') + _game(
        {**_TAGS, "Result": "0-1"}, "1. d4 d5 0-1"
    )
    fast = _assert_same(text, monkeypatch)
    assert fast.games[0].headers is not None and "Round" not in fast.games[0].headers


@pytest.mark.parametrize(
    "line",
    ['[Round "1"', '[Annotator "a" "b"]', '[Annotator  "x"]', '[Annotator "x"]]', '[Annotator "x"] [Site "y"]',
     '[Round "2"]', '[Annotator "a[b"]', '[Annotator "x" ]', '[Annotator ""]', '[Annotator " "]'],
)  # fmt: skip
def test_odd_tag_lines_read_the_same(line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tag section with a line that is not one `[Name "value"]`, or a name twice (`[Round "2"]`
    after `[Round "1"]`), is read one by one; the last two lines are plain tags."""
    odd = _game({**_TAGS, "Result": "1-0"}, "1. e4 e5 1-0").replace('[Round "1"]\n', '[Round "1"]\n' + line + "\n")
    _assert_same(odd + _game({**_TAGS, "Result": "0-1"}, "1. d4 d5 0-1"), monkeypatch)


_EDIT_PIECES = ["[", "]", "{", "}", "(", ")", '"', "\\", "\n", "\n\n", ";", "%", "$", "1-0", "0-0", "[Event ",
                "\ufeff", " ", "\t", "Nf3", "O-O"]  # fmt: skip


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 400), st.sampled_from(_EDIT_PIECES), st.booleans()), max_size=6))
def test_edited_text_reads_the_same_both_ways(edits: list[tuple[int, str, bool]]) -> None:
    base = "".join(
        _game({**_TAGS, "Round": str(r), "Result": res, "WhiteElo": "2400"}, f"1. e4 e5 2. Nf3 Nc6 {res}")
        for r, res in ((1, "1-0"), (2, "0-1"), (3, "1/2-1/2"))
    )
    text = base
    for pos, piece, delete in edits:
        pos = min(pos, len(text))
        text = text[:pos] + text[pos + 3 :] if delete else text[:pos] + piece + text[pos:]
    with pytest.MonkeyPatch.context() as mp:
        _assert_same(text, mp)


@pytest.mark.parametrize("name", ["olym22.pgn", "world_matches.pgn", "dortmund.pgn"])
def test_reading_the_bytes_undecoded_gives_the_same(name: str) -> None:
    """`read_pgn(None, utf8=bytes)` (what ingest does for a .pgn file without BOM or CR) reads
    UTF-8 bytes as the decoded text would be read, and refuses other bytes with NotUtf8."""
    data = (SHARED_PGN / name).read_bytes()
    decoded = decode_bytes(data)
    if decoded.encoding != "utf-8":
        with pytest.raises(pgn_reader.NotUtf8):
            read_pgn(None, utf8=data)
        return
    a, b = read_pgn(decoded.text), read_pgn(None, utf8=data)
    for part in ("tournaments", "players", "unplayed", "issues", "rejected_reason"):
        assert getattr(a, part) == getattr(b, part), part
    assert list(a.games) == list(b.games)


def test_ingest_reports_the_encoding_whichever_way_the_bytes_were_read(tmp_path: Path) -> None:
    from elopipe.read.parse import parse_source
    from elopipe.read.sources import Source

    text = decode_bytes((SHARED_PGN / "wchcand22.pgn").read_bytes()).text.replace("\r\n", "\n")
    cases = {
        "utf8.pgn": (text.encode(), "utf-8", "LF"),
        "bom.pgn": (b"\xef\xbb\xbf" + text.encode(), "utf-8-sig", "LF"),
        "crlf.pgn": (text.replace("\n", "\r\n").encode(), "utf-8", "CRLF"),
        "latin.pgn": ((text + '\n[Event "Zürich"]\n\n1. e4 *\n').encode("cp1252"), "cp1252", "LF"),
    }
    games = set()
    for name, (data, encoding, newline) in cases.items():
        (tmp_path / name).write_bytes(data)
        ps = parse_source(Source(str(tmp_path / name)))
        assert (ps.encoding, ps.newline, ps.rejected_reason) == (encoding, newline, None), name
        games.add(len(ps.parsed.games) - (name == "latin.pgn"))
    assert games == {56}


@pytest.mark.parametrize("seed", [4, 5])
def test_split_in_parts_joins_to_the_whole(seed: int) -> None:
    """The reader splits a large text in parts so that analysis starts early; a game that takes
    in later tag blocks (an open comment, a blank line inside tags) may cross a part border."""
    rnd = random.Random(seed)
    base = _games(decode_bytes((SHARED_PGN / "tata2018.pgn").read_bytes()).text)
    games = []
    for _ in range(400):
        g = _mutate(rnd.choice(base), rnd)
        roll = rnd.random()
        if roll < 0.1:
            g = g.replace("\n\n", " {open comment\n\n", 1)
        elif roll < 0.2:
            g = g.replace("\n[Round ", "\n\n[Round ", 1)  # ChessBase's blank line inside the tags
        elif roll < 0.25:
            g = g.replace("\n[", "\n", 1)  # a lost bracket
        games.append(g)
    data = ("\n" + "\n".join(games)).encode()
    whole = pgn_split.split_movetexts(data)
    for parts in range(1, 40):
        raw, movetexts = [], []
        for part_raw, part_movetexts in pgn_split.split_parts(data, parts):
            raw += part_raw
            movetexts += part_movetexts
        assert (raw, movetexts) == whole, parts


@pytest.mark.parametrize(
    "fault",
    [
        "\ufeff[Event",  # U+FEFF before a later game's tags (files concatenated with their BOMs)
        "%escape line\n[Event",  # a PGN escape line
        '  [Event "Indented"]\n[Event',  # an indented tag line
        '1/2-1/2 [Event "Glued"]\n[Event',  # lichess: the next game's tags on the result's line
    ],
    ids=["bom", "percent", "indented", "glued"],
)
def test_each_text_fix_is_found_and_read_the_same(fault: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`_prepare(quick=True)` leaves these fixes out; the raw games show them and the text is
    prepared again, so both paths still agree."""
    games = [_game({**_TAGS, "Round": str(r), "Result": "1-0"}, "1. e4 e5 2. Qh5 Nc6 1-0") for r in range(1, 5)]
    text = "".join(games)
    cut = text.index("[Event", len(games[0]) + len(games[1]))
    text = text[:cut] + fault + text[cut + len("[Event") :]
    fast = _assert_same(text, monkeypatch)
    assert len(fast.games) >= 4


@pytest.mark.parametrize("fix", ["%escape line\n", ' [Event "Indented"]\n'])
@pytest.mark.parametrize("bad_byte_at", ["last game", "fix line"])
def test_bytes_that_are_not_utf8_are_refused_whatever_the_fixes(
    fix: str, bad_byte_at: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by a hostile test: with a text fix in an early part and a cp1252 byte in a later
    part (or on the fixed line itself), the undecoded bytes were taken for UTF-8 and the whole
    file was lost. `read_pgn(None, utf8=...)` must refuse them (ingest then decodes as cp1252)."""
    monkeypatch.setattr(pgn_split, "COLUMN_CHUNK_GAMES", 50)
    games = [_game({**_TAGS, "Round": str(r), "Result": "1-0"}, "1. e4 e5 2. Qh5 Nc6 1-0") for r in range(1, 201)]
    data = (fix + "".join(games)).encode()
    if bad_byte_at == "last game":
        cut = data.rindex(b'[Black "C, D"]')
        data = data[:cut] + b'[Black "M\xfcller, D"]' + data[cut + len(b'[Black "C, D"]') :]
    else:
        data = data.replace(fix.encode(), fix.encode().replace(b"\n", b" \xfc\n"), 1)
    with pytest.raises(pgn_reader.NotUtf8):
        read_pgn(None, utf8=data)


@pytest.mark.parametrize("indent", [" ", "  ", "\t ", " \t  "])
def test_a_tag_section_indented_by_any_blanks_is_its_own_game(indent: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a hostile test: a game whose tag lines were indented by two blanks or more was
    read as movetext of the game before (one game lost, a result conflict on the other): only one
    blank was looked for. Both paths read every game, with its own result."""
    games = [_game({**_TAGS, "Round": str(r), "Result": "1-0"}, "1. e4 e5 2. Qh5 Nc6 1-0") for r in range(1, 5)]
    games[2] = _game({**_TAGS, "Round": "3", "Result": "0-1"}, "1. e4 e5 2. Qh5 Nc6 0-1")
    games[2] = "".join(indent + line if line.startswith("[") else line for line in games[2].splitlines(True))
    fast = _assert_same("".join(games), monkeypatch)
    assert len(fast.games) == 4
    assert sorted((g.round, g.result) for g in fast.games) == [(1, "1-0"), (2, "1-0"), (3, "0-1"), (4, "1-0")]
