"""Tests of `elopipe.rating.generic`."""
