"""elopipe.runtime.prefect_env: Prefect's environment set before Prefect is imported."""

from __future__ import annotations

import os

import pytest

from elopipe.runtime import prefect_env

LEVEL = "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL"


def test_verbose_survives_the_quiet_call_that_importing_flows_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    """`elopipe run -v` calls configure(quiet=False); importing `flows` then calls configure()
    again. Prefect's INFO log must stay on (it was switched back to WARNING)."""
    monkeypatch.setenv(LEVEL, "-")  # so that monkeypatch restores the variable, set or not
    monkeypatch.delenv(LEVEL)
    prefect_env.configure(quiet=False)
    prefect_env.configure()
    assert os.environ[LEVEL] == "INFO"


def test_quiet_by_default_and_a_user_setting_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LEVEL, "-")  # so that monkeypatch restores the variable, set or not
    monkeypatch.delenv(LEVEL)
    prefect_env.configure()
    assert os.environ[LEVEL] == "WARNING"
    monkeypatch.setenv(LEVEL, "DEBUG")
    prefect_env.configure(quiet=False)
    assert os.environ[LEVEL] == "DEBUG"
