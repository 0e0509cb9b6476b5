"""The FIDE rules a report's event was rated under, named and explained in the legend's words.

A FIDE report shows figures of one version of the rules (`elopipe.rating.fide.b02`): the
400-point rule of the version chosen by the event's start date (`tournament_ratings.rules_version`),
and K, the floor and the initial rating of the version in force on the list the event was rated
on (B.02's list rules; the two differ only for an event that started before a new version and is
rated on a list after it). A scenario (`fide@NAME`) may force a version (`--rules`) and cap the
lower-rated side under V2022 (`--v2022-cap-lower`): its stored definition (`scenarios`) says so.
`applied_rules_of` reads what was applied, `rules_title` names it for the report's header ("FIDE
Rating Regulations (B.02) effective 1 January 2022 (V2022)"), and `d_used_text`, `k_text`,
`ru_text` word the legend's lines that depend on the version, each from the rule set's own
parameters (never a second copy of the rules).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import duckdb

from elopipe.publish.reason_words import legend_text
from elopipe.rating.fide import b02
from elopipe.rating.scenarios import definition, split_system

_FIDE_SYSTEMS = ("fide", "fide-rapid", "fide-blitz")
_RB = ("fide-rapid", "fide-blitz")
# a day on which each version is in force (its first)
_PROBE = {name: start for start, name in b02.ERAS}

#: the regulations each version is, as a rating officer names them
_TITLES = {
    "V2009": "FIDE Rating Regulations effective 1 July 2009 (V2009)",
    "V2011": "FIDE Rating Regulations as applied from 1 July 2011 (V2011)",
    "V2012": "FIDE Rating Regulations as applied from 1 July 2012 (V2012)",
    "V2014": "FIDE Rating Regulations effective 1 July 2014 (V2014)",
    "V2017": "FIDE Rating Regulations (B.02) effective 1 July 2017 (V2017)",
    "V2022": "FIDE Rating Regulations (B.02) effective 1 January 2022 (V2022)",
    "V2024": "FIDE Rating Regulations (B.02) effective 1 March 2024 (V2024)",
    "V2024A": "FIDE Rating Regulations (B.02) effective 1 March 2024, as amended from 1 October 2025 (V2024A)",
}
# the rapid and blitz chapter before 2022 (`b02.RB_RULES['V2017']`, rated from 2018)
_RB_OLD_TITLE = "FIDE Rapid and Blitz Rating Regulations of 2018-2021 (rated under elopipe's V2017)"


@dataclass(frozen=True)
class AppliedRules:
    """The rules one report's event was rated under: `event` the rule sets of the event's
    400-point rule (one per version its parts were rated under, usually one), `lists` those of
    the lists it was rated on (K, floor, initial rating), `forced` a scenario's `--rules`,
    `rapid_blitz` True for the rapid and blitz systems."""

    event: tuple[b02.RuleSet, ...]
    lists: tuple[b02.RuleSet, ...]
    forced: str | None = None
    rapid_blitz: bool = False


def applied_rules_of(con: duckdb.DuckDBPyConnection, tournament_ids: list[int], system: str) -> dict[int, AppliedRules]:
    """{event asked for (its parts read, as a report reads them): the rules its rating applied}
    under `system`, in one query; empty for a system that is not FIDE's, and an event without a
    stored rules version (rated before the column existed) is absent."""
    base, scenario = split_system(system)
    if base not in _FIDE_SYSTEMS:
        return {}
    forced, cap_lower = None, False
    if scenario is not None:
        stored = definition(con, system)
        if stored is not None:
            forced, params = stored
            cap_lower = bool(params.get("v2022_cap_lower", False))
    try:
        rows = _versions_and_lists(con, tournament_ids, system)
    except (duckdb.BinderException, duckdb.CatalogException):  # a store rated before rules_version, read-only
        return {}
    out: dict[int, AppliedRules] = {}
    for rid, versions, list_dates in rows:
        event = tuple(b02.rules_for_system(base, _PROBE[v], None, cap_lower) for v in versions if v in _PROBE)
        lists = _distinct(_as_event(b02.rules_for_system(base, d, forced, cap_lower), event) for d in list_dates)
        if event:
            out[int(rid)] = AppliedRules(event, lists, forced, base in _RB)
    return out


def _versions_and_lists(
    con: duckdb.DuckDBPyConnection, tournament_ids: list[int], system: str
) -> list[tuple[int, list[str], list[dt.date]]]:
    """(event, its rules versions, its list dates) of each event of `tournament_ids` rated under `system`."""
    rows = con.execute(
        """SELECT e.rid, list(DISTINCT tr.rules_version ORDER BY tr.rules_version),
                  list(DISTINCT tr.list_date ORDER BY tr.list_date)
           FROM tournament_ratings tr
           JOIN (SELECT coalesce(event_id, tournament_id) AS rid, tournament_id FROM tournaments
                 WHERE coalesce(event_id, tournament_id) IN (SELECT unnest($tids::INTEGER[]))) e USING (tournament_id)
           WHERE tr.system = $system AND tr.rules_version IS NOT NULL
           GROUP BY e.rid""",
        {"tids": sorted(set(tournament_ids)), "system": system},
    ).fetchall()
    return [(int(rid), list(versions), list(dates)) for rid, versions, dates in rows]


def _list_part(rs: b02.RuleSet) -> b02.RuleSet:
    """`rs` less what belongs to an event rather than a list (the 400-point rule, the time minimum)."""
    return replace(rs, name="", cap_mode="", v2022_cap_lower=False, time_thresholds=(0, 0))


def _as_event(rs: b02.RuleSet, event: tuple[b02.RuleSet, ...]) -> b02.RuleSet:
    """The list's rule set `rs`, or the event's when their list rules agree (V2024 and its amendment
    of October 2025 differ only in the 400-point rule): a report names one version where one applied."""
    return next((e for e in event if _list_part(e) == _list_part(rs)), rs)


def _distinct(rule_sets: Iterable[b02.RuleSet]) -> tuple[b02.RuleSet, ...]:
    seen: list[b02.RuleSet] = []
    for rs in rule_sets:
        if rs not in seen:
            seen.append(rs)
    return tuple(seen)


def _title(rs: b02.RuleSet, rapid_blitz: bool) -> str:
    if rapid_blitz and rs.k_fixed is not None:
        return _RB_OLD_TITLE
    title = _TITLES.get(rs.name, rs.name)
    if rapid_blitz:
        title = f"{title}, as the rapid and blitz rules apply it"
    if rs.cap_mode == "one_upgrade" and rs.v2022_cap_lower:
        title += ", the lower-rated side capped in every game (--v2022-cap-lower)"
    return title


def rules_title(rules: AppliedRules) -> str:
    """The regulations the event was rated under, for the report's header: one title when the
    event's and the list's version agree, else the 400-point rule's and the list's apart; a
    forced version (a scenario) says so."""
    event = "; ".join(_title(rs, rules.rapid_blitz) for rs in rules.event)
    lists = [rs for rs in rules.lists if rs.name not in {e.name for e in rules.event}]
    text = (
        event
        if not lists
        else f"{event} for the 400-point rule (the event's start date); "
        + "; ".join(_title(rs, rules.rapid_blitz) for rs in lists)
        + " for K, the floor and the initial rating (the list's date)"
    )
    return text + (f"; forced by the scenario (--rules {rules.forced})" if rules.forced else "")


def _cap_rule(rs: b02.RuleSet, rapid_blitz: bool) -> str:
    """What the 400-point rule of `rs` does to D (B.02 8.3.1 of that version)."""
    if rs.cap_mode == "none":
        return "the raw difference in every game: the rapid and blitz rules of 2018-2021 have no 400-point rule"
    if rs.cap_mode == "all_below_2650":
        return (
            "a difference over 400 counts as 400 for a player whose Ro is below 2650; a player rated 2650 or "
            "more uses the raw difference in every game (B.02 8.3.1 as amended from 1 October 2025)"
        )
    if rs.cap_mode == "one_upgrade":
        lower = (
            "a difference below −400 (the lower-rated side) counts as −400 in every game (--v2022-cap-lower)"
            if rs.v2022_cap_lower
            else "a difference below −400 (the lower-rated side) counts as it is (FIDE's practice of 2022-2024 as "
            "reported by Sonas; not verified)"
        )
        return (
            "a player benefits from the 400-point rule once per event (B.02 8.3.1 of 1 January 2022): his game "
            "with the largest difference over 400 counts as 400, his other differences over 400 count as they are; "
            + lower
        )
    every = "every game, both players" + (" (rapid and blitz: no 2650 exemption)" if rapid_blitz else "")
    return f"a difference over 400 counts as 400, and below −400 as −400, in {every} (B.02 8.3.1)"


def d_used_text(rules: AppliedRules | None) -> str:
    """The legend's 'D used' line for the event's rules (None: every version, by era)."""
    tail = "; when it was capped, the raw difference follows in brackets"
    if rules is None:
        return (
            "per game: Ro − Rc as the rating used it, by the 400-point rule of the event's rules (B.02 8.3.1): "
            "until 2021 and from March 2024 a difference over 400 counts as 400 in every game, for both players "
            "(from October 2025 not for a player rated 2650 or more); in 2022-February 2024 (V2022) only the "
            "player's largest difference over 400 of the event is capped, the lower-rated side not at all; rapid "
            "and blitz 2018-2021: no cap" + tail
        )
    return (
        f"per game: Ro − Rc as the rating used it under {_names(rules.event)}: "
        + _each(rules.event, lambda rs: _cap_rule(rs, rules.rapid_blitz))
        + tail
    )


def _names(rule_sets: tuple[b02.RuleSet, ...]) -> str:
    return " / ".join(rs.name for rs in rule_sets)


def _each(rule_sets: tuple[b02.RuleSet, ...], text: Callable[[b02.RuleSet], str]) -> str:
    """`text(rs)` of one rule set, or each prefixed by its version when there are several."""
    if len(rule_sets) == 1:
        return text(rule_sets[0])
    return "; ".join(f"{rs.name}: {text(rs)}" for rs in rule_sets)


def _k_rule(rs: b02.RuleSet) -> str:
    """K of `rs` (B.02 8.3.3 of that version, in the order the engine applies it, `b02.k_factor`)."""
    cap = (
        "; then capped so that K × N ≤ 700 in the period"
        if rs.cap_700
        else "; no cap on K × N (the 700 cap dates from July 2017)"
    )
    if rs.k_fixed is not None:
        return f"{rs.k_fixed} for every player (rapid and blitz 2018-2021){cap}"
    ten = "10 once a published rating reached 2400 (for good)" + (", with 30 rated games" if rs.k10_needs_30 else "")
    junior = ""
    if rs.k_junior:
        until = (
            "his 18th birthday; with a birth year alone, the end of that year"
            if rs.junior_rule == "birthday"
            else "the end of the year of his 18th birthday"
        )
        junior = f"; else 40 for a junior (until {until}) who never reached 2300"
    return f"{ten}{junior}; else {rs.k_new} with fewer than 30 rated games; else {rs.k_low}{cap}"


def k_text(rules: AppliedRules | None) -> str:
    """The legend's 'K' line: the K used in this period (the state at the list before), by the
    list's rules (None: every era)."""
    if rules is None:
        return (
            "development coefficient used in this period, by the rules in force at the list (B.02 8.3.3): from "
            "July 2014 40, 20 or 10, and from July 2017 capped so that K × N ≤ 700 in the period; 25, 15 or 10 "
            "until June 2011, then 30, 15 or 10; rapid and blitz: 20 until 2021, then as standard"
        )
    return f"development coefficient used in this period (B.02 8.3.3, {_names(rules.lists)}): " + _each(
        rules.lists, _k_rule
    )


def _ru_rule(rs: b02.RuleSet) -> str:
    """How `rs` gives an unrated player a first rating (B.02 7.1.4, 8.2 of that version)."""
    if rs.initial_rule == "unconfirmed":
        return (
            f"games pooled, but no initial rating is computed under the rules before July 2014 (that era's rule "
            f"cannot be confirmed); floor {rs.floor}"
        )
    first = (
        "a first event with less than one point is disregarded"
        if rs.first_event_min_x100 > 50
        else "a first event with zero points is disregarded (8.2.1)"
    )
    if rs.initial_rule == "old":
        formula = "50 % → Ra; above → Ra + 20 per half point above 50 %; below → Ra + dp(p)"
    else:
        formula = "two draws against 1800 counted in, Ru = Ra + dp(p)"
    top = f", at most {rs.ru_max}" if rs.ru_max is not None else ""
    return (
        f"Ru from the games pooled against rated opponents over up to 26 months: {formula}{top}; published once "
        f"it rests on at least 5 games and reaches the floor {rs.floor}; {first}"
    )


def ru_text(rules: AppliedRules | None) -> str:
    """The legend's 'Ru / note' line for the list's rules (None: every era)."""
    words = (
        "unrated players: 'Ru N so far, K games pooled' while the games are still pooling, 'first rating N,"
        " published on the DATE list (K games pooled)' once the list of DATE publishes it; for a player with no"
        " rated game, why"
    )
    if rules is None:
        return (
            f"{words} (B.02 7.1.4, 8.2: at least 5 games and the floor, 1000 until February 2024, then 1400; "
            "1200 until June 2012; no initial rating computed before July 2014)"
        )
    return f"{words}. Under {_names(rules.lists)} (B.02 7.1.4, 8.2): " + _each(rules.lists, _ru_rule)


def reason_legend(rules: AppliedRules | None) -> str:
    """The legend's 'reason' line: every code a game not counted can show, the minimum time of
    B.02 1.3 worded for the event's rules (None: every version, by era; `reason_words`)."""
    return legend_text(None if rules is None else rules.event)
