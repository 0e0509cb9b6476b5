"""The officer's review list: players that may be one person, and links that may be wrong.

`suspects` gives each pair with both spellings and the evidence as a sentence: names quoted as
written, facts a side lacks said as "unknown", never a Python value. Players merged away and
pairs an officer split are left out.
"""

from __future__ import annotations

from typing import Any

import duckdb

from elopipe.identity.apart import RATING_APART, apart_notes
from elopipe.read.names import ABBREV_MAX, names_compatible

# A surname shared by more players gives too many pairs to review one by one.
_TOKEN_GROUP_MAX = 200


def _q(expr: str) -> str:
    """SQL: `expr` quoted as the evidence shows a name ('Carlsen, Magnus')."""
    return f"'''' || {expr} || ''''"


def _both(a: str, b: str, label: str) -> str:
    """SQL: '<label> X on both', '<label> X / Y' ('unknown' for a side without), or NULL when
    neither side knows it (concat_ws leaves it out)."""
    x, y = f"CAST({a} AS VARCHAR)", f"CAST({b} AS VARCHAR)"
    return (
        f"CASE WHEN {a} IS NULL AND {b} IS NULL THEN NULL"
        f" WHEN {a} = {b} THEN '{label} ' || {x} || ' on both'"
        f" ELSE '{label} ' || COALESCE({x}, 'unknown') || ' / ' || COALESCE({y}, 'unknown') END"
    )


def _spelled(a: str, b: str) -> str:
    """SQL: "both written 'X'" or "written 'X' / 'Y'"."""
    return f"CASE WHEN {a} = {b} THEN 'both written ' || {_q(a)} ELSE 'written ' || {_q(a)} || ' / ' || {_q(b)} END"


_PAIRS = f"""
WITH p AS (SELECT * FROM players WHERE merged_into IS NULL),
played AS (SELECT DISTINCT player_id FROM tournament_players),
splits AS (SELECT least(kept_id, merged_id) AS a, greatest(kept_id, merged_id) AS b FROM player_merges
           WHERE action = 'split'),
by_name AS (
    SELECT a.player_id AS player_a, b.player_id AS player_b, a.name AS name_a, b.name AS name_b,
           CASE WHEN a.birth_year = b.birth_year THEN 'same_name_birth_year' ELSE 'same_name' END AS reason,
           concat_ws('; ', {_spelled("a.name", "b.name")}, {_both("a.birth_year", "b.birth_year", "born")},
                     {_both("a.fide_id", "b.fide_id", "FIDE ID")},
                     {_both("a.federation", "b.federation", "federation")})
           || CASE WHEN a.fide_id <> b.fide_id THEN ' (different FIDE IDs: never merged automatically)' ELSE '' END
               AS evidence
    FROM p a JOIN p b ON a.name_key = b.name_key AND a.player_id < b.player_id AND a.name_key <> ''
    WHERE a.birth_year = b.birth_year
       OR (a.fide_id IS NULL AND b.fide_id IS NULL AND a.player_id IN (SELECT player_id FROM played)
           AND b.player_id IN (SELECT player_id FROM played))
),
by_id AS (  -- one hash join per identifier (an OR in the join condition would pair every two players)
    SELECT a.player_id AS player_a, b.player_id AS player_b, a.name AS name_a, b.name AS name_b,
           'same_fide_id' AS reason,
           concat_ws('; ', 'FIDE ID ' || a.fide_id || ' on two players', {_spelled("a.name", "b.name")},
                     {_both("a.birth_year", "b.birth_year", "born")},
                     {_both("a.federation", "b.federation", "federation")}) AS evidence
    FROM p a JOIN p b ON a.fide_id = b.fide_id AND a.player_id < b.player_id
    UNION ALL
    SELECT a.player_id, b.player_id, a.name, b.name, 'same_national_id',
           concat_ws('; ', 'national ID ' || a.national_id || ' on two players', {_spelled("a.name", "b.name")},
                     {_both("a.birth_year", "b.birth_year", "born")},
                     {_both("a.federation", "b.federation", "federation")})
    FROM p a JOIN p b ON a.national_id = b.national_id AND a.player_id < b.player_id
)
SELECT * FROM (SELECT * FROM by_name UNION ALL SELECT * FROM by_id)
WHERE NOT EXISTS (SELECT 1 FROM splits s WHERE s.a = player_a AND s.b = player_b)
ORDER BY CASE reason WHEN 'same_name_birth_year' THEN 0 WHEN 'same_name' THEN 1 WHEN 'same_national_id' THEN 2
         ELSE 3 END, player_a, player_b
"""

# namesakes whose TRF entries are `identity.apart`: a link
# by name was refused, and the officer sees why (the ratings, added by `apart_notes`); `suspects`
# keeps those `_PAIRS` does not list (one of them has a FIDE ID, the other none). The rated
# TRF entries of one rate class joined on the name key and the days, not every two players.
_APART_NAMESAKES = f"""
WITH namesakes AS (  -- two live players or more: the only entries worth joining
    SELECT player_id, name_key FROM players WHERE merged_into IS NULL AND name_key <> '' AND name_key IN (
        SELECT name_key FROM players WHERE merged_into IS NULL GROUP BY 1 HAVING count(*) > 1)
),
e AS (
    SELECT p.player_id, p.name_key, tp.tournament_id, tp.rating_in_file AS r, t.rate_class, t.first_day AS d0,
           coalesce(t.last_day, t.first_day) AS d1
    FROM namesakes p JOIN tournament_players tp USING (player_id) JOIN tournaments t USING (tournament_id)
    WHERE tp.start_rank IS NOT NULL AND tp.rating_in_file > 0 AND t.rate_class IS NOT NULL AND t.first_day IS NOT NULL
),
pr AS (
    SELECT DISTINCT x.player_id AS a, y.player_id AS b FROM e x JOIN e y
      ON x.name_key = y.name_key AND x.rate_class = y.rate_class AND x.player_id < y.player_id
     AND x.tournament_id <> y.tournament_id AND x.d0 <= y.d1 AND y.d0 <= x.d1
    WHERE abs(x.r - y.r) >= {RATING_APART}
)
SELECT a.player_id AS player_a, b.player_id AS player_b, a.name AS name_a, b.name AS name_b, 'same_name' AS reason,
       concat_ws('; ', {_spelled("a.name", "b.name")}, {_both("a.birth_year", "b.birth_year", "born")},
                 {_both("a.fide_id", "b.fide_id", "FIDE ID")}, {_both("a.federation", "b.federation", "federation")})
           AS evidence
FROM pr JOIN players a ON a.player_id = pr.a JOIN players b ON b.player_id = pr.b
WHERE NOT COALESCE(a.fide_id <> b.fide_id, FALSE)
  AND NOT EXISTS (SELECT 1 FROM player_merges m WHERE m.action = 'split'
                  AND least(m.kept_id, m.merged_id) = pr.a AND greatest(m.kept_id, m.merged_id) = pr.b)
ORDER BY 1, 2
"""

# an alias linked below the confidence asked for: the entry's spelling against the spellings of
# the player's other entries (what the rule linked it to), with what each side knows. An entry
# whose name key another entry of the player writes too (`Carlsen,Magnus` / `Carlsen, Magnus`),
# with no fact known on both sides and different, pairs the player with himself: the same name
# is all a name link is, and namesakes in the store are listed as 'same_name' pairs. Such a link
# is left out, and so is a link of an automatic same-game merge (listed as 'same_game_link').
_WEAK = f"""
WITH weak AS (
    SELECT a.player_id, a.name_as_written, any_value(a.name_key) AS name_key, min(a.match_rule) AS rule,
           min(a.confidence) AS conf, count(*) AS n,
           string_agg(DISTINCT COALESCE(t.name || ' (tournament ' || a.tournament_id || ')',
                                        'tournament ' || a.tournament_id), ', ') AS events,
           any_value(a.fide_id) AS fide_id, any_value(a.birth_year) AS birth_year,
           any_value(a.federation) AS federation
    FROM player_aliases a LEFT JOIN tournaments t USING (tournament_id)
    WHERE a.confidence < $min GROUP BY 1, 2
),
others AS (
    SELECT w.player_id, w.name_as_written,
           string_agg(DISTINCT o.name_as_written, ' / ' ORDER BY o.name_as_written)
               FILTER (WHERE o.name_as_written <> w.name_as_written) AS spellings,
           -- entries of this name key other than the weak ones: the link joined the same name
           count(*) FILTER (WHERE o.name_key = w.name_key) > any_value(w.n) AS same_name
    FROM weak w JOIN player_aliases o ON o.player_id = w.player_id
    GROUP BY 1, 2
)
SELECT w.player_id AS player_a, w.player_id AS player_b, w.name_as_written AS name_a,
       COALESCE(x.spellings, p.name) AS name_b, 'weak_link' AS reason,
       concat_ws('; ',
           'entry written ' || {_q("w.name_as_written")} || ' linked to player ' || w.player_id
               || CASE WHEN x.spellings IS NULL THEN ', written the same way elsewhere'
                       ELSE ', written ' || {_q("x.spellings")} || ' elsewhere' END,
           'rule ' || COALESCE(w.rule, 'unknown') || ' (confidence ' || w.conf || ')',
           w.n || CASE WHEN w.n = 1 THEN ' entry' ELSE ' entries' END || ': ' || w.events,
           {_both("w.fide_id", "p.fide_id", "FIDE ID")}, {_both("w.birth_year", "p.birth_year", "born")},
           {_both("w.federation", "p.federation", "federation")}) AS evidence
FROM weak w JOIN players p USING (player_id) LEFT JOIN others x USING (player_id, name_as_written)
WHERE w.rule IS DISTINCT FROM 'same_game' AND (NOT COALESCE(x.same_name, FALSE)
   OR w.fide_id <> p.fide_id OR w.birth_year <> p.birth_year OR w.federation <> p.federation)
ORDER BY 1, 3
"""

# an automatic merge on the evidence of games two sources hold (`identity.same_game`) that still
# holds: the merged spelling's entries are on the kept player (a split by that name undoes it)
_SAME_GAME = """
WITH m AS (
    SELECT m.merge_id, m.merged_id, m.reason, o.name, o.name_key, COALESCE(o.merged_into, m.kept_id) AS kept
    FROM player_merges m JOIN players o ON o.player_id = m.merged_id
    WHERE m.action = 'merge' AND m.decided_by = 'rule:same_game' AND o.merged_into IS NOT NULL
),
spelled AS (  -- the merged spelling as the kept player's entries write it
    SELECT a.player_id, a.name_key, min(a.name_as_written) AS written FROM player_aliases a
    JOIN m ON a.player_id = m.kept AND a.name_key = m.name_key GROUP BY 1, 2
)
SELECT k.player_id AS player_a, k.name AS name_a, m.merged_id AS player_b, m.name AS name_b,
       'same_game_link' AS reason,
       regexp_replace(m.reason, '^automatic: same_game: ', '')
       || '; merged automatically (decision ' || m.merge_id || '): `elopipe players split ' || k.player_id
       || ' --name "' || s.written || '" --reason ...` undoes it' AS evidence
FROM m JOIN players k ON k.player_id = m.kept AND k.merged_into IS NULL
JOIN spelled s ON s.player_id = k.player_id AND s.name_key = m.name_key
ORDER BY 1, 3
"""


def suspects(con: duckdb.DuckDBPyConnection, min_confidence: float = 0.6, links: bool = True) -> list[dict[str, Any]]:
    """Likely duplicates and weak links for an officer to review, with the evidence.

    Each item: {'player_a' int, 'player_b' int, 'name_a', 'name_b' (the players' names as
    `players.name` spells them; a weak link is within one player: player_b is player_a, and the
    evidence gives the entry's spelling, its tournaments and the spellings of the other entries),
    'reason', 'evidence' (a sentence)}. A pair that `merge_players` would refuse, both players
    having an entry in one tournament, says so in its evidence ("both have an entry in tournament N ...:
    a merge is refused, check the file F"): an error of that file for the officer to correct. A
    pair kept apart by ratings far apart on the same days (`identity.apart`) says so too.
    Reasons: 'same_name_birth_year' (same name key and birth year, two players: two IDs for one
    person when the FIDE IDs differ), 'same_name' (same name key, neither has a FIDE ID, both
    played; or FIDE IDs that do not differ and TRF entries `identity.apart`), 'same_national_id' /
    'same_fide_id' (one identifier on two players, kept apart because e.g. the birth years differ),
    'abbreviated_name' (e.g. 'Duda,J' and 'Duda, Jan-Krzysztof' both in the store, one without a
    FIDE ID), 'weak_link' (an alias linked with confidence below
    `min_confidence`; player_b is player_a, name_a the entry's spelling and name_b the player's
    other spellings; a link between spellings of one name key, with no fact differing, is left
    out: it pairs the player with himself), 'same_game_link' (two players merged automatically
    because two sources hold the same games under two spellings, `identity.same_game`: player_a
    the player kept, player_b the one merged into it, the evidence gives the games and the
    `players split` that undoes it). Merged players and pairs an officer split are left out.
    `links` False: the pairs of two players only, without the weak and same-game links (one
    player each), which are not read."""
    out = _dicts(con, _PAIRS)
    listed = {(r["player_a"], r["player_b"]) for r in out}
    out += [r for r in _dicts(con, _APART_NAMESAKES) if (r["player_a"], r["player_b"]) not in listed]
    out += _abbreviated(con)
    _say_refused(con, out)
    notes = apart_notes(con, [(r["player_a"], r["player_b"]) for r in out])
    for r in out:
        note = notes.get((r["player_a"], r["player_b"]))
        if note:
            r["evidence"] = f"{r['evidence']}; {note}"
    if links:
        out += _dicts(con, _WEAK, {"min": min_confidence})
        out += _dicts(con, _SAME_GAME)
    return out


def _say_refused(con: duckdb.DuckDBPyConnection, pairs: list[dict[str, Any]]) -> None:
    """Add to the evidence of each pair that `merge_players` would refuse (both players have an
    entry in one tournament) which tournament, the start ranks and the file. Such a pair stays
    listed: one person entered twice, or a FIDE ID written on the wrong row, is an error in that
    file that only its correction mends, and the officer must see it. One query for all pairs."""
    if not pairs:
        return
    notes = dict(
        ((a, b), note)
        for a, b, note in con.execute(
            """
            WITH pr AS (SELECT UNNEST($a) AS player_a, UNNEST($b) AS player_b),
            shared AS (
                SELECT pr.player_a, pr.player_b, min(x.tournament_id) AS tid FROM pr
                JOIN tournament_players x ON x.player_id = pr.player_a
                JOIN tournament_players y ON y.player_id = pr.player_b AND y.tournament_id = x.tournament_id
                GROUP BY 1, 2
            )
            SELECT s.player_a, s.player_b,
                   'both have an entry in tournament ' || s.tid || COALESCE(' (' || t.name || ')', '')
                   || CASE WHEN x.start_rank IS NOT NULL AND y.start_rank IS NOT NULL
                           THEN ', start ranks ' || x.start_rank || ' and ' || y.start_rank ELSE '' END
                   || ': a merge is refused, check the file'
                   || COALESCE(' ' || regexp_replace(f.path, '.*/', '') || COALESCE('!' || f.member, ''), '')
            FROM shared s JOIN tournaments t ON t.tournament_id = s.tid
            JOIN tournament_players x ON x.tournament_id = s.tid AND x.player_id = s.player_a
            JOIN tournament_players y ON y.tournament_id = s.tid AND y.player_id = s.player_b
            LEFT JOIN source_files f ON f.file_id = t.file_id
            """,
            {"a": [r["player_a"] for r in pairs], "b": [r["player_b"] for r in pairs]},
        ).fetchall()
    )
    for r in pairs:
        note = notes.get((r["player_a"], r["player_b"]))
        if note:
            r["evidence"] = f"{r['evidence']}; {note}"


def _dicts(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or {})
    cols = [d[0] for d in cur.description or []]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def _abbreviated(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Players who played and share a full (3+ letter) name token, whose name keys one may
    abbreviate into the other (`names_compatible`), and whose FIDE IDs do not differ. The pairs
    come from the store as a set; the abbreviation test is Python's (`read.names`)."""
    pairs = con.execute(
        f"""
        WITH p AS (SELECT player_id, name, name_key, fide_id, birth_year FROM players
                   WHERE merged_into IS NULL AND player_id IN (SELECT player_id FROM tournament_players)),
        tok AS (SELECT DISTINCT player_id, unnest(string_split(name_key, ' ')) AS token FROM p),
        groups AS (SELECT token FROM tok WHERE length(token) > {ABBREV_MAX} GROUP BY 1
                   HAVING count(*) <= {_TOKEN_GROUP_MAX}),
        cand AS (SELECT DISTINCT a.player_id AS pa, b.player_id AS pb FROM tok a JOIN tok b USING (token)
                 WHERE a.player_id < b.player_id AND token IN (SELECT token FROM groups))
        SELECT a.player_id, b.player_id, a.name, b.name, a.name_key, b.name_key,
               concat_ws('; ', 'one may abbreviate the other: ' || {_spelled("a.name", "b.name")},
                         {_both("a.birth_year", "b.birth_year", "born")}, {_both("a.fide_id", "b.fide_id", "FIDE ID")})
        FROM cand JOIN p a ON a.player_id = cand.pa JOIN p b ON b.player_id = cand.pb
        WHERE NOT (a.fide_id IS NOT NULL AND b.fide_id IS NOT NULL AND a.fide_id <> b.fide_id)
          AND NOT EXISTS (SELECT 1 FROM player_merges m WHERE m.action = 'split'
                          AND least(m.kept_id, m.merged_id) = cand.pa AND greatest(m.kept_id, m.merged_id) = cand.pb)
        ORDER BY 1, 2
        """
    ).fetchall()
    return [
        {"player_a": a, "player_b": b, "name_a": na, "name_b": nb, "reason": "abbreviated_name", "evidence": ev}
        for a, b, na, nb, ka, kb, ev in pairs
        if names_compatible(ka, kb)
    ]
