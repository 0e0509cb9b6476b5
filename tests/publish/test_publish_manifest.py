"""Publishing writes only what changed (elopipe.publish.manifest), on every core with the same
files as one worker (elopipe.publish.workers), and never touches the user's own files. A store
of real TRF files from ../shared/data, rated under FIDE rules."""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

import duckdb
import pytest

from elopipe.publish.kept_lines import set_aside_line
from elopipe.publish.lists import list_dates
from elopipe.publish.manifest import KEPT, MANIFEST, recording
from elopipe.publish.outputs import publish_outputs
from elopipe.publish.workers import Ticker
from elopipe.runtime.words import bar
from tests.helpers.paths import SHARED_DATA
from tests.helpers.published import file_stamps, published_files

# two events whose players have FIDE IDs (ranked lists, top players' pages and charts); the tests
# publish the last lists, the second event's and those before it
FILES = ["esp_torneo_san_viator_2018_vega_137players.trf", "fra_sharly_trf26_individual_nrs_240_byes.trf"]
LISTS = 4


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from elopipe.ingest.driver import ingest_paths
    from elopipe.rating.run import rate
    from elopipe.store.connect import open_writer

    db = tmp_path_factory.mktemp("manifest") / "real.duckdb"
    ingest_paths([SHARED_DATA / "trf" / f for f in FILES], db)
    with open_writer(db) as con:
        rate(con, "fide")
    return db


@pytest.fixture
def db(store: Path, tmp_path: Path) -> Path:
    """A copy of the store this test may change."""
    copy = tmp_path / "store.duckdb"
    shutil.copyfile(store, copy)
    return copy


def _dates(db: Path) -> list[dt.date]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        dates = list_dates(con, "fide")[-LISTS:]
    finally:
        con.close()
    assert len(dates) == LISTS, "the store must hold several lists"
    return dates


def _publish(db: Path, out: Path, dates: list[dt.date], workers: int | None = None) -> tuple[list[Path], int]:
    """Publish `dates` into `out`; (the paths published, how many files were written)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        with recording(out) as manifest:
            paths = publish_outputs(con, "fide", out, dates, workers=workers)
            return paths, manifest.written
    finally:
        con.close()


def test_a_parallel_publish_writes_the_files_of_a_serial_one(db: Path, tmp_path: Path) -> None:
    dates = _dates(db)
    serial, _ = _publish(db, tmp_path / "serial", dates, workers=1)
    parallel, _ = _publish(db, tmp_path / "parallel", dates, workers=3)
    files = published_files(tmp_path / "serial")
    assert any(name.startswith("reports/fide/") for name in files) and any(n.endswith(".svg") for n in files)
    assert published_files(tmp_path / "parallel") == files
    # the same paths, in the same order (the order a serial publish writes them)
    assert [p.relative_to(tmp_path / "parallel") for p in parallel] == [
        p.relative_to(tmp_path / "serial") for p in serial
    ]


def test_publishing_unchanged_content_writes_nothing(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    dates = _dates(db)
    paths, written = _publish(db, out, dates)
    assert written == len(set(paths)) > 0
    before, content = file_stamps(out), published_files(out)

    again, written = _publish(db, out, dates)
    assert written == 0
    assert set(again) == set(paths)
    assert file_stamps(out) == before, "a file with unchanged content was written again"
    assert published_files(out) == content

    # a folder without its manifest (published before manifests were kept) is taken over as it is
    (out / MANIFEST).unlink()
    _, written = _publish(db, out, dates)
    assert written == 0 and file_stamps(out) == before
    assert (out / MANIFEST).is_file()


def test_a_changed_list_rewrites_its_files_and_only_what_changed(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    dates = _dates(db)
    _publish(db, out, dates)
    before = file_stamps(out)
    last = dates[-1]
    con = duckdb.connect(str(db))
    try:  # the latest list changes: one player's rating is a point higher
        pid = con.execute(
            "SELECT player_id FROM rating_lists WHERE system = 'fide' AND list_date = ? AND rating IS NOT NULL"
            " ORDER BY player_id LIMIT 1",
            [last],
        ).fetchall()[0][0]
        con.execute(
            "UPDATE rating_lists SET rating = rating + 1 WHERE system = 'fide' AND list_date = ? AND player_id = ?",
            [last, pid],
        )
    finally:
        con.close()

    _, written = _publish(db, out, dates)
    after = file_stamps(out)
    rewritten = {name for name in after if after[name] != before.get(name)}
    stem = f"lists/fide_{last.isoformat()}"
    assert {f"{stem}.{fmt}" for fmt in ("csv", "parquet", "txt", "html")} <= rewritten
    assert written == len(rewritten)
    assert not any(name.startswith(f"lists/fide_{d.isoformat()}") for d in dates[:-1] for name in rewritten)
    # what is in the folder is what a publish into an empty folder writes
    _publish(db, tmp_path / "fresh", dates)
    assert published_files(out) == published_files(tmp_path / "fresh")


def test_the_users_files_in_the_output_folder_are_never_touched(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    dates = _dates(db)
    mine = {
        "notes.txt": b"my notes\n",
        "lists/fide_my-selection.csv": b"name,rating\nme,2000\n",
        "reports/fide/my-report.html": b"<p>mine</p>",
        "players/fide/photo.png": b"\x89PNG not really",
    }
    for name, data in mine.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(data)
    stamps = {name: (out / name).stat() for name in mine}

    _publish(db, out, dates[-2:])
    _publish(db, out, dates)
    _publish(db, out, dates)
    for name, data in mine.items():
        st = (out / name).stat()
        assert (out / name).read_bytes() == data
        assert (st.st_ino, st.st_mtime_ns) == (stamps[name].st_ino, stamps[name].st_mtime_ns), name
    manifest = (out / MANIFEST).read_text(encoding="utf-8")
    assert not any(name in manifest for name in mine), "the manifest records only elopipe's files"


def test_progress_counts_every_job_and_ends_with_the_total() -> None:
    seen: list[tuple[int, int]] = []
    with Ticker(3, lambda done, total: seen.append((done, total)), every=0.0) as ticker:
        for _ in range(3):
            ticker.advance()
    assert seen[-1] == (3, 3) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert bar(5, 20, width=4) == "[#---] 5/20"
    assert bar(0, 0, width=4) == "[####] 0/0"


def test_a_quick_publish_shows_no_progress() -> None:
    seen: list[tuple[int, int]] = []
    with Ticker(2, lambda done, total: seen.append((done, total)), every=3600.0, heartbeat=3600.0) as ticker:
        ticker.advance(2)
    assert seen == []


def test_a_file_changed_by_hand_is_written_again(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    dates = _dates(db)[-1:]
    _publish(db, out, dates)
    target = out / "lists" / f"fide_{dates[0].isoformat()}.csv"
    good = target.read_bytes()
    target.write_bytes(good.replace(b",", b";"))
    os.utime(target, ns=(0, 0))
    _, written = _publish(db, out, dates)
    assert written == 1 and target.read_bytes() == good
    # the hand-edited bytes are not lost: kept under .elopipe-kept with the same name
    assert (out / KEPT / "lists" / target.name).read_bytes() == good.replace(b",", b";")


def test_a_users_file_under_a_name_elopipe_publishes_is_kept_before_it_is_written(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    dates = _dates(db)[-1:]
    name = f"lists/fide_{dates[0].isoformat()}.csv"
    mine = b"my own selection\n"
    (out / "lists").mkdir(parents=True)
    (out / name).write_bytes(mine)
    (out / KEPT / name).parent.mkdir(parents=True)
    (out / KEPT / name).write_bytes(b"kept by an earlier publish\n")
    con = duckdb.connect(str(db), read_only=True)
    try:
        with recording(out) as manifest:
            publish_outputs(con, "fide", out, dates)
    finally:
        con.close()
    assert manifest.set_aside == [(name, f"{KEPT}/{name}.1")]
    assert (out / KEPT / f"{name}.1").read_bytes() == mine
    assert (out / KEPT / name).read_bytes() == b"kept by an earlier publish\n"
    assert (out / name).read_bytes() == published_files(_fresh_publish(db, tmp_path / "fresh", dates))[name]
    assert set_aside_line(manifest.set_aside) == (
        f"1 file elopipe had not written (or one edited by hand) was kept before writing over it: "
        f"{name} -> {KEPT}/{name}.1"
    )
    # elopipe's own file, as it wrote it, is replaced without a copy
    _publish(db, out, dates)
    assert sorted(p.name for p in (out / KEPT / "lists").iterdir()) == [Path(name).name, f"{Path(name).name}.1"]


def _fresh_publish(db: Path, out: Path, dates: list[dt.date]) -> Path:
    _publish(db, out, dates)
    return out


def test_charts_switched_to_svg_leave_no_png_elopipe_wrote_and_keep_the_users(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder an earlier elopipe published with PNG charts, published again with SVG charts,
    holds what a publish into an empty folder writes: the PNGs elopipe wrote are gone (the
    pages embed the new charts), a PNG of the user's is left, and so is one elopipe wrote but
    the user changed since."""
    import elopipe.publish.outputs as outputs

    dates = _dates(db)
    out, edited_out = tmp_path / "out", tmp_path / "edited"
    monkeypatch.setattr(outputs, "PLAYER_CHART", "png")
    for folder in (out, edited_out):
        _publish(db, folder, dates)
    (png,) = (out / "players" / "fide").glob("*.png")
    mine = out / "players" / "fide" / "photo.png"
    mine.write_bytes(b"\x89PNG not really")
    edited = edited_out / png.relative_to(out)
    edited.write_bytes(edited.read_bytes() + b"\n")

    monkeypatch.setattr(outputs, "PLAYER_CHART", "svg")
    for folder in (out, edited_out):
        _publish(db, folder, dates)
    assert sorted((out / "players" / "fide").glob("*.png")) == [mine]
    assert mine.read_bytes() == b"\x89PNG not really"
    assert edited.is_file() and png.with_suffix(".svg").is_file()
    pages = sorted((out / "players" / "fide").glob("*.html"))
    assert pages and all("data:image/svg+xml;base64," in p.read_text(encoding="utf-8") for p in pages)

    _publish(db, tmp_path / "fresh", dates)
    mine.unlink()
    assert published_files(out) == published_files(tmp_path / "fresh")


def test_a_manifest_edited_to_name_files_outside_the_folder_never_removes_them(tmp_path: Path) -> None:
    """The manifest lives in the output folder, which others can write: entries that point out of
    it (`../x`, an absolute path) are not elopipe's files, whatever size and time they record."""
    import json

    from elopipe.publish.manifest import Manifest

    out = tmp_path / "out"
    out.mkdir()
    victims = [tmp_path / "victim.txt", tmp_path / "elsewhere" / "victim2.txt"]
    victims[1].parent.mkdir()
    files: dict[str, list[object]] = {}
    for victim in victims:
        victim.write_text("the user's\n", encoding="utf-8")
        st = victim.stat()
        rel = "../victim.txt" if victim.parent == tmp_path else str(victim)
        files[rel] = ["0" * 40, st.st_size, st.st_mtime_ns]
    inputs = {"player:fide:1": ["forged", list(files)]}
    (out / MANIFEST).write_text(json.dumps({"version": 1, "files": files, "inputs": inputs}), encoding="utf-8")
    manifest = Manifest(out)
    assert manifest.entries == {} and manifest.inputs == {"player:fide:1": ("forged", [])}
    manifest.made("player:fide:1", "new", [])
    assert manifest.stale(list(files)) == []
    assert all(v.read_text(encoding="utf-8") == "the user's\n" for v in victims)


def test_a_link_at_a_published_name_is_kept_as_a_link_and_never_followed(db: Path, tmp_path: Path) -> None:
    out, outside = tmp_path / "out", tmp_path / "outside.csv"
    dates = _dates(db)[-1:]
    name = f"lists/fide_{dates[0].isoformat()}.csv"
    outside.write_bytes(b"not elopipe's, outside the folder\n")
    (out / "lists").mkdir(parents=True)
    (out / name).symlink_to(outside)
    _publish(db, out, dates)
    kept = out / KEPT / name
    assert kept.is_symlink() and os.readlink(kept) == str(outside)
    assert outside.read_bytes() == b"not elopipe's, outside the folder\n"
    assert not (out / name).is_symlink()
    assert (out / name).read_bytes() == published_files(_fresh_publish(db, tmp_path / "fresh", dates))[name]


def test_a_kept_folder_that_leads_elsewhere_is_refused_and_the_users_file_stays(db: Path, tmp_path: Path) -> None:
    from elopipe.publish.atomic import WriteError

    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    dates = _dates(db)[-1:]
    name = f"lists/fide_{dates[0].isoformat()}.csv"
    elsewhere.mkdir()
    (out / "lists").mkdir(parents=True)
    (out / KEPT).symlink_to(elsewhere)
    (out / name).write_bytes(b"mine\n")
    with pytest.raises(WriteError, match="not written by elopipe, and it could not be kept"):
        _publish(db, out, dates)
    assert (out / name).read_bytes() == b"mine\n"
    assert list(elsewhere.iterdir()) == []


def test_a_hand_edited_manifest_never_makes_a_publish_remove_a_users_file_or_a_kept_one(
    db: Path, tmp_path: Path
) -> None:
    import json

    out = tmp_path / "out"
    dates = _dates(db)[-1:]
    _publish(db, out, dates)
    mine, kept = out / "lists" / "mynotes.csv", out / KEPT / "index.html"
    mine.write_bytes(b"my notes\n")
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"kept for the user\n")
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    key = next(k for k in manifest["inputs"] if k.startswith("list:"))
    for path in (mine, kept):
        rel, st = path.relative_to(out).as_posix(), path.stat()
        manifest["files"][rel] = ["00" * 16, st.st_size, st.st_mtime_ns]  # size and time match, bytes do not
        manifest["inputs"][key][1].append(rel)
    manifest["inputs"][key][0] = "ff" * 16  # the page is made again: its old files are looked at
    (out / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    _publish(db, out, dates)
    assert mine.read_bytes() == b"my notes\n" and kept.read_bytes() == b"kept for the user\n"


def test_a_publish_holds_the_folders_lock_and_leaves_the_users_look_alike_temporary_files(
    db: Path, tmp_path: Path
) -> None:
    import fcntl

    from elopipe.publish.atomic import remove_stale
    from elopipe.publish.manifest import LOCK

    out = tmp_path / "out"
    out.mkdir()
    notes = out / ".notes.elopipe-tmp-abc"
    notes.write_bytes(b"my notes\n")
    assert remove_stale([out]) == 0 and notes.read_bytes() == b"my notes\n"
    with recording(out):
        fd = os.open(out / LOCK, os.O_RDWR)
        try:  # another publish into this folder waits for this one
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
    fd = os.open(out / LOCK, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free once the publish ended
    finally:
        os.close(fd)


def test_a_relative_link_at_a_published_name_is_kept_pointing_where_it_pointed(db: Path, tmp_path: Path) -> None:
    """A user's link `lists/NAME -> ../../precious.csv`, moved under `.elopipe-kept/lists/` as it
    was, pointed one folder off and dangled (hostile tester): it is made again there to the same file."""
    out, precious = tmp_path / "out", tmp_path / "precious.csv"
    dates = _dates(db)[-1:]
    name = f"lists/fide_{dates[0].isoformat()}.csv"
    precious.write_bytes(b"the user's\n")
    (out / "lists").mkdir(parents=True)
    (out / name).symlink_to(os.path.join("..", "..", "precious.csv"))
    _publish(db, out, dates)
    kept = out / KEPT / name
    assert kept.is_symlink() and not os.path.isabs(os.readlink(kept))
    assert kept.resolve() == precious.resolve() and kept.read_bytes() == b"the user's\n"
    assert precious.read_bytes() == b"the user's\n" and not (out / name).is_symlink()


@pytest.mark.parametrize("kind", ["note", "link"])
def test_a_users_file_under_the_manifests_name_is_kept_before_the_manifest_is_saved(
    db: Path, tmp_path: Path, kind: str
) -> None:
    """A note, or a link, of the user's named `.elopipe-manifest.json` was written over (the link
    replaced) in silence (hostile tester): it is kept under `.elopipe-kept/` first, as any file of
    the user's under a name elopipe writes."""
    out, outside = tmp_path / "out", tmp_path / "outside.txt"
    out.mkdir()
    outside.write_text("the user's\n", encoding="utf-8")
    if kind == "note":
        (out / MANIFEST).write_text("my own notes, not JSON\n", encoding="utf-8")
    else:
        (out / MANIFEST).symlink_to(outside)
    _publish(db, out, _dates(db)[-1:])
    kept = out / KEPT / MANIFEST
    if kind == "note":
        assert kept.read_text(encoding="utf-8") == "my own notes, not JSON\n"
    else:
        assert kept.is_symlink() and os.readlink(kept) == str(outside)
    assert outside.read_text(encoding="utf-8") == "the user's\n" and not (out / MANIFEST).is_symlink()
    assert (out / MANIFEST).read_text(encoding="utf-8").startswith('{"version":')
