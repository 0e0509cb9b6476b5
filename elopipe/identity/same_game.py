"""One game in two sources under two spellings: the evidence that makes two players one.

`dedup` links two rows of one game only when both rows name the same players. When two sources
spell a player differently ('So,W' in a TWIC-style file, 'So, Wesley' in the organiser's PGN;
'Meier,Geo' and 'Meier, Georg') and no other rule links the spellings (a two-letter surname, a
three-letter initial, event names that differ: '74th Tata Steel GMA' / 'Tata Steel-A 74th'), the
player is two players and each game of his is counted twice. `same_game_pairs` finds such
players from the games themselves; `consolidate` merges them (rule 'same_game'), and the games
are then one game for `dedup`.

**The evidence, per game** (a game of the batch's files and a game of another tournament whose
days of play are near, `identity.near_tournaments`):

* the same day-precise date, the same final result (not ``*``), the same main round (or, when a
  round is missing on one side, equal moves of at least `event_sources.SHORT_PLIES` plies);
* the same moves, where both rows have moves (equal movetext hashes); no two known, different
  rates of play;
* both colours' players are one player already, or written names of the same surname whose
  given names or initials agree (`read.names.same_surname_initials`), with no identifier or birth
  year contradicting; at least one colour differs.

**Per pair of players**: two such games, or one with equal moves of at least `SHORT_PLIES`
plies (a quick draw repeated in another event is no proof on its own), and each player the only
partner of the other (a 'Wang,H' whose games match two players stays apart). Two short identical
games between players whose surnames differ are never evidence: the names must agree.

Cost: the batch's games joined with the games of the tournaments near the batch's on the days the
batch played, by equality joins: on the date, result, round and a name word (two letters or more)
each colour's players share, or on equal moves; the name test runs in Python on those few pairs.
Pairs whose identifiers, birth years or rates of play contradict are left out in SQL, and games
whose four players carry a FIDE ID are joined on those IDs first (a FIDE month: 0.9 -> 0.2 CPU-s).
A game always meets itself (and the copies of itself in its own tournament) on the name words'
keys: the batch's rows whose keys only games of their own tournament, or only games between their
own two players, share are left out before that join, so that it pairs the few others (a PGN
archive of repeated games: 1.0 -> 0.5 CPU-s); and a game enters that join only when a game of its
day, round and result lies in another tournament (0.47 -> 0.36 CPU-s of SQL on that archive).
Errors: none raised on data; SQL errors propagate (the loader rolls back).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import duckdb

from elopipe.identity.event_sources import SHORT_PLIES
from elopipe.identity.nearby import near_tournaments
from elopipe.read.names import same_surname_initials

RULE = "same_game"


def _agree(a: str, b: str) -> str:
    """SQL condition: games `a` and `b` (rows of `b`/`n` below) have no rate classes known on both
    sides and different, and, for each colour, no FIDE ID, national ID or birth year known on
    both sides and different: `same_game_pairs` would reject the pair anyway (`_no_contradiction`;
    a player is never in contradiction with himself), so it is dropped before the costly joins."""
    colours = [f"NOT coalesce({a}.{c}{x} <> {b}.{c}{x}, false)" for c in ("w", "k") for x in ("fi", "ni", "yi")]
    return " AND ".join([f"NOT coalesce({a}.rc <> {b}.rc, false)", *colours])


def _tokens(name: str, games: str) -> str:
    """A CTE `name`: the rows of `games`, one per name word of its white (wt) and black (kt) player."""
    return (
        f"{name} AS (SELECT g.*, w.tok AS wt, k.tok AS kt FROM {games} g JOIN tok w ON w.player_id = g.white_id"
        f" JOIN tok k ON k.player_id = g.black_id)"
    )


def _others(name: str, side: str, other: str) -> str:
    """A CTE `name`: the rows of `side` (rows of `_tokens`) that share their day, result, round and
    name words with a game of `other` from another tournament and between other players. The
    others can pair with no game of `other` (the pair needs another tournament and a colour whose
    players differ); most rows meet only themselves, so the join that follows pairs the few left."""
    return (
        f"{name} AS MATERIALIZED (SELECT s.* FROM {side} s JOIN (SELECT game_date, result, round, wt, kt,"
        " min(tournament_id) AS t_lo, max(tournament_id) AS t_hi, min(white_id) AS w_lo, max(white_id) AS w_hi,"
        f" min(black_id) AS k_lo, max(black_id) AS k_hi FROM {other} GROUP BY ALL) o"
        " USING (game_date, result, round, wt, kt)"
        " WHERE NOT (o.t_lo = s.tournament_id AND o.t_hi = s.tournament_id)"
        " AND NOT (o.w_lo = s.white_id AND o.w_hi = s.white_id AND o.k_lo = s.black_id AND o.k_hi = s.black_id))"
    )


# Two games of one day, result, round and players' name words, in two tournaments; and their
# moves, where both have them, equal
_SAME_GAME = (
    "bk.game_date = nk.game_date AND bk.result = nk.result AND bk.round = nk.round AND bk.wt = nk.wt"
    " AND bk.kt = nk.kt AND bk.tournament_id <> nk.tournament_id"
)
_MOVES = "(bk.movetext_hash IS NULL OR nk.movetext_hash IS NULL OR bk.movetext_hash = nk.movetext_hash)"


# Per game pair and colour whose players differ: the two entries as written, and the game's
# facts for the evidence. `b`: a game of the batch's files; `n`: a game of a tournament near.
def _sides(b0: str, n0: str) -> str:
    """CTEs `b0` (a game of the batch's files) and `n0` (a game of a tournament near), by these names."""
    return f"""
{b0} AS (
    SELECT game_id, tournament_id, white_id, black_id, round, game_date, result, movetext_hash, ply_count
    FROM games WHERE file_id IN (SELECT UNNEST($files)) AND date_precision = 'day' AND result <> '*' AND played
      AND white_id IS NOT NULL AND black_id IS NOT NULL
),
{n0} AS (  -- only the days the batch played: the join does not grow with the neighbours' other days
    SELECT game_id, tournament_id, white_id, black_id, round, game_date, result, movetext_hash, ply_count
    FROM games WHERE tournament_id IN (SELECT UNNEST($near)) AND game_date IN (SELECT game_date FROM {b0})
      AND date_precision = 'day' AND played AND white_id IS NOT NULL AND black_id IS NOT NULL
)"""


_SIDES = _sides("b0", "n0")

# The rows of each side equal on every column the pairing reads, the game id aside, as one row (a
# class): `game_id` the lowest of its games, `ids` all of them. The joins below read those columns
# only, so a pair of classes stands for every pair of their games, expanded once the pairs are
# found: a file holding each game several times (the PGN bench file, an archive concatenated 8
# times) is joined once a game, not once a copy on each side (0.43 -> 0.18 CPU-s of SQL there).
# Grouping costs where games do not repeat (a TRF month: 0.1 CPU-s): there the query joins the
# games themselves (`_SQL`), as before classes.
_CLASS_COLS = "tournament_id, white_id, black_id, round, game_date, result, movetext_hash, ply_count"
_GROUPED = f"""{_sides("b0r", "n0r")},
b0 AS (SELECT min(game_id) AS game_id, list(game_id) AS ids, {_CLASS_COLS} FROM b0r GROUP BY ALL),
n0 AS (SELECT min(game_id) AS game_id, list(game_id) AS ids, {_CLASS_COLS} FROM n0r GROUP BY ALL)"""

# Whether `_SQL` can return a row: every row pairs a game of `b0` with one of `n0` from another
# tournament, and such a pair exists exactly when both sides hold a game and their games lie in
# two tournaments or more. Read first, from the batch's games and those of the near tournaments on
# its days only: a batch that meets no other source's game on its days (a new event, a month after
# the store's last) skips the joins below, whose plan costs ~0.04 CPU-s even on no rows (issue 27).
_ANY_PAIR_SQL = f"""
WITH {_SIDES}
SELECT (SELECT count(*) FROM b0) > 0 AND (SELECT count(*) FROM n0) > 0
       AND (SELECT count(DISTINCT tournament_id) FROM (SELECT tournament_id FROM b0 UNION ALL
                                                      SELECT tournament_id FROM n0)) > 1,
       -- whether the batch's games repeat (`_GROUPED`): the same moves twice or more in about a
       -- tenth of them (an estimate is enough: both queries give the same rows; exact, 0.003 CPU-s more)
       (SELECT 10 * (count(movetext_hash) - approx_count_distinct(movetext_hash)) >= count(*) FROM b0)
"""

_SQL_TEMPLATE = f"""
WITH {{SIDES}},
-- each player's identifiers and birth year, 0 and '' read as unknown (`_no_contradiction`)
f AS (
    SELECT player_id, nullif(fide_id, 0) AS fi, nullif(national_id, '') AS ni, nullif(birth_year, 0) AS yi
    FROM players WHERE player_id IN (SELECT white_id FROM b0 UNION SELECT black_id FROM b0
                                     UNION SELECT white_id FROM n0 UNION SELECT black_id FROM n0)
),
b AS (SELECT b0.*, w.fi AS wfi, w.ni AS wni, w.yi AS wyi, k.fi AS kfi, k.ni AS kni, k.yi AS kyi,
             nullif(t.rate_class, '') AS rc
      FROM b0 JOIN f w ON w.player_id = b0.white_id JOIN f k ON k.player_id = b0.black_id
      JOIN tournaments t ON t.tournament_id = b0.tournament_id),
n AS (SELECT n0.*, w.fi AS wfi, w.ni AS wni, w.yi AS wyi, k.fi AS kfi, k.ni AS kni, k.yi AS kyi,
             nullif(t.rate_class, '') AS rc
      FROM n0 JOIN f w ON w.player_id = n0.white_id JOIN f k ON k.player_id = n0.black_id
      JOIN tournaments t ON t.tournament_id = n0.tournament_id),
-- FIDE IDs two players carry: a pair of `pf` has the same FIDE IDs on both colours and another
-- player on one (`m`), so both its games have a White or a Black of these; most batches have none
dup AS (SELECT fi FROM f WHERE fi IS NOT NULL GROUP BY fi HAVING count(*) > 1),
-- games whose four players all carry a FIDE ID (most games): joined on them, an equality the pair
-- needs anyway (`_agree`), among the games with a FIDE ID of `dup` only
pf AS (
    SELECT bk.game_id AS ga, nk.game_id AS gb, bk.white_id AS wa, nk.white_id AS wb, bk.black_id AS ba,
           nk.black_id AS bb
    FROM (SELECT * FROM b WHERE wfi IN (SELECT fi FROM dup) OR kfi IN (SELECT fi FROM dup)) bk
    JOIN (SELECT * FROM n WHERE wfi IN (SELECT fi FROM dup) OR kfi IN (SELECT fi FROM dup)) nk
     ON bk.game_date = nk.game_date AND bk.result = nk.result AND bk.round = nk.round
     AND bk.wfi = nk.wfi AND bk.kfi = nk.kfi AND bk.tournament_id <> nk.tournament_id
    WHERE {_MOVES} AND {_agree("bk", "nk")}
),
-- the other games (a player without FIDE ID), each side with the games of the other side's day,
-- round and result, in another tournament (a pair needs one), only
bu AS (SELECT * FROM b WHERE wfi IS NULL OR kfi IS NULL),
nu AS (SELECT * FROM n WHERE wfi IS NULL OR kfi IS NULL),
bx AS (SELECT * FROM b WHERE EXISTS (SELECT 1 FROM nu WHERE nu.game_date = b.game_date AND nu.round = b.round
                                     AND nu.result = b.result AND nu.tournament_id <> b.tournament_id)),
nx AS (SELECT * FROM n WHERE EXISTS (SELECT 1 FROM bu WHERE bu.game_date = n.game_date AND bu.round = n.round
                                     AND bu.result = n.result AND bu.tournament_id <> n.tournament_id)),
-- each player's name words of two letters or more (a surname): both colours must share one, so
-- the join pairs the few games of namesakes, never every two games of one day and round
tok AS (
    SELECT player_id, UNNEST(list_distinct(list_filter(string_split(name_key, ' '), lambda t: length(t) >= 2)))
           AS tok
    FROM players WHERE player_id IN (SELECT wa FROM pf UNION SELECT wb FROM pf UNION SELECT ba FROM pf
                                     UNION SELECT bb FROM pf UNION SELECT white_id FROM bu
                                     UNION SELECT black_id FROM bu UNION SELECT white_id FROM nu
                                     UNION SELECT black_id FROM nu UNION SELECT white_id FROM bx
                                     UNION SELECT black_id FROM bx UNION SELECT white_id FROM nx
                                     UNION SELECT black_id FROM nx)
),
{_tokens("buk", "bu")},
{_tokens("nuk", "nu")},
{_tokens("bxk", "bx")},
{_tokens("nxk", "nx")},
{_others("buo", "buk", "nxk")},
{_others("bxo", "bxk", "nuk")},
-- games with long enough moves, filtered before their join: games without moves (a TRF's)
-- share one date and result by the thousand, and a join on those alone would pair them all
bl AS MATERIALIZED (SELECT * FROM b WHERE movetext_hash IS NOT NULL AND ply_count >= $short),
nl AS MATERIALIZED (SELECT * FROM n WHERE movetext_hash IS NOT NULL AND ply_count >= $short),
pairs AS (
    SELECT DISTINCT pf.ga, pf.gb FROM pf  -- each colour's players share a name word
    JOIN tok w1 ON w1.player_id = pf.wa JOIN tok w2 ON w2.player_id = pf.wb AND w2.tok = w1.tok
    JOIN tok k1 ON k1.player_id = pf.ba JOIN tok k2 ON k2.player_id = pf.bb AND k2.tok = k1.tok
    UNION
    SELECT bk.game_id, nk.game_id FROM buo bk JOIN nxk nk ON {_SAME_GAME} WHERE {_MOVES} AND {_agree("bk", "nk")}
    UNION
    SELECT bk.game_id, nk.game_id FROM bxo bk JOIN nuk nk ON {_SAME_GAME} WHERE {_MOVES} AND {_agree("bk", "nk")}
    UNION  -- a round missing on one side: equal moves, long enough (one join a side, each small)
    SELECT bl.game_id, nl.game_id FROM bl JOIN nl ON bl.movetext_hash = nl.movetext_hash
     AND bl.game_date = nl.game_date AND bl.result = nl.result AND bl.tournament_id <> nl.tournament_id
    WHERE bl.round IS NULL AND {_agree("bl", "nl")}
    UNION
    SELECT bl.game_id, nl.game_id FROM bl JOIN nl ON bl.movetext_hash = nl.movetext_hash
     AND bl.game_date = nl.game_date AND bl.result = nl.result AND bl.tournament_id <> nl.tournament_id
    WHERE nl.round IS NULL AND {_agree("bl", "nl")}
),
m AS (
    SELECT {{IDS}}, b.tournament_id AS ta, n.tournament_id AS tb,
           b.white_id AS wa, n.white_id AS wb, b.black_id AS ba, n.black_id AS bb, b.game_date, b.result,
           coalesce(b.round, n.round) AS round,
           (b.movetext_hash = n.movetext_hash AND b.ply_count >= $short AND n.ply_count >= $short) AS long_moves
    FROM pairs JOIN b ON b.game_id = pairs.ga JOIN n ON n.game_id = pairs.gb
    WHERE b.tournament_id <> n.tournament_id AND (b.white_id <> n.white_id OR b.black_id <> n.black_id)
),
sides AS (
    SELECT ia, ib, ta, tb, wa AS pa, wb AS pb, game_date, result, round, long_moves, 'white' AS colour,
           ba AS opp_a, bb AS opp_b FROM m
    UNION ALL
    SELECT ia, ib, ta, tb, ba, bb, game_date, result, round, long_moves, 'black', wa, wb FROM m
),
-- the entries of the pairs' tournaments only: joined whole, the store's entries were read and
-- hashed for every batch, even one whose games pair with none (issue 27)
tp AS (
    SELECT tournament_id, player_id, name_as_written FROM tournament_players
    WHERE tournament_id IN (SELECT ta FROM sides UNION SELECT tb FROM sides)
),
-- one row a pair of games (or of classes: their games' ids as lists, `game_rows`) and colour
SELECT s.ia, s.ib, s.colour, s.pa, s.pb, xa.name_as_written, xb.name_as_written, s.game_date, s.result, s.round,
       s.long_moves, oa.name_as_written, s.ta, ta.name, s.tb, tb.name, ta.rate_class, tb.rate_class
FROM sides s
JOIN tournaments ta ON ta.tournament_id = s.ta JOIN tournaments tb ON tb.tournament_id = s.tb
LEFT JOIN tp xa ON xa.tournament_id = s.ta AND xa.player_id = s.pa
LEFT JOIN tp xb ON xb.tournament_id = s.tb AND xb.player_id = s.pb
LEFT JOIN tp oa ON oa.tournament_id = s.ta AND oa.player_id = s.opp_a
"""
# The games themselves, one row a pair of games and colour, ordered by these three
_SQL = (
    _SQL_TEMPLATE.replace("{SIDES}", _SIDES).replace("{IDS}", "b.game_id AS ia, n.game_id AS ib") + "ORDER BY 1, 2, 3\n"
)
# The classes of games (`_GROUPED`), one row a pair of classes and colour: `game_rows` makes the
# row of each pair of their games in Python (29k rows fetched from DuckDB and sorted there cost
# 0.04 CPU-s more than made there, on the PGN bench file)
_SQL_GROUPED = _SQL_TEMPLATE.replace("{SIDES}", _GROUPED).replace("{IDS}", "b.ids AS ia, n.ids AS ib")


def game_rows(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The rows of `_SQL_GROUPED` (a list of game ids on each side, then the colour...) as `_SQL`
    gives them: one a pair of games and colour, (game a, game b, colour, ...), ordered by these."""
    out = [(ga, gb, *rest) for ia, ib, *rest in rows for ga in ia for gb in ib]
    out.sort(key=itemgetter(0, 1, 2))
    return out


# what the evidence says of a game: White, Black, result, round, day, and each tournament's name and id
_GameFacts = tuple[str | None, str | None, str, int | None, Any, str | None, int, str | None, int]


@dataclass
class _Game:
    """One game both sources hold, as evidence for one colour's pair of players."""

    game_ids: tuple[int, int]
    long_moves: bool
    facts: _GameFacts

    @property
    def text(self) -> str:
        """The game, for the evidence (written when asked: a link's first game only is)."""
        white, black, result, rnd, day, t_a, ta, t_b, tb = self.facts
        return (
            f"'{white or '?'}' - '{black or '?'}' {result}, round {rnd if rnd is not None else '?'}, {day},"
            f" {t_a or 'no name'} (tournament {ta}) / {t_b or 'no name'} (tournament {tb})"
        )


@dataclass
class Link:
    """Two players that games both sources hold make one: `a` the lower id, `b` the other;
    `written` their spellings; `games` those games."""

    a: int
    b: int
    written: tuple[str, str]
    games: list[_Game]

    def enough(self) -> bool:
        """Two games, or one with equal moves of at least `SHORT_PLIES` plies."""
        return len(self.games) >= 2 or any(g.long_moves for g in self.games)

    def evidence(self) -> str:
        """One sentence for `player_merges.reason` and `players suspects`."""
        n = len(self.games)
        first = self.games[0].text
        more = f" and {n - 1} more" if n > 1 else ""
        return (
            f"one game seen in two sources under two spellings: '{self.written[0]}' / '{self.written[1]}';"
            f" {n} game{'s' if n != 1 else ''} with the same date, round, result and opponent"
            f" (and moves where both files have them): {first}{more}"
        )


def same_game_pairs(con: duckdb.DuckDBPyConnection, file_ids: list[int]) -> list[Link]:
    """The pairs of players the games of the files `file_ids` show to be one person (module
    docstring), in a stable order; each a `Link` whose `enough()` is true and whose players are
    each the only partner of the other. The caller checks identifiers, shared tournaments and
    officers' splits (`consolidate._merge_pairs`)."""
    files = sorted(set(file_ids))
    if not files:
        return []
    tids = {r[0] for r in con.execute(
        "SELECT tournament_id FROM tournaments WHERE file_id IN (SELECT UNNEST(?))", [files]
    ).fetchall()}  # fmt: skip
    if not tids:
        return []
    near = near_tournaments(con, tids)
    any_pair, repeated = con.execute(_ANY_PAIR_SQL, {"files": files, "near": sorted(near)}).fetchall()[0]
    if not any_pair:
        return []
    params = {"files": files, "near": sorted(near), "short": SHORT_PLIES}
    if repeated:
        rows = game_rows(con.execute(_SQL_GROUPED, params).fetchall())
    else:
        rows = con.execute(_SQL, params).fetchall()
    if not rows:
        return []
    facts = _facts(con, {r[i] for r in rows for i in (3, 4)})
    # a game of the batch may meet another of the batch twice, once from each side: one key
    sides: dict[tuple[int, int], set[tuple[int, int, str, str]]] = {}
    texts: dict[tuple[int, int], tuple[bool, _GameFacts]] = {}
    bad: set[tuple[int, int]] = set()
    agree: dict[tuple[int, int, str, str], bool] = {}  # the same two entries meet in many games
    for ga, gb, colour, pa, pb, wa, wb, day, result, rnd, long_moves, opp, ta, t_a, tb, t_b, rc_a, rc_b in rows:
        key = (ga, gb) if ga < gb else (gb, ga)
        if rc_a and rc_b and rc_a != rc_b:
            bad.add(key)  # a rapid and a standard game of one day: two games
            continue
        if pa == pb:
            continue
        ok = agree.get((pa, pb, wa, wb))
        if ok is None:
            ok = agree[(pa, pb, wa, wb)] = bool(
                wa and wb and same_surname_initials(wa, wb) and _no_contradiction(facts.get(pa), facts.get(pb))
            )
        if not ok:
            bad.add(key)  # one colour's names disagree: two games
            continue
        sides.setdefault(key, set()).add((pa, pb, wa, wb) if pa < pb else (pb, pa, wb, wa))
        if key not in texts or ga < gb:
            white, black = (wa, opp) if colour == "white" else (opp, wa)
            texts[key] = (bool(long_moves), (white, black, result, rnd, day, t_a, ta, t_b, tb))
    links: dict[tuple[int, int], Link] = {}
    for key in sorted(sides):
        if key in bad:
            continue
        long_moves, game = texts[key]
        for pa, pb, wa, wb in sorted(sides[key]):
            link = links.setdefault((pa, pb), Link(pa, pb, (wa, wb), []))
            link.games.append(_Game(key, long_moves, game))
    # a player whose games match two players is no certain link, however little one of them shows
    return [lk for lk in _unique(list(links.values())) if lk.enough()]


def _unique(links: list[Link]) -> list[Link]:
    """The links whose two players have no other partner among `links`."""
    partners: dict[int, set[int]] = {}
    for lk in links:
        partners.setdefault(lk.a, set()).add(lk.b)
        partners.setdefault(lk.b, set()).add(lk.a)
    return [lk for lk in links if partners[lk.a] == {lk.b} and partners[lk.b] == {lk.a}]


_Facts = tuple[int | None, str | None, int | None]  # fide_id, national_id, birth_year


def _facts(con: duckdb.DuckDBPyConnection, ids: set[int]) -> dict[int, _Facts]:
    rows = con.execute(
        "SELECT player_id, fide_id, national_id, birth_year FROM players WHERE player_id IN (SELECT UNNEST(?))",
        [sorted(ids)],
    ).fetchall()
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def _no_contradiction(a: _Facts | None, b: _Facts | None) -> bool:
    """No FIDE ID, national ID or birth year known on both sides and different."""
    if a is None or b is None:
        return False
    return all(not (x and y and x != y) for x, y in zip(a, b, strict=True))
