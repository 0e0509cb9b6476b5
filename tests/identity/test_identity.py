"""Player identity (issue 7): name forms, match order, context, no-merge rule, officer decisions."""

from __future__ import annotations

import datetime as dt
import hashlib
from decimal import Decimal

import duckdb
import pytest

from elopipe.identity import decisions
from elopipe.identity.decisions import IdentityError
from elopipe.identity.suspects import suspects
from elopipe.ingest.loader import load_parsed_source
from elopipe.read.names import fold, name_key, name_key_sql, names_compatible
from elopipe.read.parse import ParsedSource
from elopipe.read.records import GameRec, ParsedFile, PlayerRec, TournamentRec
from elopipe.read.sources import Source
from tests.helpers.schema_store import schema_connect

D0, D1 = dt.date(2024, 1, 5), dt.date(2024, 1, 7)


def _con() -> duckdb.DuckDBPyConnection:
    con = schema_connect()
    return con


def _pgn(event: str, names: list[tuple[str, int | None]], pairs=((0, 1, 1, "1-0"),), start=D0, end=D1, **kw):
    """A PGN-like parsed file: one tournament, players (name, FIDE ID), games (white, black, round, result)."""
    players = [PlayerRec(i, 1, n, fide_id=f, **kw.get("extra", {}).get(i, {})) for i, (n, f) in enumerate(names)]
    games = [
        GameRec(
            1,
            w,
            b,
            r,
            round=rnd,
            white_score=Decimal(1 if r == "1-0" else 0),
            black_score=Decimal(0 if r == "1-0" else 1),
        )
        for w, b, rnd, r in pairs
    ]
    return ParsedFile(
        "pgn", tournaments=[TournamentRec(1, name=event, start_date=start, end_date=end)], players=players, games=games
    )


def _load(con, parsed: ParsedFile, path: str):
    sha = hashlib.sha256(repr(parsed).encode()).hexdigest()
    res = load_parsed_source(con, ParsedSource(Source(path), sha, 100, parsed.format, "utf-8", "LF", parsed))
    assert res.status == "loaded", res.reason
    return res


def _players(con) -> list[tuple]:
    return con.execute(
        "SELECT player_id, name, fide_id FROM players WHERE merged_into IS NULL ORDER BY name"
    ).fetchall()


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Carlsen, Magnus", "Magnus Carlsen"),
        ("Carlsen,Magnus", "CARLSEN Magnus"),
        ("Carlsen, Magnus", "carlsen  ,  magnus."),
        ("Grünfeld, Ernst", "Grunfeld Ernst"),
        ("Brøndum, Søren", "Brondum, Soren"),
        ("Weiß, Max", "Weiss, Max"),
        ("Duda, Jan-Krzysztof", "Jan Krzysztof Duda"),
        ("O'Brien, Seán", "OBrien, Sean"),
    ],
)
def test_name_forms_share_one_key(a: str, b: str) -> None:
    assert name_key(a) == name_key(b)


def test_fold_letters_nfkd_does_not_decompose() -> None:
    assert fold("Øystein Łukasz Æbelø Straße") == "oystein lukasz aebelo strasse"


@pytest.mark.parametrize(
    ("written", "folded"),
    [
        ("Smith, John", "smith, john"),  # already folded once lower-cased: returned as it is
        ("smith john paul", "smith john paul"),
        ("Smith,John", "smith,john"),
        ("Smith ,  John ", "smith , john"),
        (" smith", "smith"),
        ("Smith-Jones, J.", "smith jones, j"),
        ("O'Brien_2, Sean", "obrien 2, sean"),
        ("Smith,, John", "smith,, john"),
    ],
)
def test_fold_of_ascii_names_folded_or_not(written: str, folded: str) -> None:
    assert fold(written) == folded


def test_sql_name_key_equals_python_name_key() -> None:
    names = [
        "Carlsen, Magnus",
        "Weiß, Max",
        "Brøndum, Søren",
        "Müller-Lüdenscheidt, Jörg",
        "O'Brien, Seán",
        "Łasocki, Đorđe",
    ]
    con = duckdb.connect()
    got = [con.execute(f"SELECT {name_key_sql('?')}", [n]).fetchone()[0] for n in names]
    assert got == [name_key(n) for n in names]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("Carlsen,M", "Carlsen, Magnus", True),
        ("Duda,J", "Duda, Jan-Krzysztof", True),
        ("Duda, J.-K.", "Duda, Jan-Krzysztof", True),
        ("Nakamura,Hi", "Nakamura, Hikaru", True),
        ("Carlsen,M", "Carlsen, Henrik", False),  # initial contradicts
        ("Li, Chao", "Li, Chaoyang", False),  # a 4-letter prefix is a name, not an initial
        ("Carlsen", "Carlsen, Magnus", False),  # a surname alone is not enough
        ("Carlsen, Magnus", "Carlsen, Magnus", False),  # equal keys: the exact rule, not this one
    ],
)
def test_abbreviated_names(a: str, b: str, expected: bool) -> None:
    assert names_compatible(name_key(a), name_key(b)) is expected
    assert names_compatible(name_key(b), name_key(a)) is expected


@pytest.mark.parametrize("full_first", [True, False])
def test_initials_link_within_the_event_in_either_order(full_first: bool) -> None:
    con = _con()
    full = _pgn("Open X 2024", [("Carlsen, Magnus", 1503014), ("Duda, Jan-Krzysztof", 1170546)])
    short = _pgn("Open X 2024", [("Carlsen,M", None), ("Duda,J", None)])
    for i, parsed in enumerate([full, short] if full_first else [short, full]):
        _load(con, parsed, f"/v/f{i}.pgn")
    assert _players(con) == [
        (_players(con)[0][0], "Carlsen, Magnus", 1503014),
        (_players(con)[1][0], "Duda, Jan-Krzysztof", 1170546),
    ]
    rules = dict(
        con.execute(
            "SELECT name_as_written, match_rule FROM player_aliases WHERE name_as_written LIKE '%,_'"
        ).fetchall()
    )
    if full_first:
        assert rules == {"Carlsen,M": "initials_context", "Duda,J": "initials_context"}
    conf = con.execute("SELECT min(confidence) FROM player_aliases").fetchone()[0]
    assert conf is not None and 0 < conf <= 1


def test_initials_not_linked_when_two_players_fit() -> None:
    con = _con()
    _load(con, _pgn("Open X 2024", [("Carlsen, Magnus", 1503014), ("Carlsen, Martin", 9999999)]), "/v/a.pgn")
    _load(con, _pgn("Open X 2024", [("Carlsen,M", None), ("Duda,J", None)]), "/v/b.pgn")
    names = [p[1] for p in _players(con)]
    assert names.count("Carlsen,M") == 1  # a player of its own
    reasons = {(s["reason"], s["name_a"], s["name_b"]) for s in suspects(con)}
    assert any(r == "abbreviated_name" and "Carlsen,M" in (a, b) for r, a, b in reasons)


def test_initials_not_linked_outside_the_event() -> None:
    con = _con()
    _load(con, _pgn("Open X 2024", [("Carlsen, Magnus", 1503014), ("Duda, Jan-Krzysztof", 1170546)]), "/v/a.pgn")
    other = _pgn("Club Y", [("Carlsen,M", None), ("Duda,J", None)], start=dt.date(2019, 3, 1), end=dt.date(2019, 3, 1))
    _load(con, other, "/v/b.pgn")
    assert len(_players(con)) == 4


def test_different_fide_ids_are_never_merged() -> None:
    con = _con()
    _load(con, _pgn("Open X 2024", [("Smith, John", 100), ("Doe, Jane", None)]), "/v/a.pgn")
    _load(con, _pgn("Open X 2024", [("Smith, John", 200), ("Doe, Jane", None)]), "/v/b.pgn")
    smiths = [p for p in _players(con) if p[1] == "Smith, John"]
    assert sorted(p[2] for p in smiths) == [100, 200]
    with pytest.raises(IdentityError, match="never merged"):
        decisions.merge_players(con, smiths[0][0], smiths[1][0], "test")


def test_match_order_fide_id_then_national_id_then_birth_year_then_federation() -> None:
    con = _con()
    base = ParsedFile(
        "trf",
        tournaments=[TournamentRec(1, name="A", start_date=D0, end_date=D1)],
        players=[
            PlayerRec(1, 1, "Martin, Paul", national_id="K59857", start_rank=1),
            PlayerRec(2, 1, "Martin, Paul", birth_year=1990, start_rank=2),
            PlayerRec(3, 1, "Martin, Paul", federation="BEL", start_rank=3),
            PlayerRec(4, 1, "Rossi, Marco", fide_id=77, start_rank=4),
        ],
    )
    _load(con, base, "/v/a.trf")
    assert len(_players(con)) == 4  # three namesakes in one TRF are three people
    later = ParsedFile(
        "trf",
        tournaments=[TournamentRec(1, name="B", start_date=dt.date(2024, 6, 1), end_date=dt.date(2024, 6, 2))],
        players=[
            PlayerRec(1, 1, "MARTIN Paul", national_id="K59857", start_rank=1),
            PlayerRec(2, 1, "Paul Martin", birth_year=1990, start_rank=2),
            PlayerRec(3, 1, "Martin,Paul", federation="BEL", start_rank=3),
            PlayerRec(4, 1, "Rossi, M.", fide_id=77, start_rank=4),
        ],
    )
    _load(con, later, "/v/b.trf")
    assert len(_players(con)) == 4
    rules = con.execute(
        "SELECT name_as_written, match_rule, confidence FROM player_aliases a JOIN tournaments t USING (tournament_id)"
        " WHERE t.name = 'B' ORDER BY name_as_written"
    ).fetchall()
    assert rules == [
        ("MARTIN Paul", "national_id", 0.98),
        ("Martin,Paul", "name_federation", 0.8),
        ("Paul Martin", "name_birth_year", 0.9),
        ("Rossi, M.", "fide_id", 1.0),
    ]


def test_birth_year_contradiction_blocks_a_name_link() -> None:
    con = _con()
    _load(con, _pgn("A", [("Kim, Lee", None), ("X, Y", None)], extra={0: {"birth_year": 1970}}), "/v/a.pgn")
    _load(con, _pgn("B", [("Kim, Lee", None), ("Z, Q", None)], extra={0: {"birth_year": 2005}}), "/v/b.pgn")
    assert [p[1] for p in _players(con)].count("Kim, Lee") == 2


def _games_of(con, pid: int) -> int:
    return con.execute("SELECT count(*) FROM games WHERE white_id = ? OR black_id = ?", [pid, pid]).fetchone()[0]


def test_merge_survives_reingest_of_a_corrected_file() -> None:
    con = _con()
    _load(con, _pgn("Open A", [("Kasparov, Garry", 4100018), ("Short, Nigel", None)]), "/v/a.pgn")
    _load(
        con,
        _pgn(
            "Club B",
            [("Kasparow, Garri", None), ("Karpov, A", None)],
            start=dt.date(2023, 1, 1),
            end=dt.date(2023, 1, 1),
        ),
        "/v/b.pgn",
    )
    ids = dict((n, i) for i, n, _ in _players(con))
    kept, other = ids["Kasparov, Garry"], ids["Kasparow, Garri"]
    decisions.merge_players(con, kept, other, "same person, transliteration", decided_by="arbiter")
    assert _games_of(con, kept) == 2 and _games_of(con, other) == 0
    # the same pair again, either way round: one player already, said so (the reverse merge was
    # refused as "both have an entry in tournament ...": its own entries)
    for pair in ((other, kept), (kept, other)):
        with pytest.raises(decisions.IdentityError, match=f"one player already: {other} was merged into {kept}$"):
            decisions.merge_players(con, *pair, "again")
    rules = con.execute(
        "SELECT DISTINCT match_rule, confidence FROM player_aliases WHERE name_as_written = 'Kasparow, Garri'"
    ).fetchall()
    assert rules == [("manual_merge", 1.0)]  # the link is the officer's decision
    # the corrected club file (one more game) replaces the old one: the merge still holds
    corrected = _pgn(
        "Club B", [("Kasparow, Garri", None), ("Karpov, A", None)], pairs=((0, 1, 1, "1-0"), (1, 0, 2, "0-1")),
        start=dt.date(2023, 1, 1), end=dt.date(2023, 1, 1),
    )  # fmt: skip
    _load(con, corrected, "/v/b.pgn")
    assert _games_of(con, kept) == 3
    assert _games_of(con, other) == 0
    row = con.execute("SELECT action, decided_by, reason FROM player_merges WHERE merged_id = ?", [other]).fetchone()
    assert row == ("merge", "officer:arbiter", "same person, transliteration")


def test_split_survives_reingest_of_a_corrected_file() -> None:
    con = _con()
    # two people written the same way, wrongly taken as one by the name rule
    _load(con, _pgn("Open A", [("Nielsen, Peter", None), ("A, B", None)]), "/v/a.pgn")
    _load(
        con,
        _pgn(
            "Junior C", [("Nielsen, Peter", None), ("C, D", None)], start=dt.date(2022, 5, 1), end=dt.date(2022, 5, 2)
        ),
        "/v/c.pgn",
    )
    pid = next(i for i, n, _ in _players(con) if n == "Nielsen, Peter")
    assert _games_of(con, pid) == 2
    tid = con.execute("SELECT tournament_id FROM tournaments WHERE name = 'Junior C'").fetchone()[0]
    new = decisions.split_player(con, pid, "a junior namesake", tournament_ids=[tid])
    assert _games_of(con, pid) == 1 and _games_of(con, new) == 1
    corrected = _pgn(
        "Junior C", [("Nielsen, Peter", None), ("C, D", None)], pairs=((0, 1, 1, "1-0"), (1, 0, 2, "1-0")),
        start=dt.date(2022, 5, 1), end=dt.date(2022, 5, 2),
    )  # fmt: skip
    _load(con, corrected, "/v/c.pgn")
    assert _games_of(con, pid) == 1
    assert _games_of(con, new) == 2
    # the other side of the split too: a corrected 'Open A' stays with the original player
    again = _pgn("Open A", [("Nielsen, Peter", None), ("A, B", None)], pairs=((0, 1, 1, "0-1"), (1, 0, 2, "0-1")))
    _load(con, again, "/v/a.pgn")
    assert _games_of(con, pid) == 2
    assert _games_of(con, new) == 2
    assert len([p for p in _players(con) if p[1] == "Nielsen, Peter"]) == 2
    # the automatic consolidation does not undo an officer's split
    assert con.execute("SELECT merged_into FROM players WHERE player_id = ?", [new]).fetchone()[0] is None


def test_split_requires_criteria_and_a_match() -> None:
    con = _con()
    _load(con, _pgn("Open A", [("Nielsen, Peter", None), ("A, B", None)]), "/v/a.pgn")
    pid = _players(con)[0][0]
    with pytest.raises(IdentityError):
        decisions.split_player(con, pid, "no criteria")
    with pytest.raises(IdentityError):
        decisions.split_player(con, pid, "nothing matches", name="Somebody Else")


def test_a_split_naming_a_tournament_that_does_not_exist_moves_nothing() -> None:
    """A mistyped --tournament id must not split off the player's whole history (nor record a
    decision that would take every later game too)."""
    con = _con()
    _load(con, _pgn("Open A", [("Nielsen, Peter", 7), ("A, B", None)]), "/v/a.pgn")
    pid = next(i for i, n, _ in _players(con) if n == "Nielsen, Peter")
    before = _games_of(con, pid)
    with pytest.raises(IdentityError, match="no tournament 99999 in the store"):
        decisions.split_player(con, pid, "typo", tournament_ids=[99999])
    assert _games_of(con, pid) == before
    assert con.execute("SELECT count(*) FROM player_merges").fetchone()[0] == 0
    with pytest.raises(IdentityError, match="is written 'Somebody Else'") as err:
        decisions.split_player(con, pid, "nothing matches", name="Somebody Else")
    assert "{" not in str(err.value)  # a sentence, not a Python dict


def test_a_stored_split_with_no_events_matches_no_entry() -> None:
    """A split decision whose criteria list no event (as a mistyped id once stored) takes nothing
    when it is re-applied to new files."""
    con = _con()
    _load(con, _pgn("Open A", [("Nielsen, Peter", 7), ("A, B", None)]), "/v/a.pgn")
    pid = next(i for i, n, _ in _players(con) if n == "Nielsen, Peter")
    assert decisions._split_targets(con, pid, {"events": []}) == []
    assert decisions._split_targets(con, pid, {}) != []


def test_suspects_show_same_name_and_birth_year_with_two_fide_ids() -> None:
    con = _con()
    _load(con, _pgn("A", [("Ivanov, Ivan", 11), ("X, Y", None)], extra={0: {"birth_year": 1980}}), "/v/a.pgn")
    _load(con, _pgn("B", [("Ivanov, Ivan", 22), ("Z, Q", None)], extra={0: {"birth_year": 1980}}), "/v/b.pgn")
    found = [s for s in suspects(con) if s["reason"] == "same_name_birth_year"]
    assert len(found) == 1
    assert "different FIDE IDs" in found[0]["evidence"]


def test_suspects_show_one_national_id_on_two_players() -> None:
    con = _con()
    _load(
        con,
        _pgn("A", [("Roux, Paul", None), ("X, Y", None)], extra={0: {"national_id": "K59857", "birth_year": 1963}}),
        "/v/a.pgn",
    )
    _load(
        con,
        _pgn("B", [("Roux, Paul", None), ("Z, Q", None)], extra={0: {"national_id": "K59857", "birth_year": 1965}}),
        "/v/b.pgn",
    )
    assert [p[1] for p in _players(con)].count("Roux, Paul") == 2  # the birth years contradict
    found = [s for s in suspects(con) if s["reason"] == "same_national_id"]
    assert len(found) == 1 and "1963" in found[0]["evidence"] and "1965" in found[0]["evidence"]


def _facts(con) -> list[tuple]:
    """Every player's facts, by name (ids depend on the order of the files)."""
    return con.execute(
        "SELECT name, fide_id, title, federation, sex, birth_year FROM players WHERE merged_into IS NULL ORDER BY ALL"
    ).fetchall()


_Y19, _Y22, _Y23 = (dt.date(2019, 3, 1), dt.date(2019, 3, 5)), (dt.date(2022, 6, 1), dt.date(2022, 6, 9)), (
    dt.date(2023, 4, 1), dt.date(2023, 4, 2))  # fmt: skip


# forward, backward, and the two sources of the 2022 event each way round
@pytest.mark.parametrize("order", [(0, 1, 2, 3), (3, 2, 1, 0), (1, 3, 0, 2), (2, 0, 3, 1)], ids=str)
def test_title_and_federation_come_from_the_latest_entry_giving_them_whatever_the_order(order) -> None:
    """Ding is IM in 2019 and GM in 2022; in 2023 a PGN without titles. Two sources of the 2022
    event disagree (IM, GM): the higher counts. Sahin plays for TUR in 2019 and for GER from
    2022 (a transfer). The first file loaded decides nothing."""
    files = [
        (_pgn("Open 2019", [("Ding, Liren", 8603677), ("Sahin, Ali", 44100001)], start=_Y19[0], end=_Y19[1],
              extra={0: {"title": "IM", "federation": "CHN", "birth_year": 1992},
                     1: {"federation": "TUR", "sex": "m"}}), "/v/a.pgn"),
        (_pgn("Masters 2022", [("Ding, Liren", 8603677), ("Sahin, Ali", 44100001)], start=_Y22[0], end=_Y22[1],
              extra={0: {"title": "GM"}, 1: {"federation": "GER", "title": "FM"}}), "/v/b.pgn"),
        (_pgn("Masters 2022", [("Ding, Liren", 8603677), ("Sahin, Ali", 44100001)], start=_Y22[0], end=_Y22[1],
              extra={0: {"title": "IM", "federation": "CHN"}}), "/v/b2.pgn"),
        (_pgn("Rapid 2023", [("Ding, Liren", 8603677), ("Sahin, Ali", 44100001)], start=_Y23[0], end=_Y23[1]),
         "/v/c.pgn"),
    ]  # fmt: skip
    con = _con()
    for i in order:
        _load(con, *files[i])
    assert _facts(con) == [
        ("Ding, Liren", 8603677, "GM", "CHN", None, 1992),
        ("Sahin, Ali", 44100001, "FM", "GER", "m", None),
    ]


def test_merge_and_split_recompute_the_players_facts() -> None:
    """A merge gives the kept player the title the merged one's entries give; a split takes the
    title with the entries that give it, and the player it leaves keeps none of it."""
    con = _con()
    _load(con, _pgn("Open A", [("Kasparov, Garry", 4100018), ("Short, Nigel", None)]), "/v/a.pgn")
    _load(con, _pgn("Club B", [("Kasparow, Garri", None), ("Karpov, A", None)], start=_Y22[0], end=_Y22[1],
                    extra={0: {"title": "GM", "federation": "RUS"}}), "/v/b.pgn")  # fmt: skip
    ids = {n: i for i, n, _ in _players(con)}
    kept = ids["Kasparov, Garry"]
    decisions.merge_players(con, kept, ids["Kasparow, Garri"], "same person")
    row = con.execute("SELECT title, federation FROM players WHERE player_id = ?", [kept]).fetchone()
    assert row == ("GM", "RUS")
    tid = con.execute("SELECT tournament_id FROM tournaments WHERE name = 'Club B'").fetchone()[0]
    new = decisions.split_player(con, kept, "a namesake after all", tournament_ids=[tid])
    got = dict(con.execute("SELECT player_id, title FROM players WHERE player_id IN (?, ?)", [kept, new]).fetchall())
    assert got == {kept: None, new: "GM"}
