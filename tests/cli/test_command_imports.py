"""`elopipe CMD` imports only CMD's modules: a rate or the ingest of a TRF never loads the
publishing writers or the PGN reader (issue 27: their imports were a tenth of an incremental rate)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.paths import SHARED_DATA

# runs the CLI in a fresh interpreter and prints the elopipe modules it loaded
_PROBE = """
import json, sys
from elopipe.cli.main import main
sys.argv = ["elopipe", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith("elopipe."))), file=sys.stderr)
"""


def _loaded(*args: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, check=True)
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_rate_loads_no_publishing_and_no_other_command(tmp_path: Path) -> None:
    trf = SHARED_DATA / "trf" / "bbp_autotest_cr_only_line_endings.trf"
    db = tmp_path / "s.duckdb"
    ingest = _loaded("ingest", "-q", str(trf), "--db", str(db))
    rate = _loaded("rate", "--system", "fide", "--db", str(db))
    for loaded in (ingest, rate):
        assert "elopipe.publish.outputs" not in loaded
        assert "elopipe.cli.commands.run" not in loaded
    assert "elopipe.read.pgn.reader" not in ingest
    assert "elopipe.read.trf.reader" in ingest
    assert "elopipe.rating.fide.run" in rate


def test_help_still_lists_every_command() -> None:
    from elopipe.cli.main import COMMAND_MODULES

    proc = subprocess.run(
        [sys.executable, "-c", "from elopipe.cli.main import main; main()", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == 0
    for name in COMMAND_MODULES:
        assert f" {name} " in proc.stdout
