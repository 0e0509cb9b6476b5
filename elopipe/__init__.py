"""elopipe: chess tournament files (PGN, TRF) to FIDE/FFE rating lists in DuckDB."""

__version__ = "0.1.0"
