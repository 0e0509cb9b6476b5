"""A publish reads the store without pyarrow (`elopipe.store.frames.to_polars`, issue 27): the
import cost some 0.1 CPU-s of every `run`, and of the first file a `watch` publishes. On the store
of a real Irish TRF (Bunratty Masters 2011), rated under FIDE rules, published whole."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.ingested import rated
from tests.helpers.paths import SHARED_DATA

BUNRATTY = SHARED_DATA / "trf" / "irl_bunratty_masters_2011_crlf.trf"

pytestmark = pytest.mark.skipif(not BUNRATTY.exists(), reason="../shared/data is not available")


def test_a_publish_imports_no_pyarrow(tmp_path: Path) -> None:
    db, out = tmp_path / "s.duckdb", tmp_path / "out"
    rated(db, [[BUNRATTY]], "fide")
    code = (
        "import sys\n"
        "from elopipe.publish.lists import list_dates\n"
        "from elopipe.publish.outputs import publish_outputs\n"
        "from elopipe.store.connect import open_reader\n"
        f"con = open_reader({str(db)!r})\n"
        f"paths = publish_outputs(con, 'fide', {str(out)!r}, list_dates(con, 'fide'))\n"
        "print(len(paths), 'pyarrow' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    files, imported = done.stdout.split()
    assert int(files) > 0
    assert imported == "False"
    assert any(out.joinpath("reports", "fide").glob("*.html"))
