"""Which rows of two sources are one game, and the `game_sources` rows that say so.

The rules (`elopipe.identity.dedup`'s docstring: "Two rows are the same game when", and the
canonical row of a cluster): `match_rule` decides whether two rows of the same players are one
game and by which rule (the ``game_sources.match_rule`` names); `precedence` orders a cluster's
rows, canonical first, on content only; `write_links` writes a cluster's rows with their roles
('canonical', 'result', 'moves', 'duplicate') and rules. `dedup` finds the clusters.

Errors: none raised on data; SQL errors propagate (the loader rolls back the file).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import duckdb
import polars as pl

from elopipe.identity.event_sources import EVENT_DATE_PLIES, SHORT_PLIES, Span, compatible
from elopipe.store import write


@dataclass
class GameRow:
    game_id: int
    tournament_id: int
    file_id: int
    fmt: str
    round: int | None
    white_id: int | None
    black_id: int | None
    result: str
    movetext_hash: str | None
    ply_count: int | None
    game_date: dt.date | None
    day_precise: bool
    round_label: str | None
    game_index: int | None
    event_games: int = 0  # games of its tournament in its file: the fuller source of an event wins
    event_name: str | None = None
    event_start: dt.date | None = None
    rate_class: str | None = None
    # its file's last game, with moves but no termination marker: a file cut short (a copy or
    # download that stopped) wrote only the first of its moves
    cut: bool = False
    # distinct game dates of its tournament: a source that dates each game by its day of play has
    # more than one that writes the event's start or end date on every game
    event_days: int = 0


def _short(g: GameRow) -> bool:
    # an unknown length is not proof of a long game
    return g.ply_count is None or g.ply_count < SHORT_PLIES


def _within(day: dt.date, span: Span) -> bool:
    return span[1] is not None and span[1] <= day <= (span[2] or span[1])


# `match_rule`'s name for `event_dated`; `event_dated_short`'s, given by `dedup` on the evidence of the former
EVENT_DATE_RULE = "round_players+hash+event_date"
EVENT_DATE_SHORT_RULE = "round_players+hash+event_date+short"
# two rows of one tournament, one game written twice (`match_rule`)
SAME_FILE_RULE = "same_file_hash"


def _long_same(a: GameRow, b: GameRow) -> bool:
    # equal movetext hashes of at least EVENT_DATE_PLIES plies on both rows
    long = (a.ply_count or 0) >= EVENT_DATE_PLIES and (b.ply_count or 0) >= EVENT_DATE_PLIES
    return long and a.movetext_hash is not None and a.movetext_hash == b.movetext_hash


def _same_moves_event_days(a: GameRow, b: GameRow, sa: Span, sb: Span) -> bool:
    # what `event_dated` and `event_dated_short` share: equal moves (never two rows without), the
    # same main round and labels that do not conflict (`labels_conflict`: a sub-part on one side
    # only when the moves are long), one event key, one row's date a day of play of the other's
    if a.movetext_hash is None or a.movetext_hash != b.movetext_hash:
        return False
    if (
        a.round is None
        or a.round != b.round
        or labels_conflict(a.round_label, b.round_label, one_sided=_long_same(a, b))
    ):
        return False
    if not sa[0] or sa[0] != sb[0] or a.game_date is None or b.game_date is None:
        return False
    return _within(a.game_date, sb) or _within(b.game_date, sa)


def event_dated(a: GameRow, b: GameRow, sa: Span, sb: Span) -> bool:
    """Two rows more than a day apart are still one game when one source dates every game by the
    event's start or end day: equal movetext hashes of at least `EVENT_DATE_PLIES` plies on both
    sides, the same main round and round labels that do not conflict, one event key (not empty), and the date of one
    row a day of play of the other's tournament (`Span`). (The players and colours are equal:
    `match_rule` compares rows of the same White and Black.) Two real games of one event, round,
    players and colours with the same long moves do not occur; a short repetition draw does recur,
    and stays two games here (`event_dated_short`: unless the two tournaments' long games link)."""
    if (a.ply_count or 0) < EVENT_DATE_PLIES or (b.ply_count or 0) < EVENT_DATE_PLIES:
        return False
    return _same_moves_event_days(a, b, sa, sb)


def event_dated_short(a: GameRow, b: GameRow, spans: dict[int, Span]) -> bool:
    """The conditions a pair of rows of two tournaments must meet to be one game by
    ``round_players+hash+event_date+short`` (`elopipe.identity.dedup`'s docstring): the same White
    and Black, equal movetext hashes (not null) and results, the same main round and round label
    (`labels_conflict`: zero padding aside),
    one event key (not empty), one row's date a day of play of the other's tournament, dates and
    rates compatible (`event_sources.compatible`), whatever the length of the moves. Not enough
    alone: the caller (`dedup.short_dated_pairs`) asks it only of the rows of two tournaments that
    are sources of one event and whose long games `event_dated` links, and only of a row that is
    the only one of its key (players, round, label, moves, result) in its tournament, facing the
    only one in the other."""
    sa, sb = spans.get(a.tournament_id), spans.get(b.tournament_id)
    if sa is None or sb is None or a.tournament_id == b.tournament_id or a.result != b.result:
        return False
    if a.white_id is None or (a.white_id, a.black_id) != (b.white_id, b.black_id):
        return False
    return compatible(sa, sb, a.rate_class, b.rate_class) and _same_moves_event_days(a, b, sa, sb)


def _label_parts(label: str | None) -> tuple[str, ...]:
    # zero padding is spelling ('03' is '3', '3.01' is '3.1'); '?' and '' say nothing
    text = (label or "").strip()
    if text in ("", "?", "-"):
        return ()
    return tuple(p.lstrip("0") or "0" if p.isdigit() else p for p in text.split("."))


def label_key(label: str | None) -> str | None:
    """A round label without its zero padding ('03.01' -> '3.1'); None for none, '' or '?'."""
    parts = _label_parts(label)
    return ".".join(parts) if parts else None


def label_key_expr(col: str) -> pl.Expr:
    """`label_key` of the String column `col`, as a frame expression."""
    part = pl.element()
    parts = pl.col(col).str.strip_chars().str.split(".")
    unpadded = pl.when(part.str.contains(r"^[0-9]+$")).then(part.str.strip_chars_start("0").replace("", "0"))
    key = parts.list.eval(unpadded.otherwise(part)).list.join(".")
    return pl.when(pl.col(col).str.strip_chars().is_in(["", "?", "-"])).then(None).otherwise(key)


def labels_conflict(a: str | None, b: str | None, one_sided: bool = False) -> bool:
    """Whether two round labels of one main round name two games: both given and different after
    zero padding is dropped ('01' is '1'). A knockout's round '1' is '1.1' .. '1.6' (its games and
    tiebreaks between the same two players, colours alternating, so '1.3' and '1.5' have the same
    White and may repeat one draw or one result): two such rows are two games, whatever their
    moves, result or sources. A sub-part on one side only ('3' and '3.1': a TRF's or organiser's
    round and a broadcast's round.board) is no conflict when `one_sided` (`match_rule`: as the
    rows' main rounds are compared), and is one otherwise (`event_dated_short`: a short draw
    written '1' could be any game of a knockout round)."""
    pa, pb = _label_parts(a), _label_parts(b)
    if not pa or not pb or pa == pb:
        return False
    return not (one_sided and (len(pa) == 1 or len(pb) == 1) and pa[0] == pb[0])


def match_rule(a: GameRow, b: GameRow, spans: dict[int, Span], events: set[tuple[int, int]]) -> str | None:
    """The rule by which two rows (same players) are one game, or None (`elopipe.identity.dedup`'s docstring).

    `events`: the pairs of tournaments (lower id first) that are sources of one event
    (`event_sources.one_event`); without it only equal moves, of at least `SHORT_PLIES` plies, link rows."""
    both_moves = a.movetext_hash is not None and b.movetext_hash is not None
    same_hash = both_moves and a.movetext_hash == b.movetext_hash
    if a.tournament_id == b.tournament_id:
        # one game written twice in a file; a copy without its round is the game when its moves
        # are long enough to be no repetition (two rounds' quick draws stay two games). Two labels
        # of one round are two games: a knockout's '3.1' and its tiebreak '3.3', the same colours,
        # may repeat the same draw
        labels = a.round_label is None or b.round_label is None or a.round_label == b.round_label
        one_round = (a.round == b.round and labels) or (
            (a.round is None or b.round is None) and not (_short(a) or _short(b))
        )
        return SAME_FILE_RULE if same_hash and one_round else None
    sa, sb = spans.get(a.tournament_id), spans.get(b.tournament_id)
    if sa is None or sb is None or not compatible(sa, sb, a.rate_class, b.rate_class):
        return None
    dated = False  # one source writes the event's start or end day on every game (`event_dated`)
    if a.day_precise and b.day_precise and a.game_date and b.game_date:
        if abs((a.game_date - b.game_date).days) > 1:
            if not event_dated(a, b, sa, sb):
                return None
            dated = True
    one_event = (min(a.tournament_id, b.tournament_id), max(a.tournament_id, b.tournament_id)) in events
    if not one_event and not (same_hash and not _short(a) and not _short(b)):
        return None
    if a.round is None or b.round is None:
        return "hash_players" if same_hash else None
    if a.round != b.round or labels_conflict(a.round_label, b.round_label, one_sided=True):
        return None
    if both_moves and not same_hash:
        if "*" in (a.result, b.result) or a.cut or b.cut:  # moves still growing, or cut short
            return "round_players+broadcast"
        # same length and result: the SAN is written differently ('Ngf3' for 'Nf3'), same game
        if a.result == b.result and a.ply_count and a.ply_count == b.ply_count:
            return "round_players+plies"
        return None
    if dated:
        return EVENT_DATE_RULE
    return "round_players+hash" if same_hash else "round_players"


def precedence(g: GameRow) -> tuple[bool, bool, int, bool, int, int, str, str, int, str, dt.date, str, int]:
    # only content decides (the loader links before the file's ledger row exists, and ids
    # depend on ingestion order): the event's name and start date, then the result, settle rows
    # equal on the rest (two sources of one event that disagree on a result)
    return (
        g.result == "*",
        g.fmt != "trf",
        -g.event_games,
        g.movetext_hash is None,
        -(g.ply_count or 0),
        -g.event_days,
        g.movetext_hash or "",
        g.round_label or "",
        g.game_index if g.game_index is not None else 0,
        g.event_name or "",
        g.event_start or dt.date.min,
        g.result,
        g.game_id,
    )


# `precedence` as a frame sort (the same keys in the same order)
_PRECEDENCE_SORT = [
    pl.col("result") == "*",
    pl.col("source_format") != "trf",
    -pl.col("event_games"),
    pl.col("movetext_hash").is_null(),
    -pl.col("ply_count").fill_null(0),
    -pl.col("event_days"),
    pl.col("movetext_hash").fill_null(""),
    pl.col("round_label").fill_null(""),
    pl.col("game_index").fill_null(0),
    pl.col("event_name").fill_null(""),
    pl.col("event_start").fill_null(dt.date.min),
    pl.col("result"),
    pl.col("game_id"),
]


def write_links(
    con: duckdb.DuckDBPyConnection,
    g: pl.DataFrame,
    reps: dict[int, GameRow],
    spans: dict[int, Span],
    events: set[tuple[int, int]],
    short: set[tuple[int, int]] | None = None,
) -> int:
    """Insert the `game_sources` rows of the clustered rows `g` (columns of `dedup._load_frame`, plus
    `pos`, `cls`, `comp`): canonical row by `precedence`, roles, rules. `short`: the class pairs
    (lower first) linked by ``round_players+hash+event_date+short`` (`dedup.short_dated_pairs`),
    which `match_rule` alone does not link. Returns the clusters."""
    linked_short = short or set()

    def rule_of(a: int, b: int) -> str | None:
        found = match_rule(reps[a], reps[b], spans, events)
        if found is None and (min(a, b), max(a, b)) in linked_short:
            return EVENT_DATE_SHORT_RULE
        return found

    g = g.with_columns(pl.col("pos").min().over("comp").alias("first")).sort([pl.col("first"), *_PRECEDENCE_SORT])
    rank = pl.int_range(pl.len()).over("comp")
    g = g.with_columns(rank.alias("rank")).with_columns(
        pl.col("game_id").first().over("comp").alias("canon_id"),
        pl.col("cls").first().over("comp").alias("canon_cls"),
        pl.col("result").first().over("comp").alias("canon_result"),
        pl.col("movetext_hash").first().over("comp").is_null().alias("canon_no_moves"),
        pl.when((pl.col("rank") > 0) & pl.col("movetext_hash").is_not_null())
        .then(pl.col("rank"))
        .otherwise(None)
        .min()
        .over("comp")
        .alias("mover_rank"),
    )
    has_mover = pl.col("canon_no_moves") & pl.col("mover_rank").is_not_null()
    # a row of the canonical row's own class (a game written twice in one file): `match_rule` of a
    # class with itself is 'same_file_hash' when it has moves, else none; given here for the
    # thousands of such rows, so that only pairs of two classes are asked in Python
    pairs = g.filter((pl.col("rank") > 0) & (pl.col("cls") != pl.col("canon_cls"))).select("canon_cls", "cls").unique()
    pair_rule = pairs.with_columns(pl.Series("rule", [rule_of(a, b) for a, b in pairs.iter_rows()], dtype=pl.Utf8))
    own_class = pl.when(pl.col("movetext_hash").is_not_null()).then(pl.lit(SAME_FILE_RULE))
    g = g.join(pair_rule, on=["canon_cls", "cls"], how="left", maintain_order="left").with_columns(
        pl.when(pl.col("rank") == 0)
        .then(pl.lit("canonical"))
        .when(pl.col("cls") == pl.col("canon_cls"))
        .then(own_class)
        .otherwise(pl.col("rule"))
        .alias("rule")
    )
    missing = g.filter(pl.col("rule").is_null())
    if missing.height:
        # no direct match with the canonical row: the rule of the first row in precedence order
        # that matches this one directly
        members: dict[int, list[tuple[int, int]]] = {}
        for comp, game_id, cls in (
            g.filter(pl.col("comp").is_in(missing["comp"].unique().to_list()))
            .select("comp", "game_id", "cls")
            .iter_rows()
        ):
            members.setdefault(comp, []).append((game_id, cls))
        fixed: dict[int, str] = {}
        for comp, game_id, cls in missing.select("comp", "game_id", "cls").iter_rows():
            fixed[game_id] = next(
                (r for o_id, o_cls in members[comp] if o_id != game_id and (r := rule_of(o_cls, cls))),
                "cluster",
            )
        g = g.with_columns(pl.col("rule").fill_null(pl.col("game_id").replace_strict(fixed, default=None)))
    rules = pl.col("rule")
    differs = (
        (pl.col("rank") > 0)
        & (pl.col("result") != "*")
        & (pl.col("canon_result") != "*")
        & (pl.col("result") != pl.col("canon_result"))
    )
    out = g.select(
        pl.col("canon_id").cast(pl.Int64).alias("game_id"),
        pl.col("game_id").cast(pl.Int64).alias("source_game_id"),
        pl.col("file_id").cast(pl.Int64),
        pl.when(differs).then(rules + ";result_differs").otherwise(rules).alias("match_rule"),
        pl.when(pl.col("rank") == 0)
        .then(pl.when(has_mover).then(pl.lit("result")).otherwise(pl.lit("canonical")))
        .when(has_mover & (pl.col("rank") == pl.col("mover_rank")))
        .then(pl.lit("moves"))
        .otherwise(pl.lit("duplicate"))
        .alias("role"),
    )
    write.insert(con, "game_sources", out)
    return g["comp"].n_unique()
