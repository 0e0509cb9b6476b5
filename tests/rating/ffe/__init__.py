"""Tests of `elopipe.rating.ffe`."""
