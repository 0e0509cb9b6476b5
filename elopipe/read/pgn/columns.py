"""Column-wise reading of the plain games of a PGN file (Polars, Rust regexes, both cores).

`pgn_reader` splits a file into raw games (tag section + movetext) and reads every game one by
one in Python: about 27 µs a game. Most games of real files hold nothing odd, and for those the
same result can be computed for all games at once. `analyse` does that and marks which raw games
it can vouch for (`fast`); the reader reads the others one by one, as before, in file order.

A raw game is *fast* only when reading it one by one would give one game with no issue and no
flag (so everything it yields is a column value), which needs all of:

- a tag section that `pgn_reader._parse_header` reads on its fast path: one `[Name "value"]` per
  line (no escapes), at most 10,000 characters, no tag name twice; no control character or tab in
  it; and only ASCII when the file shows signs of mojibake;
- a *clean* movetext: after comments, `;` comments, variations (nested up to 4 deep) and NAGs are
  blanked exactly as `_skim` does, only move numbers, SAN moves (no `0-0`, null moves or
  `e.p.`) with `+#!?` suffixes and one final standard marker, separated by ASCII whitespace;
- a Result tag equal to that marker; at least two plies unless the result is `*`; at most
  `PLY_MAX` plies;
- no FEN or Variant tag; no Termination that mentions a forfeit or says bye;
- White and Black present and not a placeholder or bye name;
- Date, EventDate, Round, Board, WhiteElo/BlackElo and WhiteFideId/BlackFideId values that the
  one-by-one reader accepts without a warning (decided per distinct value by the same Python
  functions), and a game date that does not come from EventDate.

For those games the movetext hash is computed from the same normalised form as `_skim` +
`_hash_forms` (sha1 of the hash forms joined by one space), checked game for game against the
one-by-one reader on every file of shared/data and on fuzzed movetexts
(tests/read/pgn/test_pgn_columns.py).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import polars as pl

from elopipe.read.execution import Executor, Pending, submit
from elopipe.read.field_bounds import PLY_MAX
from elopipe.read.pgn.movetext import FILES, RANKS, SAN_PIECES, san_regex
from elopipe.read.pgn.results import unplayed_termination_expr
from elopipe.read.pgn.tags import TAG_FAST  # the tag regex of the one-by-one path

__all__ = ["GAME_TAGS", "Analysis", "analyse"]

# a line's ` "value"]` as `tags.TAG_FAST` reads it: what is left of a tag section once each is
# rewritten to `_VALUE_MARK` (a control character, so never in a fast section) names its tags
_TAG_VALUE = r'(?m) "[^"\\\n]*"\]$'
_VALUE_MARK = "\x01"
_NAME_LINE = re.compile(r"\[[A-Za-z0-9_]+\x01")
# what `game_parts.strip_tag_controls` would change (CONTROL_RE), and tabs; the newline separates tag lines
_CONTROL = r"[\x00-\x09\x0b-\x1f\x7f-\x9f]"
# ASCII whitespace, as `bytes.split()` splits (Rust's \s would also accept NBSP)
_WS = r"[ \t\n\r\x0b\x0c]"
_MARKER = r"(?:1-0|0-1|1/2-1/2|\*)"
# the SAN words of the one grammar (elopipe.read.pgn.movetext)
_SAN = san_regex()
_CLEAN = rf"^{_WS}*(?:(?:[0-9]+\.+{_WS}*)?{_SAN}[+#]?[!?]{{0,2}}{_WS}+)*{_MARKER}{_WS}*$"
_TWO_MOVES = rf"{_SAN}[+#]?[!?]{{0,2}}{_WS}+(?:[0-9]+\.+{_WS}*)?{_SAN}"
_VARIATION_DEPTH = 4
_ASCII = r"^[\x00-\x7f]*$"

# the tags the columns are computed from
GAME_TAGS = (
    "Event", "Site", "Date", "EventDate", "Round", "Board", "White", "Black", "Result", "WhiteElo",
    "BlackElo", "WhiteFideId", "BlackFideId", "TimeControl", "ECO", "Termination", "FEN", "Variant",
)  # fmt: skip


# what `_skim` blanks or checks before the words: comments, `;` comments, variations, NAGs (a `)`
# alone is left as it is and fails `_CLEAN`). Most movetexts hold none: only those that do are
# blanked, which spares seven regex passes over the others.
_TO_BLANK = r"[{};(\$]"


def _movetext(m: pl.Series) -> tuple[pl.Series, pl.Series]:
    """(braces ok, movetext with comments, `;` comments, variations and NAGs blanked as `_skim`
    does). The movetext is clean when the braces are ok and the blanked text matches `_CLEAN`
    (which leaves no `(`, `)`, `{` or `}`)."""
    odd = m.str.contains(_TO_BLANK).fill_null(False).arg_true()
    braces_ok = pl.repeat(True, m.len(), dtype=pl.Boolean, eager=True).alias("braces_ok")
    if odd.is_empty():
        return braces_ok, m.rename("pre")
    sub = m.gather(odd)
    pre = sub.str.replace_all(r"\{[^}]*\}", " ")
    pre = pre.str.replace_all(r";[^\n]*", " ")
    for _ in range(_VARIATION_DEPTH):
        pre = pre.str.replace_all(r"\([^()]*\)", " ")
    pre = pre.str.replace_all(r"\$[0-9]*", " ")
    # what `_skim` needs to find no `{` or `}` left once the `{...}` comments are gone
    braces_ok.scatter(odd, sub.str.contains(r"^[^{}]*(?:\{[^}]*\}[^{}]*)*$"))
    return braces_ok, m.clone().rename("pre").scatter(odd, pre)


def _piece_forms() -> tuple[list[str], list[str]]:
    """Literal rewrites that reduce a clean piece move to its hash form, the piece and its
    destination (`movetext._hash_form`): the piece with its departure (file, rank or square) and
    the next character (the destination's file, or `x`) becomes the piece and that file ('Nbd'
    -> 'Nd', 'Nbx' -> 'N', 'Qh4e' -> 'Qe'), a capture 'Nx' the piece. No
    pattern is the prefix of another, and in a clean movetext a piece letter followed by two more
    characters other than whitespace starts a piece move, so the rewrites meet nothing else."""
    after = [*FILES, "x"]
    departures = [*FILES, *RANKS, *(f + r for f in FILES for r in RANKS)]
    patterns, forms = [], []
    for piece in SAN_PIECES:
        patterns.append(piece + "x")
        forms.append(piece)
        for dep in departures:
            for c in after:
                patterns.append(piece + dep + c)
                forms.append(piece + c.replace("x", ""))
    return patterns, forms


_PIECE_FROM, _PIECE_TO = _piece_forms()


def _where(s: pl.Series, rows: pl.Series, fn: Callable[[pl.Series], pl.Series]) -> pl.Series:
    """`s` with `fn` applied to the rows where `rows` is true only (a pass over those alone)."""
    idx = rows.fill_null(False).arg_true()
    return s if idx.is_empty() else s.scatter(idx, fn(s.gather(idx)))


def _hash_text(pre: pl.Series) -> pl.Series:
    """The hash forms of clean movetexts joined by one space (see `movetext._hash_form`). Runs of
    whitespace other than single spaces and newlines are rewritten in the rows that hold them only."""
    s = (
        pre.str.replace(rf"{_WS}*{_MARKER}{_WS}*$", "")
        .str.replace_all(rf"[0-9]+\.+{_WS}*", "")
        .str.replace_all(r"[+#!?]", "")
        # "Nxe5" -> "Ne5", "Nbd7" -> "Nd7", "R1xe2" -> "Re2" by literal replacement (a regex with
        # groups costs twice as much)
        .str.replace_many(_PIECE_FROM, _PIECE_TO, leftmost=True)
        # a newline is a space in the hash text; the rewrites below never touch whitespace
        .str.replace_all("\n", " ", literal=True)
    )
    s = s.str.replace_all(r"([a-h][18])([QRBN])", "$1=$2")
    odd_space = s.str.contains("  ", literal=True) | s.str.contains(r"[\t\r\x0b\x0c]")
    s = _where(s, odd_space, lambda t: t.str.replace_all(rf"{_WS}{{2,}}|[\t\r\x0b\x0c]", " "))
    return s.str.strip_chars(" ")


def _map(frame: pl.DataFrame, name: str, fn: Callable[[str], tuple[Any, ...]], dtypes: list[Any]) -> list[pl.Expr]:
    """`fn` applied (in Python) to each distinct value of column `name`: one expression per
    element of the tuples it returns, NULL where the column is NULL."""
    values = frame.get_column(name).drop_nulls().unique().to_list()
    results = {v: fn(v) for v in values}
    return [
        pl.col(name).replace_strict({v: r[i] for v, r in results.items()}, default=None, return_dtype=dtype)
        for i, dtype in enumerate(dtypes)
    ]


@dataclass
class Analysis:
    """What `analyse` found. `games`: one row per raw game (see `analyse`). `headers`: the tag
    sections of the fast games (`g`, `h`), for the few dicts the reader needs. `hashes()`: the
    movetext hash, ply count and tags as JSON of the fast games (`g`, `movetext_hash`,
    `ply_count`, `json`), computed on the executor `analyse` was given while the reader and loader go on."""

    games: pl.DataFrame
    headers: pl.DataFrame
    _hashes: Pending[pl.DataFrame]

    def hashes(self) -> pl.DataFrame:
        return self._hashes.result()

    def tag_dicts(self, rows: list[int]) -> dict[int, dict[str, str]]:
        """The tags of the given fast games (`g` values) as dicts, in file order."""
        part = self.headers.filter(pl.col.g.is_in(pl.Series(rows, dtype=pl.Int64).implode()))
        return {
            g: dict(TAG_FAST.findall(h))
            for g, h in zip(part.get_column("g").to_list(), part.get_column("h").to_list(), strict=True)
        }


def _hashes(fast: pl.DataFrame) -> pl.DataFrame:
    """(`g`, `movetext_hash`, `ply_count`, `json`) of the fast games (`g`, `pre`: clean movetext,
    `h`: tag section): the columns only the loader needs, computed on the executor."""
    # one `[Name "value"]` per line, a value without a quote, a backslash or a control character,
    # one `[` a line (`analyse`'s checks): literal replacements make the JSON. The ends of the lines
    # go first (the last one's by a cut, the others' to a NUL, never in such a section), so that the
    # one ` "` left on a line is the separator's, whatever the value ends with.
    json = (
        pl.col.h.str.strip_suffix('"]\n')
        .str.replace_all('"]\n[', "\x00", literal=True)
        .str.replace_all(' "', '": "', literal=True)
        .str.replace_all("\x00", '", "', literal=True)
        .str.strip_prefix("[")
    )
    json = '{"' + json + '"}'
    forms = _hash_text(fast.get_column("pre")).cast(pl.Binary).to_list()
    sha1 = hashlib.sha1
    digests = [sha1(f).hexdigest() if f else None for f in forms]
    # the forms are joined by one space: a count of bytes in C, on the bytes sha1 needs anyway
    # (a Polars count of matches costs a regex match per ply)
    plies = [f.count(b" ") + 1 if f else 0 for f in forms]
    return fast.select(
        "g",
        pl.Series("movetext_hash", digests, dtype=pl.String),
        pl.Series("ply_count", plies, dtype=pl.Int32),
        json.alias("json"),
    )


def _strings(values: pl.Series | list[bytes]) -> pl.Series:
    if isinstance(values, pl.Series):
        return values
    return pl.Series(values, dtype=pl.Binary).cast(pl.String)


def _tag_lines(h: pl.Series) -> tuple[pl.Series, pl.DataFrame]:
    """Per tag section (ending with a newline, no control character, one `[` a line: checked
    beside), `names` (Int32): the number of its list of names when each line is one
    `[Name "value"]` as `tags.TAG_FAST` reads it (nothing else) and no name comes twice, else
    NULL; decided once per distinct list: a file's games hold few. And per such list (`names`),
    the line (0-based, Int32, NULL when absent) of each of `GAME_TAGS` (`line_<tag>`)."""
    names = h.str.replace_all(_TAG_VALUE, _VALUE_MARK)
    good = [n for n in names.unique().drop_nulls().to_list() if _names_once(n)]
    at = [{line[1:-1]: i for i, line in enumerate(n.split("\n")[:-1])} for n in good]
    table = pl.DataFrame(
        [pl.Series("names", range(len(good)), dtype=pl.Int32)]
        + [pl.Series(f"line_{tag}", [a.get(tag) for a in at], dtype=pl.Int32) for tag in GAME_TAGS]
    )
    if not good:
        return pl.repeat(None, h.len(), dtype=pl.Int32, eager=True).alias("names"), table
    ids = names.replace_strict(good, table.get_column("names"), default=None, return_dtype=pl.Int32)
    return ids.alias("names"), table


def _names_once(names: str) -> bool:
    """`names`: a tag section whose lines' ` "value"]` are `_VALUE_MARK` (`_tag_lines`)."""
    lines = names.split("\n")[:-1]
    return all(_NAME_LINE.fullmatch(line) for line in lines) and len(set(lines)) == len(lines)


def analyse(
    headers: pl.Series | list[bytes],
    movetexts: pl.Series | list[bytes],
    value_rules: dict[str, Callable[[str], Any]],
    *,
    ascii_headers: bool,
    executor: Executor | None = None,
) -> Analysis | None:
    """Which raw games are fast, and their columns (see the module docstring).

    `headers` and `movetexts` are the raw games' tag sections and movetexts (String Series, or
    lists of UTF-8 bytes).
    `value_rules` maps a rule name to the Python function the one-by-one reader applies to a tag
    value; each is applied once per distinct value: 'date' -> (date, precision, warns),
    'event_date' -> (date, precision, warns), 'round' -> (round, board, warns),
    'board' -> (board, warns), 'elo' -> (rating, warns),
    'fide_id' -> (warns,), 'clean' -> (value or None,), 'eco' -> (value or None,),
    'odd_name' -> (bool,).
    `ascii_headers`: only tag sections in ASCII can be fast (a file with signs of mojibake).
    `executor`: where the hashes are computed (elopipe.read.execution; None: here, now).

    Columns of `Analysis.games`: g Int64 (raw game, 0-based), fast Boolean, marker String, the
    `GAME_TAGS` as String, game_date Date, date_precision String, event_date Date,
    event_precision String, round Int32, board Int32, white_rating Int32, black_rating Int32,
    eco String, time_control String. `Analysis.hashes()` adds movetext_hash, ply_count and json
    (the tags as JSON text) of the fast games.
    Returns None when the bytes are not valid UTF-8 (the caller reads one by one).
    """
    try:
        raw = pl.DataFrame({"h": _strings(headers), "m": _strings(movetexts)})
    except pl.exceptions.PolarsError:
        return None
    h = pl.col.h
    header_ok = (
        h.str.ends_with("\n")
        & (h.str.count_matches("\n", literal=True) == h.str.count_matches("[", literal=True))
        & pl.col.names.is_not_null()
        & (h.str.len_chars() <= 10_000)
        & ~h.str.contains(_CONTROL)
    )
    if ascii_headers:
        header_ok = header_ok & h.str.contains(_ASCII)
    braces_ok, pre = _movetext(raw.get_column("m"))
    names, tag_lines = _tag_lines(raw.get_column("h"))
    lines = pl.col.lines
    fast = (
        raw.select("h", pre, braces_ok, names)
        .lazy()
        .with_row_index("g")
        .filter(header_ok)
        .filter("braces_ok")
        .filter(pl.col.pre.str.contains(_CLEAN))
        .join(tag_lines.lazy(), on="names", how="left", maintain_order="left")
        .with_columns(h.str.split("\n").alias("lines"))
        .select(
            pl.col.g.cast(pl.Int64),
            "h",
            "pre",
            pl.col.pre.str.extract(rf"({_MARKER}){_WS}*$", 1).alias("marker"),
            # the movetext is clean, so two SAN moves in a row mean at least 2 plies, and a move
            # takes at least 3 bytes: cheap bounds for the ply count
            pl.col.pre.str.contains(_TWO_MOVES).alias("two_moves"),
            pl.col.pre.str.len_bytes().alias("pre_bytes"),
            pl.lit(True).alias("fast"),
            # each tag's value from its line (`_tag_lines`): `[Tag "` cut, then `"]`
            *(
                lines.list.get(pl.col(f"line_{tag}"), null_on_oob=True)
                .str.slice(len(tag) + 3)
                .str.strip_suffix('"]')
                .alias(tag)
                for tag in GAME_TAGS
            ),
        )
        .collect(engine="streaming")
    )
    hashes = submit(executor, _hashes, fast.select("g", "pre", "h"))
    games = (
        pl.DataFrame({"g": pl.arange(0, raw.height, eager=True, dtype=pl.Int64)})
        .join(fast.drop("h", "pre"), on="g", how="left", maintain_order="left")
        .with_columns(pl.col.fast.fill_null(False))
    )
    return Analysis(_derive(games, value_rules), fast.select("g", "h"), hashes)


def _derive(games: pl.DataFrame, rules: dict[str, Callable[[str], tuple[Any, ...]]]) -> pl.DataFrame:
    """The per-game values, and `fast` narrowed to the games that raise no issue and no flag."""
    c = pl.col
    b, i32, s, d = pl.Boolean, pl.Int32, pl.String, pl.Date
    gdate, gprec, gwarn = _map(games, "Date", rules["date"], [d, s, b])
    edate, eprec, ewarn = _map(games, "EventDate", rules["event_date"], [d, s, b])
    rnd, rboard, rwarn = _map(games, "Round", rules["round"], [i32, i32, b])
    board, bwarn = _map(games, "Board", rules["board"], [i32, b])
    welo, wewarn = _map(games, "WhiteElo", rules["elo"], [i32, b])
    belo, bewarn = _map(games, "BlackElo", rules["elo"], [i32, b])
    (wfid,) = _map(games, "WhiteFideId", rules["fide_id"], [b])
    (bfid,) = _map(games, "BlackFideId", rules["fide_id"], [b])
    (wodd,) = _map(games, "White", rules["odd_name"], [b])
    (bodd,) = _map(games, "Black", rules["odd_name"], [b])
    (tc,) = _map(games, "TimeControl", rules["clean"], [s])
    (eco,) = _map(games, "ECO", rules["eco"], [s])
    term = c.Termination
    term_l = term.str.to_lowercase()
    warns = [gwarn, ewarn, rwarn, bwarn, wewarn, bewarn, wfid, bfid, wodd, bodd]
    ok = (
        c.fast
        & (c.Result == c.marker)
        & c.FEN.is_null()
        & c.Variant.is_null()
        & (term.is_null() | (term.str.contains(_ASCII) & ~unplayed_termination_expr(term_l) & (term_l != "bye")))
        & (c.two_moves | (c.Result == "*"))  # fewer than 2 plies are flagged
        & (c.pre_bytes <= 3 * PLY_MAX)  # then at most PLY_MAX plies
        & c.White.is_not_null()
        & c.Black.is_not_null()
        & (gdate.is_not_null() | edate.is_null())  # a date taken from EventDate is flagged
        & ~pl.any_horizontal(w.fill_null(False) for w in warns)
    )
    return games.select(
        "g",
        ok.fill_null(False).alias("fast"),
        "marker",
        "two_moves",
        *GAME_TAGS,
        gdate.alias("game_date"),
        gprec.fill_null("none").alias("date_precision"),
        edate.alias("event_date"),
        eprec.fill_null("none").alias("event_precision"),
        rnd.alias("round"),
        pl.coalesce(board, rboard).alias("board"),
        welo.alias("white_rating"),
        belo.alias("black_rating"),
        eco.alias("eco"),
        tc.alias("time_control"),
    )
