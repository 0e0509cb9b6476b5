"""How the readers run work beside them: an executor the caller gives, or none.

`read/` starts no thread and no process (an import contract forbids `multiprocessing` and
`concurrent.futures` here, issue 28): `elopipe.ingest.execution` owns the pools and hands them
in. A reader given no executor does the same work in its own thread, in the same order, with the
same result; an executor only lets the work that releases the GIL (hashing, Polars, numpy)
overlap the reader's Python.

- `Executor`: what `concurrent.futures.Executor.submit` offers; `Pending`: its futures'
  `result()`;
- `Spread`: runs `fn(start, end)` for each range of raw games in other processes (a fork
  pool: the reader's text is inherited, not sent) while `local()` runs here; a range it could
  not run is None, and the reader reads it itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")
T_co = TypeVar("T_co", covariant=True)

__all__ = ["Done", "Executor", "Pending", "Spread", "submit"]


class Pending(Protocol[T_co]):
    """A result that may still be computed (a `concurrent.futures.Future`, or `Done`)."""

    def result(self) -> T_co: ...


class Executor(Protocol):
    """Runs `fn(*args)` beside the caller (`concurrent.futures.Executor.submit`)."""

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Pending[T]: ...


class Spread(Protocol):
    """(`local()`, `[fn(a, b) for a, b in ranges]`): the ranges in other processes while `local`
    runs here; None for a range that failed there."""

    def __call__(
        self, fn: Callable[[int, int], T], ranges: list[tuple[int, int]], local: Callable[[], R]
    ) -> tuple[R, list[T | None]]: ...


class Done:
    """A result computed already (no executor)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def result(self) -> Any:
        return self.value


def submit(executor: Executor | None, fn: Callable[..., T], *args: Any) -> Pending[T]:
    """`fn(*args)` on `executor`, or computed now when there is none."""
    if executor is None:
        return Done(fn(*args))
    return executor.submit(fn, *args)
