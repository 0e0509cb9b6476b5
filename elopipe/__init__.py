"""elopipe: chess tournament files (PGN, TRF) to FIDE/FFE rating lists in DuckDB."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("elopipe")  # written once, in pyproject.toml
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
