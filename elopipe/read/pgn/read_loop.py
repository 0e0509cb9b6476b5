"""The reading loop of one PGN file, or of one piece of it.

The rules it applies, and why, are in `elopipe.read.pgn.reader`'s docstring.

`ReadLoop` prepares the text (`text_prep`), splits it in raw games (`split`) and hands each to its
`builder.GameBuilder`, as python-chess's `read_game(handle, Visitor=...)` hands a game to its
visitor. Two paths give one result: the games `pgn_columns.analyse` vouches for are read as
columns (`USE_COLUMNS`; their refs set-wise, `USE_CHUNK_REFS`), the others one by one; with
`workers`, ranges of games are read by other processes (`spread`) and merged in file order.
The entry points (`read_pgn`, `read_pgn_chunks`, `read_pgn_piece`, `merge_pieces`) are in
`elopipe.read.pgn.reader`.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from itertools import accumulate, repeat
from typing import TYPE_CHECKING, Any

from elopipe.read.control_chars import has_controls_utf8
from elopipe.read.execution import Executor, Pending, Spread, submit
from elopipe.read.pgn import split
from elopipe.read.pgn.builder import GameBuilder
from elopipe.read.pgn.finish import finish
from elopipe.read.pgn.pieces import PieceState, merge_chunk, piece_state
from elopipe.read.pgn.results import SCORES
from elopipe.read.pgn.split import RawGame, split_games, split_movetexts, split_parts
from elopipe.read.pgn.text_prep import line_at, needs_fixes, prepare, text_columns
from elopipe.read.pgn.values import VALUE_RULES, memoized_rules
from elopipe.read.records import GameRec, GameTable, ParsedFile
from elopipe.runtime.errors import ElopipeError

if TYPE_CHECKING:  # Polars is imported where the column path runs: `import elopipe` stays quick
    import polars as pl


class NotUtf8(ElopipeError, ValueError):
    """`read_pgn(None, utf8=...)` was given bytes that are not UTF-8: decode them and call again."""


_MIN_CHUNK_GAMES = 5000  # below this many games per worker, forking costs more than it saves


def _chunks(n_games: int, workers: int) -> list[tuple[int, int]]:
    """Contiguous [start, end) ranges of raw games, one per worker (one range when not parallel)."""
    k = max(1, min(workers, n_games // _MIN_CHUNK_GAMES))
    bounds = [n_games * i // k for i in range(k + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(k)]


def _read_chunk(parent: Any, raw_games: list[RawGame], start: int, end: int) -> PieceState:
    """Read raw games [start, end) of the parent's text with a fresh reader; return its state
    (in a process `read_pgn`'s `spread` forked: the parent's text is inherited, not sent)."""
    reader = ReadLoop(None, parent.b.validate, parent.source)
    reader.b.text, reader.ins_lines, reader.b.maybe_mojibake = parent.b.text, parent.ins_lines, parent.b.maybe_mojibake
    reader.b.has_controls, reader.line_base, reader.b.last_piece = (
        parent.b.has_controls,
        parent.line_base,
        parent.b.last_piece,
    )
    used = reader._process(raw_games[start:end])
    return piece_state(reader.b, used, packed=True)


# False: every game is read one by one, as before the column path existed (tests compare both)
USE_COLUMNS = True


# False: the fast games' refs are assigned by a loop over every game (tests compare both)
USE_CHUNK_REFS = True


def _fast_frame(fast: pl.DataFrame, refs: dict[str, list[int]], slow: list[GameRec]) -> pl.DataFrame:
    """The games frame: the column-wise games (`fast`, with their refs) and the games read one by
    one (`slow`), in game order."""
    import polars as pl

    from elopipe.read.game_frame import GAME_FRAME_SCHEMA, records_frame

    score = {k: (float(w), float(b)) for k, (w, b) in SCORES.items() if w is not None and b is not None}
    c = pl.col
    frame = fast.select(
        *(pl.Series(k, refs[k], dtype=pl.Int32) for k in ("tournament_ref", "white_ref", "black_ref")),
        c.marker.alias("result"),
        c.Result.alias("result_raw"),
        c.marker.alias("result_marker"),
        c.marker.replace_strict({k: v[0] for k, v in score.items()}, default=None, return_dtype=pl.Float64).alias(
            "white_score"
        ),
        c.marker.replace_strict({k: v[1] for k, v in score.items()}, default=None, return_dtype=pl.Float64).alias(
            "black_score"
        ),
        pl.lit(True).alias("played"),
        pl.lit(None, dtype=pl.String).alias("unplayed_code"),
        "round",
        c.Round.alias("round_label"),
        "board",
        "game_date",
        "date_precision",
        "white_rating",
        "black_rating",
        "movetext_hash",
        "ply_count",
        "eco",
        "time_control",
        pl.lit(None, dtype=pl.String).alias("variant"),
        pl.lit(None, dtype=pl.String).alias("fen"),
        c.Termination.alias("termination"),
        pl.lit(None, dtype=pl.List(pl.String)).alias("flags"),
        c.json.alias("headers"),
        pl.Series("line", refs["line"], dtype=pl.Int32),
        pl.Series("game_index", refs["game_index"], dtype=pl.Int32),
    ).cast(GAME_FRAME_SCHEMA)
    if slow:
        frame = pl.concat([frame, records_frame(slow)]).sort("game_index")
    return frame


def _newlines_before(data: bytes, starts: list[int]) -> list[int]:
    """How many newlines `data` holds before each of `starts` (increasing offsets): one count
    (in C) from each start to the next, rather than an array of every newline of the text."""
    counts = map(data.count, repeat(b"\n"), [0, *starts[:-1]], starts)
    return list(accumulate(counts))


class ReadLoop:
    """The reading loop of one PGN file (or of one piece of it): prepares the text, splits it in
    games and hands each to its `GameBuilder` (`b`), as python-chess's `read_game` hands a game to
    its visitor; the games the column path vouches for are read as columns."""

    def __init__(
        self,
        text: str | None,
        validate_moves: bool,
        source_name: str,
        workers: int = 1,
        utf8: bytes | None = None,
        columns: bool = True,
        executor: Executor | None = None,
        spread: Spread | None = None,
    ) -> None:
        self.b = GameBuilder(validate_moves)
        self.rules = memoized_rules(VALUE_RULES)  # one cache of the tag values' rules for the whole file
        self.executor = executor
        self.spread = spread
        self.source = source_name
        self.workers = workers
        self.ins_lines: list[int] = []
        self.known_mojibake: bool | None = None  # given for the whole file (`run_chunks`)
        self.line_base = 0  # lines and game indexes of the pieces read before (`run_chunks`)
        self.gi_base = 0
        # the column path (not when validating moves) checks the raw games for the rare fixes
        self.quick = USE_COLUMNS and columns and not validate_moves
        self._source = (text, utf8)
        self.unchecked_utf8 = text is None  # the bytes were not decoded by the caller
        self.b.text = self._prepare(text, utf8, quick=self.quick) if text is not None or utf8 is not None else b""
        # the column path's refs and its games read one by one (`finish.implausible_games`)
        self._fast_refs: dict[str, list[int]] | None = None
        self._slow_games: list[GameRec] = []

    def _prepare(self, text: str | None, utf8: bytes | None = None, quick: bool = False) -> bytes:
        """The text as bytes, with the fixes that keep line numbers (elopipe.read.pgn.text_prep);
        sets `maybe_mojibake` and `ins_lines`. `quick`: without the rare fixes (`needs_fixes`
        then looks for them in the raw games and, if needed, `run` prepares the text again)."""
        prep = prepare(text, utf8, quick, self.known_mojibake)
        self.b.maybe_mojibake, self.ins_lines = prep.maybe_mojibake, prep.ins_lines
        return prep.data

    def _line_at(self, new_line: int) -> int:
        """Line number in the caller's text (undoing inserted newlines)."""
        return line_at(self.ins_lines, new_line)

    def run(self) -> ParsedFile:
        self._read_text()
        return self._finish()

    def run_chunks(self, chunks: Iterable[tuple[str | None, bytes | None]], maybe_mojibake: bool) -> ParsedFile:
        """`run` over consecutive pieces of one file, each cut where a game starts (see
        `read_pgn_chunks`): each piece is prepared, split and read as `run` reads a whole text,
        with line numbers and game indexes going on from the pieces before, and refs, caches and
        issues shared. Only the games frames of the pieces read so far are kept."""
        from elopipe.read.game_frame import games_frame

        frames = []
        n_games = 0
        lagging: Any = None  # a piece's games, built once the next piece is read (hashes meanwhile)
        pending = iter(chunks)
        nxt = next(pending, None)
        while nxt is not None:
            text, utf8 = nxt
            nxt = next(pending, None)  # the next piece is read before this one (its end is not the file's)
            used = self._read_piece(text, utf8, maybe_mojibake, last=nxt is None)
            if lagging is not None:
                frames.append(games_frame(lagging))
            lagging = self.b.out.games or None
            n_games += len(self.b.out.games)
            self.b.out.games = []
            self.gi_base += used
            self.line_base += utf8.count(b"\n") if text is None else text.count("\n")  # type: ignore[union-attr]
        self.b.text = b""
        self._fast_refs = None  # of the last piece: `finish.implausible_games` counts the games of all
        if lagging is not None:
            frames.append(games_frame(lagging))
        if frames:
            import polars as pl

            self.b.out.games = GameTable(pl.concat(frames, rechunk=False), n_games)
        return self._finish()

    def _read_piece(self, text: str | None, utf8: bytes | None, maybe_mojibake: bool, last: bool) -> int:
        """Read one piece of a file (see `read_pgn_chunks`) with line numbers from `line_base` and
        game indexes from `gi_base`; returns how many game indexes it used. `last`: the piece
        ends where the file ends."""
        self.b.last_piece = last
        self._source = (text, utf8)
        self.unchecked_utf8 = text is None
        self.ins_lines = []
        self.known_mojibake = maybe_mojibake
        self.b.text = self._prepare(text, utf8, quick=self.quick)
        return self._read_text()

    def _read_text(self) -> int:
        """Read the games of `self.b.text`; returns how many game indexes they used."""
        started = self._start_columns() if self.quick else None
        if not isinstance(started, tuple) and self.unchecked_utf8:
            # Only columns built from every part check the bytes: a part that needs the text fixes
            # stops the building early, and the fixes may drop bytes (a `%` line) that decide it.
            try:
                self._source[1].decode("utf-8")  # type: ignore[union-attr]
            except UnicodeDecodeError:
                raise NotUtf8("the bytes are not UTF-8") from None
        if isinstance(started, str):  # the text needs the fixes the quick preparation left out
            self.b.text = self._prepare(*self._source)
            raw_games, movetexts = split_movetexts(self.b.text)
            columns = text_columns(raw_games, movetexts)
            started = (raw_games, self._analyse_parts(columns, 0)) if columns is not None else None
        raw_games = split_games(self.b.text) if started is None else started[0]
        self._source = (None, None)
        if started is not None and raw_games:
            # The column path reads few games one by one: it checks each of their tags for control
            # characters rather than scan the whole text for them first.
            self.b.has_controls = True
            return self._run_columns(raw_games, started[1])
        self.b.has_controls = has_controls_utf8(self.b.text)
        chunks = _chunks(len(raw_games), self.workers)
        if len(chunks) > 1:
            return self._run_parallel(raw_games, chunks)
        return self._process(raw_games)

    def _finish(self) -> ParsedFile:
        """The whole-file checks, once every game is read (`finish.finish`)."""
        return finish(self.b, self._fast_refs, self._slow_games)

    def _process(self, raw_games: list[RawGame]) -> int:
        """Read `raw_games` (a run of consecutive games); game indexes start at `gi_base`. Returns
        how many game indexes were used."""
        text = self.b.text
        last_pos = raw_games[0].header_start if raw_games else 0
        # newlines before a position in the "\n"-prefixed text = its 1-based line
        line = text.count(b"\n", 0, last_pos)
        gi = start = self.gi_base
        for rg in raw_games:
            line += text.count(b"\n", last_pos, rg.header_start)
            last_pos = rg.header_start
            gi += self.b._raw_game(rg, self._line_at(line) + self.line_base, gi)
        return gi - start

    # -- column-wise reading (elopipe.read.pgn.columns) --
    def _start_columns(self) -> tuple[list[RawGame], list[tuple[int, int, Pending[Any]]]] | str:
        """Split the text in parts and have each part analysed (`pgn_columns.analyse`, in a
        background thread) as soon as it is split: the raw games and the analysis jobs
        (first game, end, future). 'fixes' when a part holds what the quick preparation left out,
        'not utf-8' when its bytes are not UTF-8 (nothing is read then)."""
        raw_games: list[RawGame] = []
        jobs: list[tuple[int, int, Pending[Any]]] = []
        for part_raw, part_movetexts in split_parts(self.b.text, None):
            columns = text_columns(part_raw, part_movetexts)
            if columns is None:
                return "not utf-8"
            if needs_fixes(columns):
                return "fixes"
            jobs += self._analyse_parts(columns, len(raw_games))
            raw_games += part_raw
        return raw_games, jobs

    def _analyse_parts(self, columns: tuple[Any, Any], offset: int) -> list[tuple[int, int, Pending[Any]]]:
        """Analysis jobs for the raw games whose columns are given (they start at game `offset`),
        in pieces of at least `split.COLUMN_CHUNK_GAMES` (see `_run_columns`)."""
        from elopipe.read.pgn import columns as pgn_columns

        headers, movetexts = columns
        n = len(headers)
        k = max(1, min(split.COLUMN_CHUNKS, n // split.COLUMN_CHUNK_GAMES))
        bounds = [n * i // k for i in range(k + 1)]
        analyse = partial(pgn_columns.analyse, ascii_headers=self.b.maybe_mojibake, executor=self.executor)
        return [
            (
                offset + a,
                offset + b,
                submit(self.executor, analyse, headers.slice(a, b - a), movetexts.slice(a, b - a), self.rules),
            )
            for a, b in zip(bounds, bounds[1:], strict=False)
            if b > a
        ]

    def _run_columns(self, raw_games: list[RawGame], jobs: list[tuple[int, int, Pending[Any]]]) -> int:
        """Read the raw games in file order: the ones `pgn_columns.analyse` vouches for as columns,
        the others one by one (`_raw_game`). Refs, caches and issues are shared, so the result is
        the one `_process` gives. `jobs`: the analyses of consecutive raw games (`_start_columns`);
        refs are assigned to one while the next is analysed. Returns how many game indexes were
        used."""
        import polars as pl

        from elopipe.read.pgn import columns as pgn_columns

        lines = self._start_lines(raw_games)
        refs: dict[str, list[int]] = {c: [] for c in ("tournament_ref", "white_ref", "black_ref", "line", "game_index")}
        fast_parts: list[tuple[pl.DataFrame, pgn_columns.Analysis]] = []
        self._fast_refs, self._slow_games = refs, self.b._games
        gi = self.gi_base
        for a, b, job in jobs:
            res = job.result()
            if res is None:
                for rg, ln in zip(raw_games[a:b], lines[a:b], strict=True):
                    gi += self.b._raw_game(rg, ln, gi)
                continue
            gi, fast = self._columns_chunk(res, raw_games[a:b], lines[a:b], gi, refs)
            if fast is not None:
                fast_parts.append((fast, res))
        if fast_parts:
            self.b.any_tags = True
            slow = self.b._games

            def frame() -> pl.DataFrame:  # the hashes may still be computed in the background
                parts = [f.join(r.hashes(), on="g", how="left", maintain_order="left") for f, r in fast_parts]
                return _fast_frame(pl.concat(parts), refs, slow)

            self.b.out.games = GameTable(frame, len(refs["game_index"]) + len(slow))
        return gi - self.gi_base

    def _columns_chunk(
        self,
        res: Any,
        raw_games: list[RawGame],
        lines: list[int],
        gi: int,
        refs: dict[str, list[int]],
    ) -> tuple[int, Any]:
        """Refs of one analysed chunk, in order, with its other games read one by one. Returns the
        next game index and the chunk's fast games (their hashes come from `res`), or None."""
        import polars as pl

        from elopipe.read.pgn import chunk_refs

        games = res.games
        fast = games.filter("fast").with_columns(pl.col.game_date.dt.year().alias("year"))
        if USE_CHUNK_REFS:
            nxt = chunk_refs.assign(self.b.refs, self.b._raw_game, res, fast, raw_games, lines, gi, refs)
            if nxt is not None:
                return self._chunk_done(res, fast, nxt)
        nxt = chunk_refs.assign_loop(self.b.refs, self.b._raw_game, res, fast, raw_games, lines, gi, refs)
        return self._chunk_done(res, fast, nxt)

    def _chunk_done(self, res: Any, fast: Any, gi: int) -> tuple[int, Any]:
        """What `_columns_chunk` returns once the chunk is read."""
        if fast.is_empty():
            res.hashes()  # nothing to wait for later
            return gi, None
        self.b.shows_moves = self.b.shows_moves or bool(fast.get_column("two_moves").any())
        return gi, fast

    def _start_lines(self, raw_games: list[RawGame]) -> list[int]:
        """The line (1-based, in the caller's text) where each raw game starts."""
        # newlines before a position in the "\n"-prefixed text = its 1-based line
        counts = _newlines_before(self.b.text, [rg.header_start for rg in raw_games])
        if not self.ins_lines:
            base = self.line_base
            return [n + base for n in counts] if base else counts
        return [self._line_at(n) + self.line_base for n in counts]

    # -- reading in ranges (read_pgn(workers=N), the others by `spread`) --
    def _run_parallel(self, raw_games: list[RawGame], chunks: list[tuple[int, int]]) -> int:
        """Chunk 0 read here, chunks 1.. by `spread` (forked processes) meanwhile; results are
        merged in file order. A chunk `spread` did not read (or no `spread`) is read here."""
        first = raw_games[chunks[0][0] : chunks[0][1]]
        job = partial(_read_chunk, self, raw_games)
        results: list[PieceState | None]
        if self.spread is None:
            used, results = self._process(first), [None] * (len(chunks) - 1)
        else:
            used, results = self.spread(job, chunks[1:], partial(self._process, first))
        gi_next = self.gi_base + used
        for chunk, res in zip(chunks[1:], results, strict=True):
            if res is None:
                res = job(*chunk)
            gi_next += merge_chunk(self.b, res, gi_next)
        return gi_next - self.gi_base
