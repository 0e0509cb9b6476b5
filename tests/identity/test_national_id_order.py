"""One national ID with two birth years is one person, whatever order the files come in.

As ../shared/data has it: the ICU number 5963 (written in the TRF's FIDE-ID column, below 100000:
a national ID) is 'O'Connell, Denis' born 1963 in one Irish file, 1965/06/06 in another, and a
third file gives no birth year. Before, the second file with a birth year made a second player,
and the third file joined whichever was stored first: who he was, and every Elo and Glicko-2
list after, depended on the ingestion order. A national ID names one person within a federation,
as a FIDE ID does: the two birth years are a data error the officer sees (`players suspects`,
both files named), not two people. The stored birth year is the facts' rule (the largest),
never the first file's."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from elopipe.identity import consolidate, known
from elopipe.identity.suspects import suspects
from elopipe.ingest.driver import ingest_paths
from elopipe.rating.run import rate
from elopipe.read.records import PlayerRec
from elopipe.store.connect import open_reader, open_writer
from tests.helpers.store_rows import db_rows
from tests.helpers.trf_build import block, row

# (file name, start and end day, Denis's birth column, his opponents (name, national ID, rating))
_EVENTS = (
    ("galway.trf", "2011/03/04", "2011/03/06", "1963", (("Walsh, Ann", 7001, 1600), ("Burke, Tom", 7002, 1500))),
    ("junior.trf", "2011/04/02", "2011/04/03", "1965/06/06", (("Walsh, Ann", 7001, 1600), ("Kane, Joe", 7003, 1400))),
    ("bunratty.trf", "2011/02/25", "2011/02/27", "", (("Burke, Tom", 7002, 1500), ("Kane, Joe", 7003, 1400))),
)
DENIS = "O'Connell, Denis"


def _event_trf(name: str, start: str, end: str, birth: str, opponents: tuple[tuple[str, int, int], ...]) -> str:
    """A three-player round robin (two rounds played by each): Denis (national ID 5963, rated
    1570) beats the first opponent and loses to the second, who beat each other once."""
    (n1, i1, r1), (n2, i2, r2) = opponents
    born = {7001: "1980", 7002: "1970", 7003: "1995"}  # each opponent's, the same in every file
    rows = [
        row(1, DENIS, [block(2, "w", "1"), block(3, "b", "0")], rating=1570, fide_id=5963, birth=birth, points="1.0"),
        row(2, n1, [block(1, "b", "0"), block(3, "w", "0")], rating=r1, fide_id=i1, birth=born[i1], points="0.0"),
        row(3, n2, [block(1, "w", "1"), block(2, "b", "1")], rating=r2, fide_id=i2, birth=born[i2], points="2.0"),
    ]
    head = [f"012 {name}", "022 Ireland", "032 IRL", f"042 {start}", f"052 {end}", "122 90+30"]
    return "\n".join([*head, *rows]) + "\n"


def _files(folder: Path) -> list[Path]:
    out = []
    for name, start, end, birth, opponents in _EVENTS:
        p = folder / name
        p.write_text(_event_trf(name.removesuffix(".trf").title() + " 2011", start, end, birth, opponents))
        out.append(p)
    return out


def _store(folder: Path, files: list[Path], one_batch: bool) -> Path:
    db = folder / "s.duckdb"
    for batch in [files] if one_batch else [[f] for f in files]:
        assert ingest_paths(batch, db).exit_code == 0
    with open_writer(db) as con:
        for system in ("elo", "glicko2"):
            rate(con, system)
    return db


def _outcome(db: Path) -> tuple[object, ...]:
    """What must not depend on the order: which entries are one player (each file's start ranks
    that share a player, as sets of (file, start rank)), the players' facts, and every rating
    list line (player ids left out: they are drawn in ingestion order)."""
    with open_reader(db) as con:
        entries = con.execute(
            "SELECT tp.player_id, regexp_replace(f.path, '.*/', ''), tp.start_rank FROM tournament_players tp"
            " JOIN source_files f USING (file_id)"
        ).fetchall()
        facts = con.execute(
            "SELECT name, national_id, birth_year FROM players WHERE merged_into IS NULL ORDER BY ALL"
        ).fetchall()
        lists = con.execute("SELECT * EXCLUDE (player_id) FROM v_rating_lists ORDER BY ALL").fetchall()
    by_player: dict[int, set[tuple[str, int]]] = {}
    for pid, fname, rank in entries:
        by_player.setdefault(pid, set()).add((fname, rank))
    return frozenset(frozenset(s) for s in by_player.values()), facts, lists


@pytest.mark.parametrize("one_batch", [False, True], ids=["file by file", "one batch"])
def test_one_national_id_with_two_birth_years_gives_the_same_players_and_lists_in_every_order(
    tmp_path: Path, one_batch: bool
) -> None:
    files = _files(tmp_path)
    outcomes = {}
    for n, order in enumerate(itertools.permutations(range(len(files)))):
        folder = tmp_path / f"o{n}"
        folder.mkdir()
        outcomes[order] = _outcome(_store(folder, [files[i] for i in order], one_batch))
    first = outcomes[(0, 1, 2)]
    for order, got in outcomes.items():
        assert got[0] == first[0], f"order {order}: other players"
        assert got[1] == first[1], f"order {order}: other facts"
        assert got[2] == first[2], f"order {order}: other lists"
    # one person: his three entries on one player, born 1965 (the largest year written)
    denis = {("galway.trf", 1), ("junior.trf", 1), ("bunratty.trf", 1)}
    assert denis in first[0]
    assert (DENIS, "5963", 1965) in first[1]


def test_the_two_birth_years_are_listed_for_the_officer_with_both_files(tmp_path: Path) -> None:
    files = _files(tmp_path)
    db = tmp_path / "s.duckdb"
    assert ingest_paths(files, db).exit_code == 0
    assert db_rows(db, "SELECT count(*) FROM players WHERE national_id = '5963' AND merged_into IS NULL") == [(1,)]
    with open_reader(db) as con:
        found = [s for s in suspects(con) if s["reason"] == "birth_years_differ"]
    assert len(found) == 1, found
    ev = found[0]["evidence"]
    assert found[0]["name_a"] == DENIS and found[0]["player_a"] == found[0]["player_b"]
    assert "1963" in ev and "1965" in ev and "galway.trf" in ev and "junior.trf" in ev
    assert "national ID 5963" in ev


def test_a_store_made_before_the_rule_is_mended_when_a_file_touches_the_player(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store whose resolution made two players of one national ID (the rule before: a birth
    year that differs refused the link) becomes the store made from scratch once a file names
    one of them: consolidation merges the two (rule 'national_id')."""
    galway, junior, bunratty = _files(tmp_path)
    old = tmp_path / "old"
    old.mkdir()
    db = old / "s.duckdb"
    assert ingest_paths([galway], db).exit_code == 0
    with monkeypatch.context() as m:  # the rule before, and no consolidation by national ID
        m.setattr(known.Index, "national_holder", _holder_before)
        m.setattr(consolidate, "_same_national_id_pairs", lambda con, touched: [])
        assert ingest_paths([junior], db).exit_code == 0
    assert db_rows(db, "SELECT count(*) FROM players WHERE national_id = '5963' AND merged_into IS NULL") == [(2,)]
    assert ingest_paths([bunratty], db).exit_code == 0
    with open_writer(db) as con:
        for system in ("elo", "glicko2"):
            rate(con, system)
    new = tmp_path / "new"
    new.mkdir()
    assert _outcome(db) == _outcome(_store(new, [galway, junior, bunratty], one_batch=False))
    merges = db_rows(db, "SELECT decided_by FROM player_merges")
    assert merges == [("rule:national_id",)]


def _holder_before(self: known.Index, p: PlayerRec) -> known.Known | None:
    """`Index.national_holder` as it was: the first holder loaded, refused on any birth year."""
    cands = self.by_nid.get(p.national_id or "", [])
    return cands[0] if cands and not self.conflicts(cands[0], p) else None
