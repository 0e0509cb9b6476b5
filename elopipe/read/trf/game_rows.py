"""The games of a TRF file as rows: one list per game, `GameRec` fields in the order of `COLUMNS`.

`RoundResolver` makes a FIDE month's 125k games: a list costs a tenth of a `GameRec` to make,
and the rows of a whole batch are transposed into the loader's games frame at once
(`read.game_frame.rows_table`). The reader's `ParsedFile.games` is still a sequence of
`GameRec` (a `GameTable`) for callers that want records. The `GameRec` fields not in `COLUMNS`
are None in every TRF game.
"""

from __future__ import annotations

COLUMNS = (
    "tournament_ref", "white_ref", "black_ref", "result", "result_raw", "white_score", "black_score", "played",
    "unplayed_code", "round", "round_label", "game_date", "date_precision", "white_rating", "black_rating", "flags",
    "line", "game_index",
)  # fmt: skip
# positions in a row, by field
WHITE_REF, BLACK_REF, RESULT, RESULT_RAW, WHITE_SCORE, BLACK_SCORE, PLAYED, UNPLAYED_CODE, ROUND = range(1, 10)
FLAGS, LINE, GAME_INDEX = 15, 16, 17
