"""Tests of `elopipe.rating.fide`."""
