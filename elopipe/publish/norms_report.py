"""The Norms section of a tournament report: FIDE title norms (B.01) as the IT1 form prints them.

Who is listed: the players who made a norm (GM, IM, WGM, WIM) they do not already hold the title
for, those who missed one by a single clause or by half a point (`v_norms`: `single_miss`,
`half_point`), and those whose result meets every clause the store can decide but one needs a
fact it lacks ('unknown: the applicant's federation'; a women's norm undecided, or missed, for
want of the player's sex is left out). For each: the norm type, games, points, Ra, p, dp, Rp, the decision
with its clause and what would have made it, and the opponents as the norm counted them (round,
name, title, federation, rating; the opponent raised to the rating floor marked, B.01 1.4.6c;
rounds left out under 1.4.1e/f or 1.4.2 marked). The decisions come from `v_norms`, the
opponents from `elopipe.rating.fide.norms_store.evaluate_events` (the same rules on the same store).

`norm_section` rows (dicts): player_id, name, federation, title, norm, decision, clause, reason,
hint, games, points (Decimal), ra, p, dp, rp, dropped (list of rounds), opponents (list of dicts:
round, name, title, federation, rating (None: unrated), points (Decimal), note ('raised to 2200
from 1400 (1.4.6c)', 'left out (1.4.1e/f)', 'not counted (1.4.2b)', '')).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import duckdb
import polars as pl

from elopipe.rating.fide import norm_inputs, norms, norms_store
from elopipe.store.frames import to_polars

#: The columns of `<stem>.norms.csv` (one row per player and norm listed).
CSV_COLUMNS = ["name", "federation", "title", "norm", "decision", "clause", "reason", "hint", "games", "points"]
CSV_COLUMNS += ["ra", "p", "dp", "rp", "dropped"]


def _listed(con: duckdb.DuckDBPyConnection, tournament_ids: list[int], system: str) -> dict[int, pl.DataFrame]:
    frame: pl.DataFrame = to_polars(
        con.sql(
            """
        SELECT tournament_id, player_id, name, norm, decision, clause, reason, hint, games, points, ra, p, dp, rp,
               raised_id, raised_from, dropped, era
        FROM v_norms
        WHERE list_contains(?::INTEGER[], tournament_id) AND system = ? AND NOT holds_title
          AND (decision = 'norm' OR (decision = 'missed' AND (single_miss OR half_point)
                                     -- nor a women's norm missed by a player whose sex no file gives:
                                     -- in an open (an Olympiad's PGN) most are men, 131 such lines
                                     AND (norm NOT IN ('WGM', 'WIM')
                                          OR player_id IN (SELECT player_id FROM players WHERE sex = 'w')))
               -- a women's norm undecided for want of the player's sex is no news (PGN files give none)
               OR (decision = 'unknown' AND reason NOT LIKE '%applicant''s sex%'))
        ORDER BY tournament_id, decision = 'norm' DESC, decision = 'unknown' DESC, rp DESC NULLS LAST, name, norm
        """,
            params=[tournament_ids, system],
        )
    )
    parts = frame.partition_by("tournament_id", as_dict=True, maintain_order=True)
    return {int(k[0]): v.drop("tournament_id") for k, v in parts.items()}


def _entries(con: duckdb.DuckDBPyConnection, tournament_ids: list[int]) -> dict[int, dict[int, dict[str, Any]]]:
    rows = con.execute(
        """
        SELECT e.rid, tp.player_id, any_value(COALESCE(tp.name_as_written, p.name)),
               any_value(COALESCE(tp.federation, p.federation)), any_value(tp.title)
        FROM tournament_players tp JOIN players p USING (player_id)
        JOIN (SELECT coalesce(event_id, tournament_id) AS rid, tournament_id FROM tournaments) e USING (tournament_id)
        WHERE e.rid IN (SELECT unnest(?::INTEGER[]))
        GROUP BY e.rid, tp.player_id
        """,
        [tournament_ids],
    ).fetchall()
    out: dict[int, dict[int, dict[str, Any]]] = {}
    for rid, pid, name, federation, title in rows:
        out.setdefault(int(rid), {})[int(pid)] = {"name": name, "federation": federation, "title": title}
    return out


def norm_section(con: duckdb.DuckDBPyConnection, tournament_id: int, system: str) -> list[dict[str, Any]]:
    """The players and norms the section lists (module docstring), best first; [] when none, or
    for a system other than FIDE standard."""
    return norm_sections(con, [tournament_id], system).get(tournament_id, [])


def norm_sections(
    con: duckdb.DuckDBPyConnection, tournament_ids: list[int], system: str
) -> dict[int, list[dict[str, Any]]]:
    """`norm_section` of each of `tournament_ids`, read and decided for all of them at once:
    {tournament_id: its rows}; an event with none is absent."""
    if system != norm_inputs.STANDARD or not tournament_ids:
        return {}
    listed = _listed(con, sorted(set(tournament_ids)), system)
    if not listed:
        return {}
    _, games = norms_store.evaluate_events(con, sorted(listed), system)
    entries = _entries(con, sorted(listed))
    by_event = games.partition_by("tournament_id", as_dict=True)
    empty = games.clear()
    return {tid: _section(rows, by_event.get((tid,), empty), entries.get(tid, {})) for tid, rows in listed.items()}


def _section(listed: pl.DataFrame, games: pl.DataFrame, who: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    """One event's section from its `listed` rows, its applicants' `games` and its entries."""
    by_player: dict[int, list[dict[str, Any]]] = {}
    # a knockout's games of one round against one opponent by points: in a fixed order, so a
    # report's bytes do not vary between publishes
    order = ["round", "opponent_id", "points_x2", "excluded"]
    for g in games.sort(order, nulls_last=True, maintain_order=True).iter_rows(named=True):
        by_player.setdefault(int(g["player_id"]), []).append(g)
    out = []
    for r in listed.iter_rows(named=True):
        pid = int(r["player_id"])
        era = norms.era_for(None) if r["era"] is None else next(e for e in norms.ERAS if e.name == r["era"])
        unrated = era.unrated if isinstance(era, norms.Era) else None
        dropped = set(r["dropped"] or [])
        opponents = []
        for g in by_player.get(pid, []):
            note = ""
            if g["excluded"]:
                note = f"not counted ({g['excluded']})"
            elif g["round"] in dropped:
                note = "left out (1.4.1e/f)"
            elif r["raised_id"] is not None and g["opponent_id"] == r["raised_id"]:
                before = g["rating"] if g["rating"] is not None else f"unrated = {unrated}"
                note = f"raised to {norms.FLOOR[r['norm']]} from {before} (1.4.6c)"
            opp = who.get(int(g["opponent_id"]), {})
            opponents.append(
                {
                    "round": g["round"],
                    "name": opp.get("name"),
                    "title": g["opp_title"],
                    "federation": g["opp_fed"],
                    "rating": g["rating"],
                    "points": Decimal(int(g["points_x2"])) / 2,
                    "note": note,
                }
            )
        me = who.get(pid, {})
        out.append(
            {
                **{k: r[k] for k in ("player_id", "norm", "decision", "clause", "reason", "hint", "games", "ra", "p")},
                **{k: r[k] for k in ("dp", "rp")},
                "name": me.get("name") or r["name"],
                "federation": me.get("federation"),
                "title": me.get("title"),
                "points": r["points"],
                "dropped": sorted(dropped),
                "opponents": opponents,
            }
        )
    return out


def section_frame(section: list[dict[str, Any]]) -> pl.DataFrame:
    """The section as rows for `<stem>.norms.csv` (`CSV_COLUMNS`; `dropped` as '10 11')."""
    return pl.DataFrame(
        [
            {**{k: s[k] for k in CSV_COLUMNS if k != "dropped"}, "dropped": " ".join(map(str, s["dropped"]))}
            for s in section
        ],
        schema={
            "name": pl.Utf8,
            "federation": pl.Utf8,
            "title": pl.Utf8,
            "norm": pl.Utf8,
            "decision": pl.Utf8,
            "clause": pl.Utf8,
            "reason": pl.Utf8,
            "hint": pl.Utf8,
            "games": pl.Int32,
            "points": pl.Decimal(4, 1),
            "ra": pl.Int32,
            "p": pl.Int32,
            "dp": pl.Int32,
            "rp": pl.Int32,
            "dropped": pl.Utf8,
        },
        orient="row",
    )


def section_lines(section: list[dict[str, Any]]) -> list[str]:
    """The section as text lines for the terminal, one block per player and norm."""
    lines = []
    for s in section:
        head = f"{s['name']} ({s['title'] or '-'}, {s['federation'] or 'federation unknown'}) – {s['norm']} norm: "
        if s["decision"] == "norm":
            head += "made"
        elif s["decision"] == "unknown":
            head += f"undecided, {s['reason']}"
        else:
            head += f"missed, {s['reason']}; {s['hint']}"
        lines.append(head)
        lines.append(
            f"  games {s['games']}, points {s['points']}, Ra {s['ra']}, p {s['p']} %, dp {s['dp']}, Rp {s['rp']}"
        )
        for o in s["opponents"]:
            rating = "unrated" if o["rating"] is None else str(o["rating"])
            extra = f"  {o['note']}" if o["note"] else ""
            rnd = "?" if o["round"] is None else o["round"]  # a PGN without Round tags
            lines.append(
                f"  R{rnd:<3} {o['name'] or '?'}  {o['title'] or '-'}  {o['federation'] or '?'}  {rating}"
                f"  {o['points']}{extra}"
            )
    return lines
