"""One game in two sources under two spellings (issue 25, section 1): the players become one,
the game counts once, the link is listed with its evidence and a split undoes it; two real games
are never merged. On real files of ../shared/data and variants made from them."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.identity.suspects import suspects
from elopipe.ingest.driver import ingest_paths
from elopipe.read.names import name_key, same_surname_initials
from tests.helpers.paths import SHARED_DATA
from tests.helpers.store_rows import db_rows

CARLSEN = SHARED_DATA / "pgn" / "Carlsen.pgn"
NORWAY = SHARED_DATA / "pgn" / "norway_chess_2022_classical.pgn"


def _games(path: Path) -> list[str]:
    """The games of a PGN file, each with its tags and moves."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return [g for g in re.split(r"\n(?=\[Event )", text) if g.strip()]


def _carlsen_norway_2022(tmp_path: Path) -> Path:
    """Carlsen.pgn's games of Norway Chess 2022 (TWIC style: 'So,W', 'Carlsen,M'), as a file."""
    out = tmp_path / "carlsen_norway_2022.pgn"
    out.write_text("\n\n".join(g for g in _games(CARLSEN) if '[Event "10th Norway Chess 2022"]' in g) + "\n")
    return out


def _twic_style(name: str) -> str:
    """'So, Wesley' -> 'So,W'; 'Wang, Hao' -> 'Wang,H': the surname and the first initial."""
    surname, _, given = name.partition(",")
    return f"{surname.strip()},{given.strip()[:1]}" if given.strip() else name


def _abbreviated_variant(tmp_path: Path, event: str = "Altibox Norway Chess") -> Path:
    """The real Norway Chess 2022 file with every player written 'Surname,I', under another event
    name (as TWIC names the events its own way): no rule but the games' evidence links them."""
    text = NORWAY.read_text(encoding="utf-8")
    text = re.sub(r'\[(White|Black) "([^"]*)"\]', lambda m: f'[{m[1]} "{_twic_style(m[2])}"]', text)
    text = re.sub(r'\[Event "[^"]*"\]', f'[Event "{event}"]', text)
    out = tmp_path / "norway_twic.pgn"
    out.write_text(text, encoding="utf-8")
    return out


def _counted_twice(db: Path) -> int:
    """Pairs of canonical games (what the ratings read) with the same moves and date."""
    return db_rows(
        db,
        "SELECT count(*) FROM canonical_games a JOIN canonical_games b ON a.movetext_hash = b.movetext_hash"
        " AND a.game_date = b.game_date AND a.game_id < b.game_id",
    )[0][0]


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("So,W", "So, Wesley", True),
        ("Nakamura,Hi", "Nakamura, Hikaru", True),
        ("Meier,Geo", "Meier, Georg", True),
        ("Anand,V", "Anand, Viswanathan", True),
        ("Van Wely,L", "Van Wely, Loek", True),
        ("Wang Hao", "Wang,H", True),
        ("So,W", "Sokolov, W", False),
        ("Wang,Hao", "Wang,Hua", False),
        ("Smith,J", "Smith, Anne", False),
        ("So", "So, Wesley", False),
        ("Kosten, Tony", "Kosten, Anthony", True),
        ("Fox,A", "Fox, Tony", True),
        ("Dvoretsky, Misha", "Dvoretsky, Mikhail", True),
        ("Fox, Tony", "Fox, Robert", False),
        ("Smith, Bob", "Smith, Bill", False),
        ("Brown, Ted", "Brown, Edward", True),
        ("Brown, Edward", "Brown, Theodore", False),
        ("Moe, Henry", "Moe, Halvard", False),
        ("Ivanov, Alexander", "Ivanov, Alexandra", False),
    ],
)
def test_surname_and_initials_agree(a: str, b: str, same: bool) -> None:
    assert same_surname_initials(a, b) is same
    assert same_surname_initials(b, a) is same


def test_carlsen_pgn_and_the_organisers_file_count_norway_2022_once(tmp_path: Path) -> None:
    """The issue's case: Carlsen.pgn writes 'So,W', the organiser's file 'So, Wesley'."""
    db = tmp_path / "s.duckdb"
    extract = _carlsen_norway_2022(tmp_path)
    ingest_paths([extract, NORWAY], db)
    so = db_rows(db, "SELECT player_id, merged_into FROM players WHERE name_key IN ('so w', 'so wesley') ORDER BY 1")
    live = {pid for pid, into in so if into is None}
    assert len(live) == 1, so
    assert _counted_twice(db) == 0
    # every game of Carlsen's extract is a duplicate of the organiser's game: only the 45 count
    assert db_rows(db, "SELECT count(*) FROM canonical_games")[0][0] == len(_games(NORWAY))
    reason = db_rows(db, "SELECT reason FROM player_merges WHERE decided_by = 'rule:same_game' AND merged_id IN"
                " (SELECT player_id FROM players WHERE name_key = 'so w')")  # fmt: skip
    assert reason and "'So,W' / 'So, Wesley'" in reason[0][0] and "10th Norway Chess 2022" in reason[0][0]


def test_abbreviated_variant_merges_players_lists_the_link_and_split_undoes_it(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest_paths([NORWAY, _abbreviated_variant(tmp_path)], db)
    n = len(_games(NORWAY))
    assert db_rows(db, "SELECT count(*) FROM games")[0][0] == 2 * n
    assert db_rows(db, "SELECT count(*) FROM canonical_games")[0][0] == n
    # ten players, each once: the abbreviated spellings were merged into the full ones
    assert db_rows(db, "SELECT count(*) FROM players WHERE merged_into IS NULL")[0][0] == 10
    con = duckdb.connect(str(db), read_only=True)
    rows = [r for r in suspects(con) if r["reason"] == "same_game_link"]
    con.close()
    so = next(r for r in rows if r["name_a"] == "So, Wesley")
    assert so["name_b"] == "So,W"
    assert so["evidence"].startswith("one game seen in two sources under two spellings: ")
    assert "'So,W'" in so["evidence"] and "'So, Wesley'" in so["evidence"] and "Altibox Norway Chess" in so["evidence"]
    undo = f'`elopipe players split {so["player_a"]} --name "So,W" --reason ...` undoes it'
    assert undo in so["evidence"]
    res = CliRunner().invoke(
        app, ["players", "split", str(so["player_a"]), "--name", "So,W", "--reason", "test", "--db", str(db)]
    )
    assert res.exit_code == 0, res.output
    # two players again, the link gone from the list, and each source's games on its own player
    assert len(db_rows(db, "SELECT player_id FROM players WHERE merged_into IS NULL AND name_key LIKE 'so %'")) == 2
    con = duckdb.connect(str(db), read_only=True)
    assert not [r for r in suspects(con) if r["reason"] == "same_game_link" and r["name_b"] == "So,W"]
    con.close()
    assert db_rows(db, "SELECT count(*) FROM canonical_games")[0][0] > n


def test_the_split_survives_a_new_ingest_of_the_same_games(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest_paths([NORWAY, _abbreviated_variant(tmp_path)], db)
    kept = db_rows(db, "SELECT player_id FROM players WHERE name = 'So, Wesley'")[0][0]
    CliRunner().invoke(app, ["players", "split", str(kept), "--name", "So,W", "--reason", "t", "--db", str(db)])
    again = _abbreviated_variant(tmp_path / "..", event="Norway Chess TWIC")
    ingest_paths([again], db)
    live = db_rows(db, "SELECT player_id FROM players WHERE merged_into IS NULL AND name_key IN ('so w', 'so wesley')")
    assert len(live) == 2


def _short_game_file(path: Path, white: str, black: str, event: str) -> Path:
    """The first game of the real Norway file cut to its first 6 moves, drawn: a quick draw."""
    game = _games(NORWAY)[0]
    tags, _, moves = game.partition("\n\n")
    short = " ".join(re.findall(r"\d+\.\s*\S+\s+\S+", moves)[:6]) + " 1/2-1/2"
    tags = re.sub(r'\[White "[^"]*"\]', f'[White "{white}"]', tags)
    tags = re.sub(r'\[Black "[^"]*"\]', f'[Black "{black}"]', tags)
    tags = re.sub(r'\[Result "[^"]*"\]', '[Result "1/2-1/2"]', tags)
    tags = re.sub(r'\[Event "[^"]*"\]', f'[Event "{event}"]', tags)
    path.write_text(f"{tags}\n\n{short}\n", encoding="utf-8")
    return path


def test_two_short_identical_games_between_different_surnames_stay_two(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    a = _short_game_file(tmp_path / "a.pgn", "Carlsen, Magnus", "Wang, Hao", "Club Open A")
    b = _short_game_file(tmp_path / "b.pgn", "Karlsson, Martin", "Wong, Hau", "Club Open B")
    ingest_paths([a, b], db)
    assert db_rows(db, "SELECT count(*) FROM canonical_games")[0][0] == 2
    assert db_rows(db, "SELECT count(*) FROM player_merges")[0][0] == 0
    assert db_rows(db, "SELECT count(*) FROM players WHERE merged_into IS NULL")[0][0] == 4


def test_one_short_game_is_not_enough_to_merge(tmp_path: Path) -> None:
    """One quick draw under compatible names is no proof on its own (the same two players can
    repeat it elsewhere): the players stay two."""
    db = tmp_path / "s.duckdb"
    a = _short_game_file(tmp_path / "a.pgn", "Carlsen, Magnus", "Wang, Hao", "Club Open A")
    b = _short_game_file(tmp_path / "b.pgn", "Carlsen,M", "Wang,H", "Club Open B")
    ingest_paths([a, b], db)
    assert not db_rows(db, "SELECT * FROM player_merges WHERE decided_by = 'rule:same_game'")


def test_ingest_says_re_rate_needed_when_a_rated_game_was_counted_twice(tmp_path: Path) -> None:
    from elopipe.rating.run import rate

    db = tmp_path / "s.duckdb"
    ingest_paths([_abbreviated_variant(tmp_path)], db)
    con = duckdb.connect(str(db))
    rate(con, "fide")
    con.close()
    rated = db_rows(db, "SELECT count(DISTINCT game_id), min(list_date) FROM rating_changes WHERE system = 'fide'")
    assert rated[0][0] > 0
    res = CliRunner().invoke(app, ["ingest", str(NORWAY), "--db", str(db)])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert f"re-rate needed: fide lists from {rated[0][1]} change" in out
    assert f"run `elopipe rate --system fide --db {db}`" in out


def test_names_the_link_joined_agree_by_surname(tmp_path: Path) -> None:
    """Every automatic same-game merge joins spellings of one surname (no real game merged)."""
    db = tmp_path / "s.duckdb"
    ingest_paths([NORWAY, _abbreviated_variant(tmp_path)], db)
    pairs = db_rows(
        db,
        "SELECT k.name, o.name FROM player_merges m JOIN players k ON k.player_id = m.kept_id"
        " JOIN players o ON o.player_id = m.merged_id WHERE m.decided_by = 'rule:same_game'",
    )
    assert len(pairs) >= 9
    for kept, other in pairs:
        assert same_surname_initials(kept, other), (kept, other)
        assert name_key(kept) != name_key(other)


def _with_fide_ids(src: Path, out: Path, first_id: int) -> Path:
    """`src` with a WhiteFideId/BlackFideId tag for every player: `first_id` + the rank of his
    surname among the file's surnames (so that two spellings of one player get one ID)."""
    text = src.read_text(encoding="utf-8")
    surnames = sorted({m[1].split(",")[0].strip() for m in re.finditer(r'\[(?:White|Black) "([^"]*)"\]', text)})
    ids = {s: first_id + i for i, s in enumerate(surnames)}

    def tag(m: re.Match[str]) -> str:
        return f'{m[0]}\n[{m[1]}FideId "{ids[m[2].split(",")[0].strip()]}"]'

    out.write_text(re.sub(r'\[(White|Black) "([^"]*)"\]', tag, text), encoding="utf-8")
    return out


@pytest.mark.parametrize(("organiser_ids", "merged"), [(None, True), (1_000_000, False)])
def test_fide_ids_on_one_side_link_and_other_ids_on_both_sides_keep_apart(
    tmp_path: Path, organiser_ids: int | None, merged: bool
) -> None:
    """The abbreviated variant's players carry FIDE IDs. Against the organiser's file without
    IDs, the games still make its players one; against the organiser's file whose players carry
    other FIDE IDs, they are other people: no merge, every game counted on its own."""
    variant = _with_fide_ids(_abbreviated_variant(tmp_path), tmp_path / "variant_ids.pgn", 2_000_000)
    organiser = NORWAY if organiser_ids is None else _with_fide_ids(NORWAY, tmp_path / "norway_ids.pgn", organiser_ids)
    db = tmp_path / "s.duckdb"
    ingest_paths([organiser, variant], db)
    n = len(_games(NORWAY))
    assert db_rows(db, "SELECT count(*) FROM players WHERE fide_id >= 2000000")[0][0] == 10
    merges = db_rows(db, "SELECT count(*) FROM player_merges WHERE decided_by = 'rule:same_game'")[0][0]
    live = db_rows(db, "SELECT count(*) FROM players WHERE merged_into IS NULL")[0][0]
    canonical = db_rows(db, "SELECT count(*) FROM canonical_games")[0][0]
    if merged:
        assert (merges >= 9, live, canonical) == (True, 10, n)
    else:
        assert (merges, live, canonical) == (0, 20, 2 * n)


def test_one_event_in_two_trfs_with_a_familiar_given_name_counts_once(tmp_path: Path) -> None:
    """The organiser's TRF writes 'Kosten, Tony' and 'Fox, Anthony'; another copy of the event
    writes 'Kosten, Anthony' and 'Fox, Tony': two players each, and their games twice, before."""
    src = SHARED_DATA / "trf" / "irl_bunratty_masters_2011_crlf.trf"
    text = src.read_bytes()
    renamed = text.replace(b"Kosten, Tony    ", b"Kosten, Anthony ").replace(b"Fox, Anthony ", b"Fox, Tony    ")
    assert renamed != text and len(renamed) == len(text)
    (tmp_path / "copy.trf").write_bytes(renamed)
    db = tmp_path / "s.duckdb"
    ingest_paths([src], db)
    once = db_rows(db, "SELECT count(*) FROM canonical_games")[0][0]
    ingest_paths([tmp_path / "copy.trf"], db)
    assert db_rows(db, "SELECT count(*) FROM canonical_games")[0][0] == once
    live = db_rows(
        db,
        "SELECT name FROM players WHERE merged_into IS NULL AND (name LIKE 'Kosten%' OR name LIKE 'Fox%') ORDER BY 1",
    )
    assert len(live) == 2, live


def test_files_holding_each_game_twice_pair_as_the_games_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch whose games repeat (an archive concatenated) is joined a class of equal games at a
    time (`same_game._SQL_GROUPED`): its rows are those of the query on every game (`_SQL`), and
    the players merge as they do from one copy of each file."""
    from elopipe.identity import same_game
    from elopipe.identity.nearby import near_tournaments

    calls: list[tuple[bool, int, bool]] = []  # (grouped, rows, grouped rows == rows)
    pairs_of = same_game.same_game_pairs

    def spy(con: duckdb.DuckDBPyConnection, file_ids: list[int]) -> list[same_game.Link]:
        files = sorted(set(file_ids))
        tids = [
            r[0]
            for r in con.execute("SELECT tournament_id FROM tournaments WHERE file_id = ANY(?)", [files]).fetchall()
        ]
        params = {"files": files, "near": sorted(near_tournaments(con, tids)), "short": same_game.SHORT_PLIES}
        repeated = con.execute(same_game._ANY_PAIR_SQL, {k: params[k] for k in ("files", "near")}).fetchall()[0][1]
        rows = con.execute(same_game._SQL, params).fetchall()
        grouped = same_game.game_rows(con.execute(same_game._SQL_GROUPED, params).fetchall())
        calls.append((bool(repeated), len(rows), grouped == rows))
        return pairs_of(con, file_ids)

    monkeypatch.setattr(same_game, "same_game_pairs", spy)
    once, twice = tmp_path / "once", tmp_path / "twice"
    twice.mkdir()
    once.mkdir()
    variant = _abbreviated_variant(once)
    for path in (NORWAY, variant):
        (twice / path.name).write_text(2 * (path.read_text(encoding="utf-8") + "\n\n"), encoding="utf-8")
    merges = "SELECT kept_id, merged_id, decided_by FROM player_merges ORDER BY 1, 2"
    for folder, files in ((once, [NORWAY, variant]), (twice, [twice / NORWAY.name, twice / variant.name])):
        for path in files:  # one ingest a file: the second meets the first's games
            assert ingest_paths([path], folder / "s.duckdb").exit_code == 0
    assert [c for c in calls if c[0]] and all(c[2] for c in calls) and max(c[1] for c in calls) > 0, calls
    assert db_rows(twice / "s.duckdb", merges) == db_rows(once / "s.duckdb", merges)
    assert db_rows(twice / "s.duckdb", "SELECT count(*) FROM canonical_games")[0][0] == len(_games(NORWAY))
