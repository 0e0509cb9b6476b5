"""The rating job: one system's lists computed from the stored games, on one writer connection
(`elopipe.rating.run.rate`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from elopipe.jobs.requests import RateListsRequest, RateRequest

if TYPE_CHECKING:
    from elopipe.rating.summary import RateSummary


@dataclass(frozen=True)
class RateOutcome:
    """What one rating did. `summary`: the engine's summary (None: the store holds no game and
    the request said to skip); `changed`: the list dates whose rows it rewrote, sorted;
    `missing_standard`: for a rapid or blitz scenario, the standard systems it would credit
    and the store does not hold (`elopipe.rating.scenarios.missing_standard`)."""

    summary: RateSummary | None
    changed: list[dt.date] = field(default_factory=list)
    missing_standard: list[str] = field(default_factory=list)


def rate_system(request: RateRequest, on_wait: Callable[[str], None] | None = None) -> RateOutcome:
    """Rate `request.system` in `request.db` (see `RateRequest`); `on_wait` hears of a store
    another process holds. Raises what `rate` raises: ValueError for an unknown system or
    parameter, `ParamError`, `ScenarioError`, StoreBusyError, StoreMissingError when there is no
    store at `request.db` (none is created)."""
    from elopipe.rating.result_tables import changed_list_dates
    from elopipe.rating.run import rate
    from elopipe.rating.scenarios import missing_standard
    from elopipe.store.connect import open_writer

    with open_writer(request.db, on_wait=on_wait, existing=True) as con:
        if request.skip_empty and not con.execute("SELECT count(*) FROM games").fetchall()[0][0]:
            return RateOutcome(None)
        summary = rate(
            con,
            request.system,
            through=request.through,
            rules=request.rules,
            defaults=dict(request.defaults),
            **request.params,
        )
        # FIDE reports exactly which lists it rewrote; other engines rewrite from first_changed on
        if summary.changed_lists is not None:
            changed = sorted(summary.changed_lists)
        else:
            changed = changed_list_dates(con, request.system, summary.first_changed)
        return RateOutcome(summary, changed, missing_standard(con, request.system))


def system_request(lists: RateListsRequest, system: str) -> RateRequest:
    """One system's request of a `rate_lists` run: its `no_moves` policy (None: ELOPIPE_NO_MOVES,
    else 'played'; `elopipe.rating.store_io.load_games`), the rate class of events whose rate of
    play nothing says (None: ELOPIPE_UNKNOWN_TC, else 'standard'; `param_checks.unknown_tc_policy`)
    and, for a FIDE system, where Ro comes from (None: ELOPIPE_RO_FROM, else 'list';
    `elopipe.rating.fide.ro`); the other systems have their own rules."""
    from elopipe.rating.fide.params import SYSTEM_CLASS, ro_from_policy
    from elopipe.rating.param_checks import unknown_tc_policy
    from elopipe.rating.store_io import no_moves_policy

    params: dict[str, object] = {
        "no_moves": no_moves_policy(lists.no_moves),
        "unknown_tc": unknown_tc_policy(lists.unknown_tc),
    }
    if system.partition("@")[0] in SYSTEM_CLASS:
        params["ro_from"] = ro_from_policy(lists.ro_from)
    return RateRequest(lists.db, system, lists.through, params=params)
