"""Columns of a frame looked up by player id with a gather instead of a hash join.

The FIDE engine attaches the same few per-player values (Ro, K, ...) to every player-side of
a period: about 250k rows in a FIDE month.  A Polars hash join of that size costs 8-9 ms on
this project's 2-core machines; a gather through a dense id → row array costs well under
1 ms.  Player ids are the store's sequence numbers (``player_id_seq``: dense, from 1), so the
array has about as many entries as the store has players (4 bytes each).  Ids too large for
an array (above `DENSE_MAX_ID`, e.g. a frame built by hand) fall back to a left join, with
the same result.
"""

from __future__ import annotations

from typing import cast

import polars as pl

DENSE_MAX_ID = 1 << 26  # 64M ids: a 256 MB array at worst; a federation store has ~2M


class IdLookup:
    """Look up `frame`'s columns by its unique, non-null Int64 key column `key`.

    ``attach(df, id_col, {"out": "col"})`` adds ``out`` = ``frame[col]`` at the row whose
    key equals ``df[id_col]``: null when the id is null or absent, exactly as a left join
    of `frame` on that key would give, with `df`'s rows kept in order.

    Raises nothing on ids absent from `frame`; `frame`'s key must be unique (a duplicate
    would make the join fallback multiply rows).
    """

    def __init__(self, frame: pl.DataFrame, key: str = "player_id") -> None:
        self._frame = frame
        self._key = key
        ids = frame.get_column(key)
        n = frame.height
        # ids are integers: Series.min/max give an int, or None for nulls only
        lo = cast("int | None", ids.min()) if n else 0
        self._hi = int(cast("int", ids.max())) if n else -1
        self.dense = n == 0 or (lo is not None and lo >= 0 and self._hi <= DENSE_MAX_ID)
        if self.dense and n:
            # null where no row has the id: gathering a null row gives null
            self._row = (
                pl.Series("row", [None], dtype=pl.UInt32)
                .extend_constant(None, self._hi)
                .scatter(ids.cast(pl.Int64), pl.int_range(n, dtype=pl.UInt32, eager=True))
            )

    def attach(self, df: pl.DataFrame, id_col: str, columns: dict[str, str]) -> pl.DataFrame:
        """`df` + one column per ``out: col`` of `columns` (see the class)."""
        if self._frame.height == 0:
            return df.with_columns(pl.lit(None, self._frame.schema[col]).alias(out) for out, col in columns.items())
        if not self.dense:
            right = self._frame.select(
                pl.col(self._key).alias("__id"), *(pl.col(c).alias(o) for o, c in columns.items())
            )
            return df.join(right, left_on=id_col, right_on="__id", how="left", maintain_order="left").drop(
                "__id", strict=False
            )
        ids = df.get_column(id_col)
        lo, hi = cast("int | None", ids.min()), cast("int | None", ids.max())
        i = pl.col(id_col)
        # a null id gathers a null row; ids outside the array are nulled first (lo and hi are
        # None together: no id at all)
        in_range = lo is None or hi is None or (lo >= 0 and hi <= self._hi)
        d = df.with_columns(
            pl.lit(self._row).gather(i if in_range else pl.when((i >= 0) & (i <= self._hi)).then(i)).alias("__row")
        )
        return d.with_columns(
            pl.lit(self._frame.get_column(col)).gather(pl.col("__row")).alias(out) for out, col in columns.items()
        ).drop("__row")
