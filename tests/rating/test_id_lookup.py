"""IdLookup gives exactly what a left join on the id gives, in the dense and the join mode."""

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elopipe.rating import lookup
from elopipe.rating.lookup import IdLookup

ids_st = st.lists(st.integers(0, 60), unique=True, max_size=30)
probe_st = st.lists(st.one_of(st.none(), st.integers(-3, 80)), max_size=40)


def _left_join(frame: pl.DataFrame, df: pl.DataFrame) -> pl.DataFrame:
    right = frame.select(pl.col("player_id").alias("q"), pl.col("v").alias("a"), pl.col("s").alias("b"))
    return df.join(right, on="q", how="left", maintain_order="left")


@pytest.mark.parametrize("dense_max", [lookup.DENSE_MAX_ID, 10])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=ids_st, probes=probe_st, data=st.data())
def test_attach_equals_left_join(dense_max, ids, probes, data, monkeypatch):
    # the mode is chosen when the lookup is built, so patching for the whole test is enough
    monkeypatch.setattr(lookup, "DENSE_MAX_ID", dense_max)
    vals = data.draw(st.lists(st.one_of(st.none(), st.integers(0, 3000)), min_size=len(ids), max_size=len(ids)))
    frame = pl.DataFrame(
        {
            "player_id": pl.Series(ids, dtype=pl.Int64),
            "v": pl.Series(vals, dtype=pl.Int64),
            "s": pl.Series([None if v is None else str(v) for v in vals], dtype=pl.Utf8),
        }
    )
    df = pl.DataFrame({"q": pl.Series(probes, dtype=pl.Int64), "row": pl.int_range(len(probes), eager=True)})
    lk = IdLookup(frame)
    assert lk.dense == (not ids or max(ids) <= dense_max)
    want = _left_join(frame, df)
    # twice: the padded columns are cached between calls
    for _ in range(2):
        got = lk.attach(df, "q", {"a": "v", "b": "s"})
        assert got.equals(want)


def test_sparse_ids_fall_back_to_a_join():
    frame = pl.DataFrame({"player_id": [5, 1 << 40], "v": [1, 2], "s": ["x", "y"]})
    lk = IdLookup(frame)
    assert not lk.dense
    df = pl.DataFrame({"q": [1 << 40, None, 5, 7]})
    assert lk.attach(df, "q", {"a": "v"})["a"].to_list() == [2, None, 1, None]
