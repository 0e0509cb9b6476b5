"""Hostile and odd inputs to the ingest: nothing crashes, nothing is silently passed over."""

import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.read import sources
from elopipe.read.parse import parse_source
from elopipe.read.sources import Source
from tests.helpers.paths import REPO
from tests.helpers.store_rows import db_rows

DATA = REPO.parent / "shared" / "data"
PGN = DATA / "pgn" / "wchcand22.pgn"
runner = CliRunner()


def test_utf16_and_utf32_files_are_decoded(tmp_path):
    text = PGN.read_text(encoding="utf-8")
    for enc in ("utf-16", "utf-32"):
        f = tmp_path / f"cand_{enc}.pgn"
        f.write_bytes(text.encode(enc))  # Python writes the BOM
        ps = parse_source(Source(str(f)))
        assert ps.rejected_reason is None, ps.rejected_reason
        assert ps.encoding.startswith(enc) and len(ps.parsed.games) == 56


def test_a_stray_nul_byte_is_removed_and_reported_not_fatal(tmp_path):
    data = PGN.read_bytes()
    cut = data.index(b"[Event", 20000)
    f = tmp_path / "nul.pgn"
    f.write_bytes(data[:cut] + b"\x00" + data[cut:])
    ps = parse_source(Source(str(f)))
    assert ps.rejected_reason is None and len(ps.parsed.games) == 56
    issue = ps.parsed.issues[0]
    assert issue.code == "nul_bytes_removed" and issue.line == data[:cut].count(b"\n") + 1


def test_a_nul_byte_in_a_trf_row_keeps_its_columns(tmp_path):
    """A TRF's fields are columns: the NUL becomes a space (removed, it shifted the rest of the
    row by one: the 2100 rating read as 210, the player's games as unplayed; a hostile tester)."""
    from tests.helpers.trf_build import block, row, trf

    text = trf(
        row(1, "Alpha, Anton", [block(2, "w", "1")], rating=2100, points="1.0"),
        row(2, "Beta, Bernd", [block(1, "b", "0")], rating=2000),
    )
    f = tmp_path / "nul.trf"
    f.write_bytes(text.replace("Alpha, Anton", "Alpha\x00Anton ").encode())
    ps = parse_source(Source(str(f)))
    assert ps.rejected_reason is None
    (game,) = ps.parsed.games
    assert game.played and game.result == "1-0"
    assert ps.parsed.players[0].rating == 2100 and ps.parsed.players[0].name == "Alpha Anton"
    issue = ps.parsed.issues[0]
    assert issue.code == "nul_bytes_removed" and "replaced by spaces" in issue.message


def test_mostly_nul_is_binary(tmp_path):
    f = tmp_path / "zeros.pgn"
    f.write_bytes(b'[Event "x"]\n' + b"\x00" * 5000)
    assert parse_source(Source(str(f))).rejected_reason == "binary file (NUL bytes)"


def test_oversized_stream_is_rejected_without_reading_it_all(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "MAX_BYTES", 1000)
    ps = parse_source(Source(str(PGN)))
    assert ps.sha256 is None and "larger than 1,000 bytes" in ps.rejected_reason


def test_devices_and_pipes_are_rejected_not_read(tmp_path):
    fifo = tmp_path / "pipe.pgn"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        ps = parse_source(Source(str(path)))
        assert "not a regular file" in ps.rejected_reason


def test_file_changing_while_read_is_rejected(tmp_path, monkeypatch):
    f = tmp_path / "growing.pgn"
    f.write_bytes(PGN.read_bytes())
    real = sources.Source._open

    class Growing:  # the stream read as the file grows: a line is appended after the first read
        def __init__(self, fh):
            self.fh, self.grown = fh, False

        def read(self, n=-1):
            data = self.fh.read(n)
            if not self.grown:
                self.grown = True
                with open(f, "ab") as out:
                    out.write(b'\n[Event "more"]\n')
            return data

    @contextmanager
    def append_while_reading(self):
        with real(self) as (fh, before):
            yield Growing(fh), before

    monkeypatch.setattr(sources.Source, "_open", append_while_reading)
    assert "changed while it was being read" in parse_source(Source(str(f))).rejected_reason


def _without_root_reads() -> list[str]:
    """The command prefix that runs a command without root's right to read any file (CAP_DAC_*),
    so that a folder made unreadable is unreadable to it; [] when not root."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root reads any folder, and setpriv is missing to drop that right")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}"]


def test_unreadable_folder_is_recorded_and_the_rest_loaded(tmp_path):
    """A folder that cannot be listed is recorded as rejected and the rest lands: the search of it
    for elopipe's output mark raised PermissionError, and the whole ingest stopped (exit 1, no
    store) on a line naming a file the user does not have."""
    inbox = tmp_path / "in"
    (inbox / "locked").mkdir(parents=True)
    (inbox / "good.pgn").write_bytes(PGN.read_bytes())
    (inbox / "locked").chmod(0)
    db = tmp_path / "s.duckdb"
    elopipe = str(Path(sys.executable).parent / "elopipe")
    try:
        done = subprocess.run(
            [*_without_root_reads(), elopipe, "ingest", "-q", str(inbox), "--db", str(db)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    finally:
        (inbox / "locked").chmod(0o755)
    assert done.returncode == 1, done.stderr
    assert ".elopipe-manifest.json" not in done.stdout + done.stderr
    rows = db_rows(db, "SELECT path, status FROM source_files ORDER BY path")
    assert [(Path(p).name, s) for p, s in rows] == [("good.pgn", "loaded"), ("locked", "rejected")]


def test_dangling_link_is_named_and_folder_sources_are_recorded_as_rejected(tmp_path):
    inbox = tmp_path / "in"
    inbox.mkdir()
    (inbox / "gone.pgn").symlink_to(tmp_path / "nowhere.pgn")
    (inbox / "good.pgn").write_bytes(PGN.read_bytes())
    db = tmp_path / "s.duckdb"
    # a link inside a folder is never followed (issue 12): named even with -q, never read
    r = runner.invoke(app, ["ingest", "-q", str(inbox), "--db", str(db)])
    assert r.exit_code == 0, r.output
    assert f"skipped {inbox / 'gone.pgn'}: a symbolic link" in " ".join(r.output.split())
    rows = db_rows(db, "SELECT path, status FROM source_files ORDER BY path")
    assert [(Path(p).name, s) for p, s in rows] == [("good.pgn", "loaded")]
    # named on the command line, the dangling link is a missing path (a usage error)
    r = runner.invoke(app, ["ingest", "-q", str(inbox / "gone.pgn"), "--db", str(db)])
    assert r.exit_code == 2 and "no such file or folder" in r.output
    # an unreadable folder is a source that fails when read
    ps = parse_source(Source(str(inbox)))
    assert "folder" in ps.rejected_reason


def test_a_gzip_file_cut_short_lands_as_far_as_it_goes(tmp_path):
    """A .gz whose download stopped: every game before the cut lands, and the file is partial
    with the reason; the same cut in a plain PGN loaded its games, the .gz was rejected whole (a
    hostile tester). (A zip cut short has no directory: nothing in it can be found.)"""
    import gzip

    packed = gzip.compress(PGN.read_bytes())
    f = tmp_path / "cut.pgn.gz"
    f.write_bytes(packed[: len(packed) * 3 // 4])
    ps = parse_source(Source(str(f)))
    assert ps.rejected_reason is None and ps.parsed is not None
    assert 10 < len(ps.parsed.games) < 56
    (cut,) = [i for i in ps.parsed.issues if i.code == "compressed_cut_short"]
    assert cut.severity == "error" and "read as far as it goes" in cut.message
    # a file cut before any byte decompresses is unreadable, as before
    f.write_bytes(packed[:12])
    assert parse_source(Source(str(f))).rejected_reason is not None


def test_unreadable_compressed_files_say_why_in_plain_words(tmp_path):
    """A file that cannot be decompressed, or a tar archive, is rejected with a reason an officer
    reads, never the decompressor's or Python's message (`Not a gzipped file (b'no')`, `Compressed
    file ended before the end-of-stream marker was reached`, `[Errno 13]`), nor 'binary file' for a
    tar archive of PGN files (a hostile tester)."""
    import bz2
    import gzip
    import io
    import tarfile

    text = PGN.read_bytes()
    cases = {
        "fake.pgn.gz": (b"no, not gzip at all\n", "not a gzip file"),
        "fake.pgn.bz2": (b"no, not bzip2 at all\n", "not a bzip2 file"),
        "cut.pgn.bz2": (bz2.compress(text)[:40], "cut short before anything could be read"),
        "fake.zip": (b"PK\x03\x04 but nothing else of a zip", "not a readable zip archive"),
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("wchcand22.pgn")
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))
    cases["games.tar.gz"] = (gzip.compress(buf.getvalue()), "a tar archive")
    for name, (data, words) in cases.items():
        f = tmp_path / name
        f.write_bytes(data)
        reason = parse_source(Source(str(f))).rejected_reason
        assert reason is not None and words in reason, (name, reason)
        assert "Errno" not in reason and "b'" not in reason and "marker was reached" not in reason, (name, reason)


def test_file_names_with_escape_codes_or_brackets_are_shown_as_text(tmp_path):
    """A file name holding an escape code or a newline reached the terminal as it was (the screen
    cleared, a line split, a table row broken); one in square brackets lost them to Rich's markup.
    They are shown \\xNN, and as written."""
    inbox = tmp_path / "in"
    inbox.mkdir()
    (inbox / "x\x1b[2J\nFAKE: all good.pgn").symlink_to(tmp_path / "nowhere")
    (inbox / "b\x1b[31mred\nline2.pgn").write_text("hi")
    (inbox / "[bold]c.pgn").write_bytes(PGN.read_bytes())
    db = tmp_path / "s.duckdb"
    r = runner.invoke(app, ["ingest", str(inbox), "--db", str(db)], terminal_width=300)
    assert "\x1b" not in r.output
    assert f"skipped {inbox}/x\\x1b[2J\\x0aFAKE: all good.pgn: a symbolic link" in r.output
    assert "b\\x1b[31mred\\x0aline2.pgn" in r.output
    assert not any(line.startswith("FAKE") or line.startswith("line2") for line in r.output.splitlines())
    assert [(Path(p).name, s) for p, s in db_rows(db, "SELECT path, status FROM source_files ORDER BY 1")][0] == (
        "[bold]c.pgn",
        "loaded",
    )


def test_a_gzip_with_bytes_after_its_stream_is_read_with_a_warning(tmp_path):
    """Bytes another program appended after a whole gzip stream made gzip refuse the file ("not a
    gzip file"): every game was lost. The stream is read, the rest left out with a warning; a
    file that starts with no gzip stream at all is still refused, and two streams are both read."""
    import gzip

    whole = PGN.read_bytes()
    appended, not_gzip, two = tmp_path / "a.pgn.gz", tmp_path / "b.pgn.gz", tmp_path / "c.pgn.gz"
    appended.write_bytes(gzip.compress(whole) + b"junk\n")
    not_gzip.write_bytes(b"junk\n")
    two.write_bytes(gzip.compress(whole) + gzip.compress(whole.replace(b"Madrid", b"Madrid ESP")))
    results = {}
    for f in (appended, not_gzip, two):
        ps = parse_source(Source(str(f)))
        codes = [i.code for i in ps.parsed.issues] if ps.parsed is not None else []
        results[f.name] = (ps.rejected_reason is None, len(ps.parsed.games) if ps.parsed else 0, codes)
    alone = parse_source(Source(str(PGN)))
    n = len(alone.parsed.games)
    assert results["a.pgn.gz"] == (True, n, ["compressed_trailing_data"])
    assert results["b.pgn.gz"][0] is False
    assert results["c.pgn.gz"][:2] == (True, 2 * n) and "compressed_trailing_data" not in results["c.pgn.gz"][2]
    # the stream ends where a block does: the junk still ends it, the bytes before all read
    blocks = list(Source(str(appended)).blocks(block_size=len(whole)))
    assert b"".join(blocks) == whole and isinstance(blocks[-1], sources.TrailingBlock)
