"""`elopipe scenarios list | show NAME | drop NAME`: the what-if scenarios of the store.

A scenario is made by `elopipe rate --system S --scenario NAME [--rules ...] [--param K=V ...]`;
its rows are stored under the system 'S@NAME' (`elopipe.rating.scenarios`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from elopipe.cli.app import DB_OPTION_HELP, console, err_console, print_table, sub_app
from elopipe.jobs.requests import ScenarioRequest
from elopipe.jobs.store import DEFAULT_DB
from elopipe.runtime.hints import command_hint

scenarios_app = sub_app("scenarios", "What-if scenarios made by `elopipe rate --scenario NAME`: list, show, drop.")

_DB = typer.Option(Path(DEFAULT_DB), "--db", help=DB_OPTION_HELP)
_NAME = typer.Argument(..., help="The scenario's NAME (all its systems) or one SYSTEM@NAME.")


@scenarios_app.command("list")
def list_scenarios(db: Path = _DB) -> None:
    """Every scenario: its system, rules, options, and the lists it holds."""
    from elopipe.jobs.players import scenarios

    df = scenarios(ScenarioRequest(db))
    if df.height == 0:
        make = command_hint("rate --system fide --scenario NAME --rules V2017", db)
        console.print(f"no scenario in {db} (make one with `{make}`)", markup=False, highlight=False)
        return
    table = Table(title=f"scenarios in {db}")
    for col in ("name", "system", "rules", "options", "through", "lists", "first list", "last list", "rated at"):
        table.add_column(col, justify="right" if col == "lists" else "left")
    for r in df.iter_rows(named=True):
        table.add_row(
            r["name"] + (" (unfinished: a stopped run, no list; rate it again or drop it)" if r["unfinished"] else ""),
            r["system"],
            r["rules"] or "by date",
            _options(r["params"]),
            _text(r["through"], "every list"),
            str(r["lists"]),
            _text(r["first_list"]),
            _text(r["last_list"]),
            f"{r['rated_at']:%Y-%m-%d %H:%M} UTC",
        )
    print_table(table)


@scenarios_app.command("show")
def show(name: str = _NAME, db: Path = _DB) -> None:
    """A scenario's definition (base system, rules, options, through, when made) and its lists."""
    from elopipe.jobs.players import scenarios

    df = scenarios(ScenarioRequest(db, name))
    if df.height == 0:
        raise _no_such(name, db)
    for r in df.iter_rows(named=True):
        lists = f"{r['lists']} ({r['first_list']} .. {r['last_list']})" if r["lists"] else "none"
        console.print(f"scenario {r['name']} (system {r['system']})")
        for label, value in (
            ("  base system", f"{r['base_system']} (its rules, changed by the options below)"),
            ("  rules", r["rules"] or f"{r['base_system']}'s, by date"),
            ("  options", _options(r["params"])),
            ("  through", _text(r["through"], "every list")),
            ("  created", f"{r['created_at']:%Y-%m-%d %H:%M:%S} UTC"),
            ("  last rated", f"{r['rated_at']:%Y-%m-%d %H:%M:%S} UTC"),
            ("  lists", lists),
            ("  compare", command_hint(f"compare {r['base_system']} {r['system']}", db)),
        ):
            console.print(f"{label}: {value}", markup=False, highlight=False)


@scenarios_app.command("drop")
def drop(name: str = _NAME, db: Path = _DB) -> None:
    """Delete a scenario's rows and its definition, in one transaction.

    Every table keyed by system loses the scenario's rows; the official lists are never touched.
    """
    from elopipe.jobs.players import drop_scenario
    from elopipe.rating.scenarios import NoSuchScenario

    try:
        deleted = drop_scenario(ScenarioRequest(db, name), lambda m: err_console.print(m))
    except NoSuchScenario:
        raise _no_such(name, db) from None
    total = sum(deleted.values())
    detail = ", ".join(f"{t} {n}" for t, n in sorted(deleted.items()))
    console.print(f"dropped scenario {name.strip().lower()}: {total} rows ({detail})")


def _no_such(name: str, db: Path) -> Exception:
    """The error of `show` and `drop` for a name the store does not hold; both name the store's file."""
    from elopipe.rating.scenarios import NoSuchScenario

    return NoSuchScenario(f"no scenario {name.strip()!r} in {db} (see `{command_hint('scenarios list', db)}`)")


def _options(params: str | None) -> str:
    """'rating_from=2005-01-01, no_moves=played' from the stored JSON; 'none' when empty."""
    values: dict[str, Any] = json.loads(params) if params else {}
    shown = [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in values.items() if v is not None]
    return ", ".join(shown) or "none"


def _text(value: object, missing: str = "") -> str:
    return missing if value is None else str(value)
