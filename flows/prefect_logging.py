"""Prefect's logging set-up without writing out every setting first.

Prefect configures logging (`prefect.logging.configuration.setup_logging`) when `prefect.main` is
imported, and its server again in `create_app`. Each time it fills the `${PREFECT_...}`
placeholders of its logging.yml (three: the log levels) from
`Settings.to_environment_variables()`, which serializes all of Prefect's ~300 settings: about
0.05 CPU-s of a `run`'s command and as much of its temporary server (bench/prefect_ab.py).
`fill_placeholders_lazily()` hands that template the same values, each worked out only when the
template asks for it (`SettingVariables`); a name it cannot place gets the full list, as before.

Imports Prefect: call it once Prefect is imported and before `prefect.main` is (flows/_env.py,
flows.prefect_server.server_app).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

_MARK = "_elopipe_lazy_variables"


def fill_placeholders_lazily() -> None:
    """Make Prefect's `load_logging_config` read settings through `SettingVariables` (see the module
    docstring). Safe to call again."""
    from prefect.logging import configuration

    # the module's own `from prefect.settings import get_current_settings` (not re-exported)
    real = configuration.get_current_settings  # type: ignore[attr-defined]
    if getattr(real, _MARK, False):
        return

    def settings_for_logging() -> Any:
        return _SettingsForLogging(real())

    setattr(settings_for_logging, _MARK, True)
    # load_logging_config is the one user of this name in Prefect's logging module
    configuration.get_current_settings = settings_for_logging  # type: ignore[attr-defined]


class _SettingsForLogging:
    """Prefect's settings, as `load_logging_config` uses them: `to_environment_variables` gives a
    `SettingVariables`; every other attribute is the settings' own."""

    def __init__(self, settings: Any) -> None:
        self._settings = settings

    def __getattr__(self, name: str) -> Any:
        return getattr(self._settings, name)

    def to_environment_variables(self, **options: Any) -> SettingVariables:
        return SettingVariables(self._settings, options)


class SettingVariables(Mapping[str, str]):
    """What `settings.to_environment_variables(**options)` returns (variable name -> value), each
    value worked out when it is asked for, from the one setting it names. With other options than
    `include_aliases=True` (the logging template's), or a name no setting has, the full list is
    made once, as Prefect does."""

    def __init__(self, settings: Any, options: dict[str, Any]) -> None:
        self._settings = settings
        self._options = options
        self._all: dict[str, str] | None = None
        self._owners: dict[str, tuple[Any, str]] | None = None

    def _everything(self) -> dict[str, str]:
        if self._all is None:
            self._all = self._settings.to_environment_variables(**self._options)
        return self._all

    def __getitem__(self, key: str) -> str:
        if self._all is None and self._options == {"include_aliases": True}:
            if self._owners is None:
                self._owners = dict(_variable_owners(self._settings))
            if (owner := self._owners.get(key)) is not None:
                return _one_value(*owner)
        return self._everything()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._everything())

    def __len__(self) -> int:
        return len(self._everything())


def _variable_owners(settings: Any) -> Iterator[tuple[str, tuple[Any, str]]]:
    """(variable name, (settings model, field)) for every setting below `settings`, the names as
    `to_environment_variables(include_aliases=True)` gives them (prefect.settings.base)."""
    from prefect.settings.base import PrefectBaseSettings
    from pydantic import AliasChoices

    for field, info in type(settings).model_fields.items():
        child = getattr(settings, field)
        if isinstance(child, PrefectBaseSettings):
            yield from _variable_owners(child)
            continue
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            names = [choice.upper() for choice in alias.choices if isinstance(choice, str)]
        elif isinstance(alias, str):
            names = [alias.upper()]
        else:
            names = [f"{settings.model_config.get('env_prefix')}{field.upper()}"]
        for name in names:
            yield name, (settings, field)


def _one_value(settings: Any, field: str) -> str:
    """`field` of the settings model `settings` as `to_environment_variables` writes it. KeyError
    when it is None (left out there)."""
    from prefect.settings.base import _to_environment_variable_value

    value = settings.model_dump(mode="json", include={field}, context={"include_secrets": True}).get(field)
    if value is None:
        raise KeyError(field)
    return _to_environment_variable_value(value)
