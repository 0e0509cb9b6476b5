"""elopipe: chess tournament files (PGN, TRF) to FIDE/FFE rating lists in DuckDB."""

from typing import Any


def __getattr__(name: str) -> Any:
    # `__version__` is read from the installed metadata (written once, in pyproject.toml) only when
    # asked: every process imports this package, parse workers included
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("elopipe")
        except PackageNotFoundError:  # a source tree that was never installed
            return "0+unknown"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
