"""Players a published list may hold twice: the pairs of `identity.suspects` whose two players
are both on the list.

Identity merges two spellings only when the evidence makes them one person (`identity.resolve`,
`identity.consolidate`): 'Svidler,P' in a file of Carlsen's games and 'Svidler, Peter' with his
FIDE ID in another file stay two players, since 'P' may be another Svidler. Both are then rated
and listed. `publish` says so in one line, so that the officer reviews them
(`elopipe players suspects`) before the list goes out, rather than a reader of the list finding
one grandmaster twice; `run` says the same line of each system whose lists it published.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping

import duckdb

from elopipe.identity.suspects import suspects
from elopipe.runtime.hints import command_hint

#: the kinds of pair likely to be one person: not a weak link (within one player), nor a bare
#: same name (namesakes: the Irish files hold several, kept apart by their ratings, `identity.apart`)
_TWO_PLAYERS = ("same_name_birth_year", "same_fide_id", "same_national_id", "abbreviated_name")


def list_suspects(con: duckdb.DuckDBPyConnection, system: str, list_date: dt.date) -> list[tuple[str, str]]:
    """The (name_a, name_b) of each `identity.suspects` pair of two players who both have a
    rating on `system`'s list of `list_date` (`rating_lists`), in the order suspects gives them
    (`lists_suspects` for one list). Errors: DuckDB's propagate."""
    return lists_suspects(con, {system: list_date}).get(system, [])


def lists_suspects(con: duckdb.DuckDBPyConnection, lists: Mapping[str, dt.date]) -> dict[str, list[tuple[str, str]]]:
    """For each system of `lists` (system -> list date), the (name_a, name_b) of each
    `identity.suspects` pair of two players who both have a rating on that list, in the order
    suspects gives them; a system whose list holds no pair is absent. `suspects` reads the whole
    store's players once for all the lists (0.2-0.3 CPU-s on a FIDE-sized 3-month store, growing
    with the players), so a caller asks only for the lists it has just published: `publish`, and
    `run` for the systems whose lists changed (none when nothing did). Errors: DuckDB's propagate."""
    if not lists:
        return {}
    pairs = [p for p in suspects(con, links=False) if p["reason"] in _TWO_PLAYERS and p["player_a"] != p["player_b"]]
    if not pairs:
        return {}
    ids = sorted({p["player_a"] for p in pairs} | {p["player_b"] for p in pairs})
    found: dict[str, list[tuple[str, str]]] = {}
    for system, list_date in lists.items():  # one query a system: a run publishes three at most
        listed = {
            r[0]
            for r in con.execute(
                "SELECT player_id FROM rating_lists WHERE system = ? AND list_date = ? AND rating IS NOT NULL"
                " AND player_id IN (SELECT UNNEST(?))",
                [system, list_date, ids],
            ).fetchall()
        }
        on_list = [(p["name_a"], p["name_b"]) for p in pairs if p["player_a"] in listed and p["player_b"] in listed]
        if on_list:
            found[system] = on_list
    return found


def suspects_line(list_date: dt.date, pairs: list[tuple[str, str]], db: str | os.PathLike[str] | None = None) -> str:
    """The line `publish` (and `run`, for each system whose lists changed) says of
    `list_suspects`' pairs: how many, the first three, what to do (the commands with `--db` for
    a store `db` that is not the default, `command_hint`)."""
    shown = "; ".join(f"'{a}' / '{b}'" for a, b in pairs[:3]) + ("; ..." if len(pairs) > 3 else "")
    pair = "1 pair of players on it is" if len(pairs) == 1 else f"{len(pairs)} pairs of players on it are"
    evidence, merge = command_hint("players suspects", db), command_hint("players merge", db)
    return (
        f"the list of {list_date} may hold a player twice: {pair} suspected to be one person ({shown});"
        f" `{evidence}` gives the evidence, `{merge}` joins a pair"
    )
