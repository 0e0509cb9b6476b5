"""Check of the comeback K on a federation store (issue 25 item 6), computed apart from the engine.

FIDE B.02 8.3.3 gives K 40 to "a player new to the rating list" until he has completed events with
30 games. elopipe reads it as: a player who was on the list, fell below the floor (7.2.1) and was
rated again from pooled games is not new to it; his games before the fall count toward the 30, and
a history the store does not know counts as at least 30 (`elopipe.rating.fide.k.k_base`).

This script derives that K from the published list rows alone (``rating_lists``: flags, games,
ratings; ``players.birth_year``), never from the engine's state or ``total_games``: for every row
of a player rated again after a 'delisted' row, with games in the period, the K is 10 once a
rating of 2400 was published, 40 for a junior (year of the list in force minus birth year at most
18) never at 2300, 40 while fewer than 30 games were counted since a first rating computed from
pooled games (the sum of ``games`` on his earlier rows), else 20 (a player first listed from the
rating in a file: history unknown, so at least 30); then the 700 cap (K x n <= 700). It prints,
per list, the rows, the rows of such players and those whose stored K differs.

With a second store (``--against``, e.g. the same workload rated by another checkout), it also
counts the list rows whose rating or K differ between the two (a wrong K spreads through the
opponents). Not a timed benchmark: nothing is timed.

Usage: ``.venv/bin/python bench/federation_k_check.py STORE [--against OTHER_STORE]``, where STORE
is a store of ``bench/federation.py --keep DIR`` or the bootstrap store of its cached data
(``bench/_data/federation/<key>/bootstrap.duckdb``, rated by whichever checkout generated it;
copy it and run ``elopipe rate --system fide --db COPY`` to rate it with this checkout).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import duckdb

K_ROWS = """
WITH l AS (SELECT list_date, player_id, rating, games, k, flags, ever_2400, source
           FROM rating_lists WHERE system = 'fide'),
fell AS (SELECT player_id, min(list_date) AS fell_on FROM l WHERE flags LIKE '%delisted%' GROUP BY 1),
back AS (SELECT l.* FROM l JOIN fell f USING (player_id)
         WHERE l.list_date > f.fell_on AND l.games > 0 AND l.k IS NOT NULL AND l.rating IS NOT NULL),
first AS (SELECT player_id, arg_min(source, list_date) AS first_source, arg_min(flags, list_date) AS first_flags
          FROM l GROUP BY 1),
prev AS (SELECT b.list_date, b.player_id,
                bool_or(coalesce(x.ever_2400, false) OR coalesce(x.rating, 0) >= 2400) AS e2400,
                bool_or(coalesce(x.rating, 0) >= 2300) AS e2300,
                max(x.list_date) AS prev_date, sum(x.games) AS games_before
         FROM back b JOIN l x ON x.player_id = b.player_id AND x.list_date < b.list_date GROUP BY 1, 2)
SELECT b.list_date, b.games, b.k,
       CASE WHEN p.e2400 THEN 10
            WHEN year(p.prev_date) - pl.birth_year BETWEEN 0 AND 18 AND NOT p.e2300 THEN 40
            WHEN f.first_source = 'computed' AND (f.first_flags LIKE '%pool%' OR f.first_flags LIKE '%new%')
                 AND p.games_before < 30 THEN 40
            ELSE 20 END AS k_base
FROM back b JOIN prev p USING (list_date, player_id) JOIN players pl USING (player_id) JOIN first f USING (player_id)
"""

DIFF = """
SELECT coalesce(x.list_date, y.list_date) AS list_date,
       count(*) FILTER (WHERE x.rating IS DISTINCT FROM y.rating OR x.k IS DISTINCT FROM y.k
                        OR x.player_id IS NULL OR y.player_id IS NULL) AS differ
FROM (SELECT * FROM main.rating_lists WHERE system = 'fide') x
FULL JOIN (SELECT * FROM other.rating_lists WHERE system = 'fide') y USING (list_date, player_id)
GROUP BY 1
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store", type=Path, help="a store whose FIDE lists are checked (opened read-only)")
    ap.add_argument("--against", type=Path, help="a second store of the same workload: rows that differ")
    args = ap.parse_args()
    con = duckdb.connect(str(args.store), read_only=True)
    checked: dict[object, int] = {}
    wrong: dict[object, int] = {}
    for list_date, games, k, k_base in con.execute(K_ROWS).fetchall():
        checked[list_date] = checked.get(list_date, 0) + 1
        if k != min(k_base, 700 // games):
            wrong[list_date] = wrong.get(list_date, 0) + 1
    differ: dict[object, int] = {}
    if args.against is not None:
        con.execute(f"ATTACH '{args.against}' AS other (READ_ONLY)")
        differ = dict(con.execute(DIFF).fetchall())
    lists = con.execute(
        "SELECT list_date, count(*) FROM rating_lists WHERE system = 'fide' GROUP BY 1 ORDER BY 1"
    ).fetchall()
    head = f"{'list':10} {'rows':>9} {'rated again':>11} {'K unlike':>8}"
    print(head + (f" {'rows differ':>11}" if args.against else ""))
    for d, n in lists:
        line = f"{d!s:10} {n:9,} {checked.get(d, 0):11} {wrong.get(d, 0):8}"
        print(line + (f" {differ.get(d, 0):11}" if args.against else ""))
    total = sum(n for _, n in lists)
    print(f"K unlike the reading: {sum(wrong.values())} of {total:,} list rows")
    if args.against is not None:
        print(f"rows that differ from {args.against.name}: {sum(differ.values())} of {total:,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
