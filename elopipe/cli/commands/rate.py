"""`elopipe rate`: compute rating lists (FIDE standard/rapid/blitz and the other systems).

`--rules` and `--param` change a system's rules: they are taken only with `--scenario NAME`,
whose lists are stored under 'SYSTEM@NAME' beside the official computed lists
(`elopipe.rating.scenarios`); a scenario keeps the rules and options it was made with, and
values are checked by kind before the store is opened (`elopipe.rating.param_checks`).
`--through` alone is a preview: the later lists are kept.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from elopipe.cli.app import DB_OPTION_HELP, app, console, err_console, fail
from elopipe.cli.commands.policies import (
    checked_no_moves,
    checked_ro_from,
    checked_unknown_tc,
    no_moves_option,
    ro_from_option,
    takes_ro_from,
    unknown_tc_option,
)
from elopipe.jobs.requests import RateRequest
from elopipe.jobs.store import DEFAULT_DB, StoreBusyError
from elopipe.rating import systems
from elopipe.rating.faults import REASON_PREFIX
from elopipe.rating.run import parse_month
from elopipe.rating.scenarios import ScenarioError, scenario_system, split_system
from elopipe.rating.summary import RateSummary
from elopipe.read.control_chars import escape_controls
from elopipe.runtime.heartbeat import Heartbeat
from elopipe.runtime.hints import command_hint


@app.command("rate")
def rate_command(
    system: Annotated[
        str, typer.Option("--system", help="Rating system: fide, fide-rapid, fide-blitz, ffe, ...")
    ] = "fide",
    db: Annotated[Path, typer.Option("--db", help=DB_OPTION_HELP)] = Path(DEFAULT_DB),
    through: Annotated[
        str | None,
        typer.Option(
            "--through", help="Last list to compute, YYYY-MM: a preview, the later lists are kept as they are."
        ),
    ] = None,
    scenario: Annotated[
        str | None,
        typer.Option(
            "--scenario",
            help="Store the lists as the what-if scenario NAME (system SYSTEM@NAME), never in place of "
            "the official computed lists; needed for --rules and --param.",
        ),
    ] = None,
    rules: Annotated[
        str | None,
        typer.Option("--rules", help="Force a rules version (FIDE: V2017, V2022 or V2024); needs --scenario."),
    ] = None,
    v2022_cap_lower: Annotated[
        bool,
        typer.Option(
            "--v2022-cap-lower",
            help="FIDE V2022 (2022-01 to 2024-02): also cap the lower-rated side at -400 "
            "(default: raw difference, FIDE's reported practice; NOT VERIFIED); needs --scenario.",
        ),
    ] = False,
    unknown_tc: str | None = unknown_tc_option,
    no_moves: str | None = no_moves_option,
    ro_from: str | None = ro_from_option,
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            help="Engine option KEY=VALUE, repeatable; needs --scenario (e.g. fide: rating_from=2014-07-01, a date "
            "before 2009-07-01 only with --rules; "
            "ffe: z_mode=logistic, strict_boundary=true, unrated_opponents=iterative; elo: k=20,games<30:40, "
            "period=tournament; glicko2: tau=0.5).",
        ),
    ] = None,
) -> None:
    """Compute every list of a rating system from the games in the store.

    Only the earliest list whose inputs changed and the later ones are rewritten.

    With --scenario NAME the lists are stored as SYSTEM@NAME, beside the official computed lists.
    A scenario keeps its definition: run again without --rules or options, it is rated under
    its stored ones; other rules or options are refused.
    """
    from elopipe.jobs.rate import rate_system
    from elopipe.rating.param_checks import ParamError

    request = _request(system, str(db), through, scenario, rules, v2022_cap_lower, unknown_tc, no_moves, ro_from, param)
    system, month = request.system, request.through
    try:
        with rating_progress(system, db):
            outcome = rate_system(request, on_wait=lambda m: err_console.print(m))
    except (ScenarioError, ParamError) as exc:  # a scenario defined otherwise: a usage error, exit 2
        fail(str(exc), exc.exit_code)
    except (ValueError, StoreBusyError, FileNotFoundError) as exc:
        fail(str(exc), getattr(exc, "exit_code", 1))
    if outcome.summary is None:
        console.print(f"{system}: no games to rate (ingest PGN or TRF files first)")
        return
    summary, missing = outcome.summary, outcome.missing_standard
    _print(summary, month, db)
    if missing:
        name = system.partition("@")[2]
        first = command_hint(f"rate --system {missing[0].partition('@')[0]} --scenario {name}", db)
        err_console.print(
            f"note: {system} credits standard ratings from {' or '.join(missing)}, which the store does not hold:"
            " no computed standard rating is credited"
            f" (`{first}` first to credit them)",
            style="yellow",
            soft_wrap=True,
        )


PROGRESS_EVERY = 5.0  # seconds between two progress lines of a long rating


@contextlib.contextmanager
def rating_progress(system: str, db: Path, every: float = PROGRESS_EVERY) -> Iterator[None]:
    """While a rating runs: at once, on a terminal, a line that says it started (a federation's
    store takes many seconds before anything is written); then, on a terminal or in a log, a
    line every `every` seconds that says it is still at work, with the time so far. A short
    rating prints only the first."""
    if err_console.is_terminal:
        err_console.print(
            f"rating {system} in {escape_controls(str(db))} ...", markup=False, highlight=False, soft_wrap=True
        )
    t0 = time.monotonic()

    def beat() -> None:
        seconds = int(time.monotonic() - t0)
        err_console.print(f"rating {system}: still computing ({seconds // 60}m {seconds % 60:02d}s)", highlight=False)

    with Heartbeat(every, beat):
        yield


def _request(
    system: str,
    db: str,
    through: str | None,
    scenario: str | None,
    rules: str | None,
    v2022_cap_lower: bool,
    unknown_tc: str | None,
    no_moves: str | None,
    ro_from: str | None,
    param: list[str] | None,
) -> RateRequest:
    """The options of `rate`, checked, as the rating job's request; a bad one is a usage error:
    one line, exit 2."""
    from elopipe.rating.param_checks import ParamError, rules_name

    system = _system_key(system, scenario)
    try:
        month = parse_month(through)
    except ValueError as exc:
        fail(f"--through: {exc}")
    # what the user gave (a scenario's definition must agree) and what applies unless given
    params: dict[str, object] = {}
    defaults: dict[str, object] = {"no_moves": checked_no_moves(None)} if no_moves is None else {}
    if no_moves is not None:
        params["no_moves"] = checked_no_moves(no_moves)
    if takes_ro_from(system):
        if ro_from is None:
            defaults["ro_from"] = checked_ro_from(None)
        else:
            params["ro_from"] = checked_ro_from(ro_from)
    elif ro_from is not None:
        fail(f"--ro-from applies to the FIDE systems (fide, fide-rapid, fide-blitz), not {system}")
    if unknown_tc is None:
        defaults["unknown_tc"] = checked_unknown_tc(None)
    else:
        params["unknown_tc"] = checked_unknown_tc(unknown_tc)
    if v2022_cap_lower:
        params["v2022_cap_lower"] = True
    params.update(_engine_params(system, param or []))
    # what changes the rules is a what-if: never written over the official computed lists
    what_if = [o for o, v in (("--rules", rules), ("--param", param), ("--v2022-cap-lower", v2022_cap_lower)) if v]
    if "@" not in system and what_if:
        given = " and ".join(what_if) if len(what_if) < 3 else ", ".join(what_if[:-1]) + " and " + what_if[-1]
        fail(
            f"{given} {'change' if len(what_if) > 1 else 'changes'} the rules and would replace"
            f" the official computed lists: add --scenario NAME to store them as {system}@NAME"
        )
    try:
        rules = None if rules is None else rules_name(system, rules)
    except ParamError as exc:
        fail(str(exc))
    if params.get("v2022_cap_lower") and rules not in (None, "V2022"):
        # the switch is of V2022's one-upgrade rule only (b02.d_used): under other forced rules
        # it would be stored in the scenario's definition and change no rating
        fail(f"--v2022-cap-lower applies to the V2022 rules only, not to --rules {rules}: drop one of them")
    return RateRequest(db, system, month, rules, params, defaults, skip_empty=True)


# What the command's own options set: never an engine option (`rate(con, system, ...)`)
_OWN_OPTIONS = {
    "system": "--system", "rules": "--rules", "through": "--through", "no_moves": "--no-moves", "ro_from": "--ro-from",
    "con": "--db", "db": "--db", "unknown_tc": "--unknown-tc", "v2022_cap_lower": "--v2022-cap-lower",
}  # fmt: skip


def _system_key(system: str, scenario: str | None) -> str:
    """'fide' or, with a scenario, 'fide@name' (also given as --system fide@name); exits 2 for
    an unknown system or a bad scenario name."""
    try:
        base, named = split_system(system)
        if named is not None and scenario is not None:
            raise ScenarioError(f"--system {system} already names a scenario: leave out --scenario")
        if base not in systems.names():
            fail(f"unknown system {base!r}; known: {', '.join(systems.names())}")
        name = named or scenario
        return base if name is None else scenario_system(base, name)
    except ScenarioError as exc:
        fail(str(exc))


def _engine_params(system: str, items: list[str]) -> dict[str, object]:
    """The --param items as {key: value} (`param_checks.parse_param`); exits 2 for a malformed
    item, an option the command sets itself, a key the engine does not know (listing the valid
    ones) or a bad value (naming the accepted ones)."""
    from elopipe.rating.param_checks import ParamError, parse_param
    from elopipe.read.control_chars import escape_controls, shown_value

    known = systems.param_keys(system)
    valid = [k for k in known or () if k not in _OWN_OPTIONS]
    label = _LABELS.get(systems.base_of(system), systems.base_of(system))
    params: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            fail(f"--param {shown_value(item)}: expected KEY=VALUE")
        key = key.strip()
        if key == "ro_from" and not takes_ro_from(system):  # `--ro-from` would be refused too
            fail(f"--param ro_from: Ro's source is a FIDE rule: it applies to the FIDE systems, not {system}")
        if key in _OWN_OPTIONS:
            fail(f"--param {key}: use {_OWN_OPTIONS[key]}")
        if known is not None and key not in valid:
            fail(f"unknown {label} parameter {escape_controls(key)}; known: {', '.join(valid)}")
        try:
            params[key] = parse_param(key, value)
        except ParamError as exc:  # the item as written: a choice's message shows its value as written too
            fail(f"--param {escape_controls(item)}: {exc}")
    return params


_LABELS = {"fide": "FIDE", "fide-rapid": "FIDE", "fide-blitz": "FIDE", "ffe": "FFE", "ffe-rapid": "FFE"}


def _print_ro_far(s: RateSummary, db: Path) -> None:
    """How many players' Ro is far from their file's rating, the largest gaps, and what fixes
    them (`RateSummary.ro_far`); nothing when there is none."""
    from elopipe.rating.summary import RO_MARK_POINTS
    from elopipe.runtime.words import plural

    players, entries = s.ro_far, s.ro_far_entries
    if not players:
        return
    console.print(
        f"Ro {RO_MARK_POINTS} or more points from the file's rating: {plural(players, 'player')}"
        f" ({plural(entries, 'event entry', 'event entries')}); the largest:",
        highlight=False,
    )
    for w in s.ro_far_worst:
        console.print(
            f"  {w.name} – {w.event}: Ro {w.ro} ({w.source}), file {w.file_rating}, {w.diff:+d}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    fix = f"import the official lists in force (`{command_hint('lists import FILE --system fide', db)}`)"
    why = (
        f"  with --ro-from file, these Ro are a list's: the player has no FIDE ID in the store, or an imported"
        f" official list rates him; {fix}"
        if s.ro_from == "file"
        else f"  the store's lists lack these players' other games: {fix}, or rate with `--ro-from file` to start"
        " each event from the file's rating"
    )
    console.print(f"{why} (reports mark each such Ro)", highlight=False, soft_wrap=True, markup=False)


_ASSUMED_SHOWN = 10


def _print_assumed(system: str, events: list[tuple[str, int]], db: Path) -> None:
    """The events whose rate of play was assumed, by name, the most games first."""
    if not events:
        return
    from elopipe.rating.summary import sql_assumed
    from elopipe.runtime.words import plural

    console.print(f"  in {plural(len(events), 'event')} whose rate of play was assumed, the largest first:")
    for name, n in events[:_ASSUMED_SHOWN]:
        console.print(f"    {n:>6}  {name}", markup=False, highlight=False)
    if len(events) > _ASSUMED_SHOWN:
        console.print(
            f"    … {len(events) - _ASSUMED_SHOWN} more ({command_hint(sql_assumed(system), db)})",
            markup=False,
            highlight=False,
        )


def _print_reasons(s: RateSummary, db: Path) -> None:
    """The game sides not counted and the events skipped, each reason in a few words
    (`reason_words.short_words`), the largest count first, and the `elopipe sql` query that
    counts the stored rows by their codes."""
    from elopipe.publish.reason_words import short_words

    where = f"system = '{s.system}'"  # a system name is a plain word (`_system_key`): no quote to escape
    sides = f"SELECT reason, count(*) AS sides FROM rating_changes WHERE {where} AND NOT counted"
    events = f"SELECT reason, count(DISTINCT tournament_id) AS events FROM rating_skips WHERE {where}"
    for label, counts, query in (
        ("game sides not counted", s.not_counted, sides),
        ("events skipped", s.events_skipped, events),
    ):
        d: dict[str, int] = {}
        for k, v in counts.items():
            # one count for the events whose rating failed: their lines below say why
            k = "rating_failed" if k.startswith(REASON_PREFIX) else k
            # an event in progress names its unfinished round: the ingest's line gave it, one count here
            k = "in_progress" if k.startswith("in_progress:") else k
            d[k] = d.get(k, 0) + v
        if d:
            said = ", ".join(f"{v} {short_words(k)}" for k, v in sorted(d.items(), key=lambda kv: (-kv[1], kv[0])))
            hint = command_hint(f'sql "{query} GROUP BY 1 ORDER BY 2 DESC"', db)
            console.print(f"{label}: {said} (`{hint}` counts them by code)", markup=False, highlight=False)


def _print(s: RateSummary, through: dt.date | None, db: Path) -> None:
    from elopipe.runtime.words import plural

    if not s.lists and through is not None:
        console.print(f"{s.system}: no list falls on or before {through:%Y-%m} (--through)")
    elif not s.lists:
        console.print(f"{s.system}: no list (no game of the store is rated under this system)")
    else:
        console.print(
            f"{s.system}: {plural(s.lists, 'list')}"
            f" ({s.first_list} .. {s.last_list}),"
            f" {plural(s.players_rated, 'player')} rated on the last list"
        )
    if s.first_changed is None and not s.lists:
        console.print("nothing written")  # maybe no run before: "nothing changed since" would not hold
    elif s.first_changed is None and s.from_last_run:
        console.print("nothing changed since the last run; nothing written")
    elif s.first_changed is None:  # the engine ran (the line below says from where): its lists came out as stored
        console.print("no list changed: every list computed is the one stored; nothing written")
    elif s.lists_written or not s.removed_lists:
        console.print(f"rewritten from {s.first_changed}: {plural(s.lists_written, 'list')}")
    # else only lists were removed: their line says what changed ("rewritten from ...: 0 lists" did not)
    if gone := s.removed_line():
        console.print(gone)
    if s.resumed_from is not None:
        console.print(f"computed from {s.resumed_from:%Y-%m} on, from the state kept after the list before it")
    elif s.full_reason:
        console.print(f"computed from the first period: {s.full_reason}")
    # the store's lists all told, not this run's: after "nothing written" it read as a change
    console.print(f"first ratings on all the lists: {s.new_ratings}")
    console.print(f"game sides counted: {s.games_counted}")
    console.print(
        f"games with unknown rate of play (assumed: no time control, name, site or day says): {s.unknown_tc_games}"
    )
    _print_assumed(s.system, s.assumed_events, db)
    where = f"system = '{s.system}'"  # a system name is a plain word (`_system_key`): no quote to escape
    differ = command_hint(f'sql "SELECT * FROM rating_discrepancies WHERE {where}"', db)
    console.print(
        f"file ratings that differ from the list in force: {s.discrepancies}"
        + (f" (`{differ}` lists them)" if s.discrepancies else ""),
        markup=False,
        highlight=False,
    )
    if s.loop_cycles:
        # the FFE's first-rating rule repeats the compatibility test until the set of games stops changing
        # and says nothing of a set that comes back: elopipe's choice, in words an officer can check
        cycled = command_hint(f'sql "SELECT * FROM ffe_details WHERE {where} AND cycled"', db)
        console.print(
            f"first rating of {plural(s.loop_cycles, 'player')}: the compatible games kept changing from one pass to"
            " the next, round in a cycle (the FFE's first-rating rule does not say when to stop); only the games"
            f" compatible in every pass of the cycle count (`{cycled}` lists them)",
            markup=False,
            highlight=False,
        )
    _print_reasons(s, db)
    for line in s.failed_events:
        err_console.print(line, style="yellow", markup=False, highlight=False, soft_wrap=True)
    _print_ro_far(s, db)
    kept = s.kept_lists
    if kept:
        console.print(
            f"preview: {len(kept)} later lists kept as they were ({kept[0]} .. {kept[-1]}), not recomputed;"
            f" `{command_hint('rate', db)}` without --through recomputes them"
        )
    base, _, name = s.system.partition("@")
    removed = s.removed_runs
    if removed:
        runs = ", ".join(str(r) for r in removed)
        err_console.print(
            f"removed an unfinished run of {s.system} (rating_runs run_id {runs}), left by a"
            " `rate --scenario` stopped before it stored its lists",
            style="yellow",
            soft_wrap=True,
        )
    if name:
        console.print(
            f"scenario {name}: stored as system {s.system}; the {base} lists are unchanged"
            f" ({command_hint(f'scenarios show {name}', db)})",
            markup=False,
            highlight=False,
        )
