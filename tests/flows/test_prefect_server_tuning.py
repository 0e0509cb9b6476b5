"""What elopipe leaves undone in Prefect for its temporary server and logging set-up
(flows.prefect_logging, flows.prefect_server): the same values, routes and records as Prefect's own."""

from __future__ import annotations

import os

import pytest
from pydantic import BaseModel

from flows import prefect_server
from tests.helpers.prefect_home import new_home


class Item(BaseModel):
    """A request body (module level: FastAPI resolves an endpoint's annotations in its module)."""

    name: str


def test_the_logging_templates_variables_are_the_ones_prefect_writes_out() -> None:
    from prefect.settings import get_current_settings

    from flows.prefect_logging import SettingVariables

    settings = get_current_settings()
    full = settings.to_environment_variables(include_aliases=True)
    lazy = SettingVariables(settings, {"include_aliases": True})
    assert {name: lazy[name] for name in full} == full  # each one, worked out on its own
    with pytest.raises(KeyError):
        lazy["PREFECT_NO_SUCH_SETTING"]
    other = SettingVariables(settings, {})  # other options: Prefect's full list, as it is
    assert dict(other) == settings.to_environment_variables()


def test_prefects_logging_configuration_is_the_same_with_the_variables_worked_out_lazily() -> None:
    from prefect.logging import configuration

    from flows.prefect_logging import fill_placeholders_lazily

    fill_placeholders_lazily()  # flows/_env.py did it already: once is enough
    fill_placeholders_lazily()
    lazy = configuration.load_logging_config(configuration.DEFAULT_LOGGING_SETTINGS_PATH)
    patched = configuration.get_current_settings  # type: ignore[attr-defined]
    from prefect.settings import get_current_settings

    try:
        configuration.get_current_settings = get_current_settings  # type: ignore[attr-defined]
        full = configuration.load_logging_config(configuration.DEFAULT_LOGGING_SETTINGS_PATH)
    finally:
        configuration.get_current_settings = patched  # type: ignore[attr-defined]
    assert lazy == full
    assert full["root"]["level"] and full["loggers"]["prefect.server"]["level"]


def test_routes_declared_for_the_server_are_built_only_when_their_router_is_first_used() -> None:
    from fastapi import routing

    had_getattr = "__getattr__" in vars(routing.APIRoute)
    try:
        _declare_include_and_call()
    finally:  # a server process keeps the class as the block leaves it; this test process does not
        if not had_getattr:
            del routing.APIRoute.__getattr__  # type: ignore[attr-defined]


def _declare_include_and_call() -> None:
    import asyncio

    import httpx
    from fastapi import APIRouter, FastAPI
    from fastapi.dependencies.models import Dependant

    with prefect_server._routes_built_when_used():
        used, unused = APIRouter(prefix="/used"), APIRouter(prefix="/unused")

        @used.post("/items")
        def add(item: Item) -> Item:
            return Item(name=item.name.upper())

        @used.get("/items/{n}", name="one item")
        def one(n: int) -> dict[str, int]:
            return {"n": n}

        @unused.get("/never")
        def never() -> None: ...

    deferred = prefect_server._DEFERRED
    routes = [*used.routes, *unused.routes]
    assert all(deferred in vars(r) for r in routes)  # nothing built yet
    assert [r.path for r in routes] == ["/used/items", "/used/items/{n}", "/unused/never"]  # as FastAPI has them
    assert [r.name for r in routes] == ["add", "one item", "never"]
    app = FastAPI()
    app.include_router(used, prefix="")
    app.include_router(unused)
    assert all(deferred in vars(r) for r in routes)  # including them builds nothing either

    async def calls() -> list[httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            return [
                await client.post("/used/items", json={"name": "ro"}),
                await client.get("/used/items/7"),
                await client.post("/used/items", json={"nom": 1}),
            ]

    added, got, refused = asyncio.run(calls())
    assert added.json() == {"name": "RO"} and got.json() == {"n": 7}
    assert refused.status_code == 422  # its body model checks
    assert deferred not in vars(used.routes[0]) and deferred in vars(unused.routes[0])
    assert isinstance(unused.routes[0].dependant, Dependant)  # built when read
    with pytest.raises(AttributeError):
        _ = used.routes[0].no_such_attribute
    later = APIRouter()

    @later.get("/later")
    def after() -> None: ...

    assert deferred not in vars(later.routes[0])  # outside the block: built at once, as FastAPI does


RECORDED = """
import sqlite3, sys
from flows import prefect_env

with prefect_env.prefect_api(fork=True) as api:
    api.launch()
    from prefect import flow, task
    from prefect.cache_policies import NO_CACHE

    @task(task_run_name="step {i}", cache_policy=NO_CACHE, persist_result=False)
    def step(i: int) -> int:
        return i

    @flow(name="tuning-check")
    def check() -> int:
        return step(1) + step(2)

    api.wait_ready()
    from prefect.settings import get_current_settings

    services = get_current_settings().server.services
    assert services.task_run_recorder.batch_size > 1 and services.event_persister.batch_size > 20
    assert check() == 3
con = sqlite3.connect(sys.argv[1])
run = con.execute("select id, state_type from flow_run where name is not null and flow_id in "
                  "(select id from flow where name = 'tuning-check')").fetchall()
tasks = con.execute("select name, state_type from task_run where flow_run_id = ? order by name",
                    (run[0][0],)).fetchall()
events = con.execute("select count(*) from events where event like 'prefect.task-run.%'").fetchone()[0]
print(run[0][1], tasks, events)
"""


@pytest.mark.slow
def test_the_temporary_server_writes_every_task_run_and_event_of_a_run_before_it_stops(tmp_path) -> None:
    """Task runs and events are written in batches on elopipe's temporary server: all of them are in
    its database once the command's block has ended (the server's last batch, at its stop)."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "PREFECT_PROFILE")}
    env["PREFECT_HOME"] = str(new_home(tmp_path / "home"))  # its database migrated by another test's server, if any
    database = str(tmp_path / "home" / "prefect.db")
    proc = subprocess.run(
        [sys.executable, "-c", RECORDED, database], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "COMPLETED [('step 1', 'COMPLETED'), ('step 2', 'COMPLETED')] 6", proc.stdout


def test_clients_of_our_own_server_load_no_certificates_and_skip_its_version_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ssl

    from prefect._internal.version_checking import _is_api_version_check_cached
    from prefect.client.orchestration import PrefectClient, SyncPrefectClient

    from flows import prefect_env

    for client_class in (PrefectClient, SyncPrefectClient):  # put back as Prefect has them after the test
        monkeypatch.setattr(client_class, "__init__", client_class.__init__)
    made: list[object] = []
    real = ssl.create_default_context
    monkeypatch.setattr(ssl, "create_default_context", lambda *a, **k: made.append(k) or real(*a, **k))
    ours = "http://127.0.0.1:9/api"
    monkeypatch.setattr(prefect_env, "_own_api_url", ours)
    prefect_env._clients_of_our_own_server(ours)
    prefect_env._clients_of_our_own_server(ours)  # once is enough
    SyncPrefectClient(ours)
    PrefectClient(ours)
    assert made == []  # no certificate store loaded for a plain-HTTP server of our own
    assert _is_api_version_check_cached((ours + "/", prefect_env.prefect_version()))
    SyncPrefectClient("https://prefect.example.org/api")  # any other server: verified as Prefect does
    SyncPrefectClient(ours, httpx_settings={"verify": False})  # a caller's own choice: Prefect's handling
    assert len(made) == 2  # each a context of Prefect's making
