"""A published file that cannot be written is one line in elopipe's words (issue 26, item 10): a
read-only output folder gave Polars' (Rust's) `Read-only file system (os error 30): <temp name>`."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from elopipe.publish.atomic import WriteError, replacing


@pytest.mark.parametrize(
    ("rust", "words", "errno"),
    [
        ("Read-only file system (os error 30): {tmp}", "the folder is on a read-only file system", 30),
        ("Permission denied (os error 13): {tmp}", "permission denied", 13),
        ("No space left on device (os error 28): {tmp}", "No space left on device", 28),
    ],
)
def test_a_rust_os_error_is_said_in_elopipes_words_without_the_temporary_name(
    tmp_path: Path, rust: str, words: str, errno: int
) -> None:
    final = tmp_path / "fide_2024-02-01.parquet"
    with pytest.raises(WriteError) as failed, replacing(final) as tmp:
        raise OSError(rust.format(tmp=tmp))  # as Polars raises it: no errno, the text of Rust's error
    said = str(failed.value)
    assert said == f"cannot write {final}: {words}"
    assert "os error" not in said and ".elopipe-tmp-" not in said
    assert failed.value.errno == errno


def test_a_polars_write_into_a_read_only_folder_names_the_file(tmp_path: Path, monkeypatch) -> None:
    final = tmp_path / "x.parquet"

    def read_only(self: pl.DataFrame, path: object, *args: object, **kwargs: object) -> None:
        raise OSError(f"Read-only file system (os error 30): {path}")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", read_only)
    with pytest.raises(WriteError, match=r"^cannot write .*x\.parquet: the folder is on a read-only file system$"):
        with replacing(final) as tmp:
            pl.DataFrame({"a": [1]}).write_parquet(tmp)
