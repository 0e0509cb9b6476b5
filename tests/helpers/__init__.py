"""Helpers shared by the tests: paths, store rows, TRF builders, FIDE and FFE fixtures."""
