"""Registry of rating systems: system name → the function that rates it.

A rating function is a `RateFn`: ``fn(con, *, system, through, rules, **params) -> RateSummary``;
it writes the store contract for `system` (see `elopipe.rating.result_tables`) and reports its counts
in the one `elopipe.rating.summary.RateSummary`.

Entries are registered lazily (module path + attribute) so that importing the registry
does not import every engine.  Other engines add themselves here with `register` or by
adding a line to `_BUILTIN`.

A scenario key 'BASE@NAME' (`elopipe.rating.scenarios`) is rated by BASE's function, which
stores its rows under the scenario's key.  Each built-in engine module also has
``param_keys(system) -> list[str]``, the engine options `elopipe rate --param` accepts.
"""

from __future__ import annotations

import datetime as dt
import importlib
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import duckdb

    from elopipe.rating.summary import RateSummary


class RateFn(Protocol):
    """A rating engine: rates `system` (a system name, or a scenario 'BASE@NAME' stored under
    that key) over the store behind `con` (a writer connection) up to the list of `through`
    (None: all; the stored lists after it are kept), under the rules version `rules` (None: the
    system's own choice) and the engine options `params`; writes the store contract and returns
    the run's `RateSummary`. Raises ValueError for an option or rules value it does not know."""

    def __call__(
        self,
        con: duckdb.DuckDBPyConnection,
        *,
        system: str,
        through: dt.date | None = None,
        rules: str | None = None,
        **params: Any,
    ) -> RateSummary: ...


# What `run`, `watch`, `serve` and the Prefect flows rate when no system is named.
DEFAULT_SYSTEMS: tuple[str, ...] = ("fide", "fide-rapid", "fide-blitz")

_BUILTIN: dict[str, str] = {
    "fide": "elopipe.rating.fide.run:rate_fide",
    "fide-rapid": "elopipe.rating.fide.run:rate_fide",
    "fide-blitz": "elopipe.rating.fide.run:rate_fide",
    "ffe": "elopipe.rating.ffe.run:rate_ffe",
    "ffe-rapid": "elopipe.rating.ffe.run:rate_ffe",
    "elo": "elopipe.rating.generic.run:rate_elo",
    "glicko2": "elopipe.rating.generic.run:rate_glicko2",
}
_REGISTRY: dict[str, RateFn | str] = dict(_BUILTIN)


def register(name: str, fn: RateFn | str) -> None:
    """Register `fn` (a callable or 'module:attribute') as the rater of system `name`."""
    _REGISTRY[name] = fn


def names() -> list[str]:
    """Known system names, sorted."""
    return sorted(_REGISTRY)


def base_of(name: str) -> str:
    """The system whose rules `name` runs: 'fide@v2017' -> 'fide'; a plain name unchanged."""
    return name.partition("@")[0]


def get(name: str) -> RateFn:
    """The rating function of `name` (a scenario 'BASE@NAME': BASE's). Raises ValueError for an
    unknown system."""
    base = base_of(name)
    try:
        entry = _REGISTRY[base]
    except KeyError:
        raise ValueError(f"unknown rating system {base!r}; known: {', '.join(names())}") from None
    if isinstance(entry, str):
        module, _, attr = entry.partition(":")
        entry = getattr(importlib.import_module(module), attr)
        _REGISTRY[base] = entry
    return entry


def param_keys(name: str) -> list[str] | None:
    """The engine options the rating function of `name` accepts, sorted; None when its module
    does not say (a registered engine without ``param_keys``). Raises ValueError for an
    unknown system."""
    fn = get(name)
    keys = getattr(importlib.import_module(fn.__module__), "param_keys", None)
    return None if keys is None else list(keys(base_of(name)))
