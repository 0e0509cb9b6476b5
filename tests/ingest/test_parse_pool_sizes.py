"""Batches count an archive member by its own size, not the whole archive's (issue 26, item 5:
a 3,000-member zip made batches of a few members, each paying a batch's identity steps)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

import elopipe.ingest.parse_pool as pp
from elopipe.read.sources import discover
from tests.ingest.test_small_files import TATA, split_games


def test_the_members_of_a_zip_are_batched_by_their_own_sizes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = split_games(TATA, tmp_path / "live", 60)
    archive = tmp_path / "live.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as z:
        for p in paths:
            z.write(p, p.name)
    members = sum(p.stat().st_size for p in paths)
    # the batch's bytes hold every member, not two copies of the archive
    monkeypatch.setattr(pp, "BATCH_BYTES", members + 1)
    assert archive.stat().st_size > members // 2
    sources = discover([archive]).sources
    assert len(sources) == 60
    assert [len(b) for b in pp.batches(sources)] == [60]
    assert sum(pp._size(s) for s in sources) == members
