"""`publish --diff A B` reads the published list files named, never a pattern (issue 26, item 4)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from elopipe.publish.diff import load_list


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_publish_diff_reads_the_file_named(tmp_path: Path, suffix: str) -> None:
    named, decoy = tmp_path / f"fide_2024?{suffix}", tmp_path / f"fide_20241{suffix}"
    for path, rating in ((named, 1700), (decoy, 2900)):
        df = pl.DataFrame({"fide_id": [1], "name": ["A, B"], "rating": [rating]})
        df.write_csv(path) if suffix == ".csv" else df.write_parquet(path)
    df, _ = load_list(None, "fide", str(named))
    assert df["rating"].to_list() == [1700]
