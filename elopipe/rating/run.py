"""`rate(con, system, ...)`: compute a rating system's lists and store what changed.

The function of each system comes from `elopipe.rating.systems`.  For the FIDE systems
(`elopipe.rating.fide.run`) only the earliest affected list and every later one are
rewritten; re-running with nothing new writes nothing.  Every system first compares a digest of
what it reads with the one its last full run kept (`elopipe.rating.inputs`): when they agree,
the engine does not run and the last summary is returned.

A scenario 'BASE@NAME' (`elopipe.rating.scenarios`) is rated with BASE's rules and the given
rules and options, stored under its own key, and its definition recorded in ``scenarios``;
the plain system's lists are never touched.  `through` computes a preview: the lists up to it
are computed and stored as usual, the later ones are kept as they were.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

import duckdb

from elopipe.rating import event_inputs, inputs, param_checks, scenarios, systems
from elopipe.rating.summary import RateSummary


def parse_month(text: str | None) -> dt.date | None:
    """'YYYY-MM' → the date of that month's list (the 1st); None for None.

    Raises ValueError for anything else: a day ('2023-12-31') or a one-digit month ('2023-1')
    would read as another list than the one meant.
    """
    if text is None:
        return None
    found = re.fullmatch(r"(\d{4})-(\d{2})", text.strip())
    if not found or not 1 <= int(found[2]) <= 12:
        raise ValueError(f"expected a list month YYYY-MM such as 2024-03, got '{text.strip()}'")
    return dt.date(int(found[1]), int(found[2]), 1)


def rate(
    con: duckdb.DuckDBPyConnection,
    system: str,
    through: dt.date | str | None = None,
    rules: str | None = None,
    *,
    defaults: Mapping[str, Any] | None = None,
    **params: Any,
) -> RateSummary:
    """Rate `system` over the store behind `con` (a writer connection).

    `system`: a system name or a scenario 'BASE@NAME' (see the module docstring).
    `through`: last list to compute (date or 'YYYY-MM'); the stored lists after it are kept
    (``RateSummary.kept_lists``). `rules`: force a rules version ('V2017' | 'V2022' | 'V2024'
    for FIDE, any case; `param_checks.rules_name`); `params`: options of the system's engine as
    given; `defaults`: options that apply unless given (the CLI's no-moves policy from the
    environment). A scenario keeps its definition: rated again, it takes its stored rules
    and params, and refuses others (`scenarios.resolve`); what a stopped run of it left (its
    ``rating_runs`` rows, no list, no definition) is removed first (``RateSummary.removed_runs``).
    Raises ValueError for an unknown system, version, month or parameter,
    `param_checks.ParamError` for a bad rules name, `scenarios.ScenarioError` for a bad
    scenario name and `scenarios.ScenarioConflict` for rules or params other than the
    scenario's.
    """
    if isinstance(through, str):
        through = parse_month(through)
    base, name = scenarios.split_system(system)
    if rules is not None:
        rules = param_checks.rules_name(system, rules)
    if name is None:
        system, params = base, {**(defaults or {}), **params}
    else:
        system = scenarios.scenario_system(base, name)  # the key as stored: the name folded
        rules, params = scenarios.resolve(con, system, rules, params, defaults or {})
    removed = scenarios.remove_unfinished(con, system) if name is not None else []
    fn = systems.get(system)
    # what the run reads, digested before it runs (`elopipe.rating.inputs`): the same as after the
    # last full run, and its results as that run left them, nothing can change
    events = event_inputs.digests(con)
    read = inputs.fingerprint(con, system, rules, params, events)
    kept = inputs.unchanged(con, system, read) if through is None and not removed else None
    if kept is not None:
        summary: RateSummary = kept
    else:
        # the engine's period digests take the events digested once above (the run writes none of them)
        with event_inputs.shared(con, events):
            summary = fn(con, system=system, through=through, rules=rules, **params)
        if through is None:
            inputs.save(con, system, read, summary)
        else:
            inputs.forget(con, system)
    summary.removed_runs = removed
    if name is not None:
        scenarios.record(con, system, rules=rules, params=params, through=through)
    if through is not None:
        rows = con.execute(
            "SELECT DISTINCT list_date FROM rating_lists WHERE system = ? AND list_date > ? ORDER BY 1",
            [system, through],
        ).fetchall()
        summary.kept_lists = [r[0] for r in rows]
    return summary
