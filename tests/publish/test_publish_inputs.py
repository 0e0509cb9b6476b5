"""A page whose stored inputs did not change is not made again (elopipe.publish.inputs), and the
folder then holds, byte for byte, what a publish of the same store into an empty folder writes.
Real TRF files from ../shared/data, rated under FIDE rules; a new file is added between two
publishes, as `elopipe run` and the drop folder add them."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from elopipe.publish.inputs import list_digests, player_digests, report_digests
from elopipe.publish.lists import list_dates
from elopipe.publish.manifest import recording
from elopipe.publish.outputs import publish_outputs, top_players
from elopipe.publish.reports import rated_tournaments
from tests.helpers.paths import SHARED_DATA
from tests.helpers.published import file_stamps, published_files
from tests.helpers.trf_build import GROS, gros_played_rounds

TRF = SHARED_DATA / "trf"
# a Spanish open and an Irish season whose players have FIDE IDs (ranked lists, player pages with
# charts); the added file is a later Irish event of some of the same players: it changes ratings,
# players' facts and later lists
FIRST = [
    GROS,
    "irl_armstrong_cup_2010_11_team_league_013.trf",
    "irl_bunratty_masters_2011_crlf.trf",
]
ADDED = "irl_kilkenny_masters_2011_gms_national_ids.trf"


def _build(db: Path, files: list[str]) -> None:
    from elopipe.ingest.driver import ingest_paths
    from elopipe.rating.run import rate
    from elopipe.store.connect import open_writer

    # Gros 2010's 4 played rounds as a complete event (the file stands in progress)
    ingest_paths([gros_played_rounds(db.parent) if f == GROS else TRF / f for f in files], db)
    with open_writer(db) as con:
        rate(con, "fide")


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the store of `FIRST`, a copy of it to which `ADDED` was then added and rated)."""
    folder = tmp_path_factory.mktemp("inputs")
    before, after = folder / "before.duckdb", folder / "after.duckdb"
    _build(before, FIRST)
    shutil.copyfile(before, after)
    _build(after, [ADDED])
    return before, after


def _publish(db: Path, out: Path) -> tuple[list[Path], int, int]:
    """Publish every list of `db` into `out`: (paths, files written, files kept)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        with recording(out) as manifest:
            paths = publish_outputs(con, "fide", out, list_dates(con, "fide"), workers=2)
            return paths, manifest.written, manifest.kept
    finally:
        con.close()


def test_a_publish_after_a_new_file_holds_what_a_fresh_publish_writes(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    before, after = stores
    out = tmp_path / "out"
    _publish(before, out)
    stamps = file_stamps(out)

    paths, _, _ = _publish(after, out)
    fresh_paths, _, _ = _publish(after, tmp_path / "fresh")
    fresh = published_files(tmp_path / "fresh")
    held = published_files(out)
    assert fresh, "the fresh publish wrote nothing"
    # every file a fresh publish writes is in the folder with the same bytes; the folder may hold
    # more (a page of the first store that the second no longer makes is never removed)
    assert {name: held.get(name) for name in fresh} == fresh
    assert sorted(p.relative_to(out) for p in paths) == sorted(p.relative_to(tmp_path / "fresh") for p in fresh_paths)
    # some pages were not made again: their files kept their inode and time
    kept = [name for name, stamp in file_stamps(out).items() if stamps.get(name) == stamp]
    assert any(name.startswith("reports/fide/") for name in kept)


def test_publishing_an_unchanged_store_again_makes_no_page(stores: tuple[Path, Path], tmp_path: Path) -> None:
    _, after = stores
    out = tmp_path / "out"
    paths, written, _ = _publish(after, out)
    assert written == len(set(paths)) > 0

    import elopipe.publish.outputs as outputs

    def never(*args: object) -> list[Path]:
        raise AssertionError(f"a page was made again: {args[1:3]}")

    real = (outputs.write_report, outputs.write_player_page, outputs.write_list)
    outputs.write_report = outputs.write_player_page = outputs.write_list = never  # type: ignore[assignment]
    try:
        again, written, kept = _publish(after, out)
    finally:
        outputs.write_report, outputs.write_player_page, outputs.write_list = real
    assert written == 0
    assert sorted(set(again)) == sorted(set(paths))
    assert kept >= len(set(paths)) - 2  # all but the indexes, which are made each time


def test_a_page_whose_file_was_touched_is_made_again(stores: tuple[Path, Path], tmp_path: Path) -> None:
    _, after = stores
    out = tmp_path / "out"
    _publish(after, out)
    report = next(p for p in sorted((out / "reports" / "fide").glob("*.players.csv")))
    content = report.read_bytes()
    report.write_bytes(b"edited by hand\n")
    _publish(after, out)
    assert report.read_bytes() == content


@pytest.mark.parametrize(
    ("table", "change"),
    [
        ("players", "UPDATE players SET title = COALESCE(title, '') || 'x' WHERE player_id = $pid"),
        ("players", "UPDATE players SET name = name || ' Jr' WHERE player_id = $pid"),
        ("rating_changes", "UPDATE rating_changes SET rc = rc + 1 WHERE player_id = $pid"),
        ("tournament_players", "UPDATE tournament_players SET rating_in_file = 1 WHERE player_id = $pid"),
        ("rating_lists", "UPDATE rating_lists SET rating = rating + 1 WHERE player_id = $pid"),
        ("tournaments", "UPDATE tournaments SET city = 'Ennis' WHERE tournament_id = $tid"),
    ],
)
def test_every_stored_input_of_a_page_is_in_its_digest(
    stores: tuple[Path, Path], tmp_path: Path, table: str, change: str
) -> None:
    _, after = stores
    db = tmp_path / "store.duckdb"
    shutil.copyfile(after, db)

    def digests() -> tuple[dict[int, str], dict[int, str], dict[object, str]]:
        con = duckdb.connect(str(db), read_only=True)
        try:
            dates = list_dates(con, "fide")
            top = top_players(con, "fide", dates)
            return (
                report_digests(con, "fide", rated_tournaments(con, "fide")),
                player_digests(con, "fide", top),
                dict(list_digests(con, "fide", dates, {})),
            )
        finally:
            con.close()

    reports, players, lists = digests()
    con = duckdb.connect(str(db))
    try:
        pid = top_players(con, "fide", list_dates(con, "fide"))[0]
        tid = con.execute("SELECT min(tournament_id) FROM tournament_ratings WHERE player_id = ?", [pid]).fetchall()[0][
            0
        ]
        con.execute(change, {"tid": tid} if "$tid" in change else {"pid": pid})
    finally:
        con.close()
    reports2, players2, lists2 = digests()
    assert reports2[tid] != reports[tid], f"a change to {table} left the report's digest as it was"
    if table != "rating_changes":  # a player page reads no game's Rc
        assert players2[pid] != players[pid], f"a change to {table} left the player page's digest as it was"
    if table in ("players", "rating_lists"):
        assert lists2 != lists
    # the pages the change does not reach keep their digests
    assert any(reports2[t] == reports[t] for t in reports if t != tid)


def _report_digests(db: Path) -> dict[int, str]:
    """{tournament id: report digest} of every FIDE-rated tournament of the store `db`."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return report_digests(con, "fide", rated_tournaments(con, "fide"))
    finally:
        con.close()


def test_the_run_that_wrote_a_row_is_no_input(stores: tuple[Path, Path], tmp_path: Path) -> None:
    """A later rating run rewrites an event's rate of play and skips under its own run_id: the
    report shows neither run, so its digest stays (else every report would be made again)."""
    _, after = stores
    db = tmp_path / "store.duckdb"
    shutil.copyfile(after, db)

    before = _report_digests(db)
    con = duckdb.connect(str(db))
    try:
        assert con.execute("SELECT count(*) FROM rate_of_play WHERE system = 'fide'").fetchall()[0][0] > 0
        con.execute("UPDATE rate_of_play SET run_id = run_id + 100")
        con.execute("UPDATE rating_skips SET run_id = run_id + 100")
    finally:
        con.close()
    assert _report_digests(db) == before


def test_an_earlier_report_in_the_folder_follows_a_change_of_its_players(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    """A publish of the latest list alone still makes again the reports an earlier publish left
    in the folder when what they show changed (here a player's title, as a new file can give
    it); the others keep their files."""
    _, after = stores
    db = tmp_path / "store.duckdb"
    shutil.copyfile(after, db)
    out = tmp_path / "out"
    _publish(db, out)
    con = duckdb.connect(str(db))
    try:
        dates = list_dates(con, "fide")
        first, latest = dates[0], dates[-1]
        tid, pid = con.execute(
            "SELECT tr.tournament_id, min(tr.player_id) FROM tournament_ratings tr"
            " JOIN tournament_players tp USING (tournament_id, player_id) JOIN players p USING (player_id)"
            " WHERE tr.list_date = ? AND tr.system = 'fide' AND tp.title IS NULL AND p.title IS NULL"
            " AND tr.tournament_id NOT IN"
            " (SELECT tournament_id FROM tournament_ratings WHERE list_date = ? AND system = 'fide')"
            " GROUP BY tr.tournament_id ORDER BY tr.tournament_id LIMIT 1",
            [first, latest],
        ).fetchall()[0]
        con.execute("UPDATE players SET title = 'FM' WHERE player_id = ?", [pid])
    finally:
        con.close()
    report = next((out / "reports" / "fide").glob(f"{tid}_*.players.csv"))
    old = report.read_bytes()
    stamps = file_stamps(out)

    con = duckdb.connect(str(db), read_only=True)
    try:
        publish_outputs(con, "fide", out, [latest], workers=2)
    finally:
        con.close()
    fresh = tmp_path / "fresh"
    _publish(db, fresh)
    assert report.read_bytes() == (fresh / report.relative_to(out)).read_bytes() != old
    assert b",FM," in report.read_bytes()
    # an earlier report none of whose players changed kept its file
    kept = [n for n, s in file_stamps(out).items() if n.startswith("reports/fide/") and stamps.get(n) == s]
    assert kept


def test_a_player_first_rated_after_the_event_leaves_its_report_as_it_was(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    """A report shows whether each player was rated before the event's first day: a player
    still unrated then, who gets a first rating on a later list (as a new file brings), leaves
    the report's digest as it was (else a new file would make again every report of its newly
    rated players); a first rating before the first day changes it."""
    _, after = stores
    db = tmp_path / "store.duckdb"
    shutil.copyfile(after, db)

    con = duckdb.connect(str(db))
    try:
        # a participant of a rated event who has no FIDE rating on any list
        tid, pid = con.execute(
            """
            SELECT tp.tournament_id, min(tp.player_id) FROM tournament_players tp
            WHERE tp.tournament_id IN (SELECT tournament_id FROM tournament_ratings WHERE system = 'fide')
              AND tp.player_id NOT IN (SELECT player_id FROM rating_lists WHERE system = 'fide' AND rating IS NOT NULL)
            GROUP BY 1 ORDER BY 1 LIMIT 1
            """
        ).fetchall()[0]
    finally:
        con.close()
    before = _report_digests(db)

    def rate_on(day: str) -> None:
        con = duckdb.connect(str(db))
        try:
            con.execute(
                "INSERT INTO rating_lists (system, list_date, player_id, rating, games) VALUES ('fide', ?, ?, 1500, 0)",
                [day, pid],
            )
        finally:
            con.close()

    rate_on("2099-01-01")
    assert _report_digests(db)[tid] == before[tid]
    rate_on("1990-01-01")
    assert _report_digests(db)[tid] != before[tid]
