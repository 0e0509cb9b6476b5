"""`elopipe serve` against the installed Prefect: the one private attribute it relies on.

A first Ctrl-C must let the runner start no new scheduled run while the run in progress finishes
(elopipe.cli.commands.serve.stop_polling); Prefect has no public call for that, so serve sets the
`stopping` flag of the runner's private `_scheduled_run_poller`. And the deployment, registered
paused, is resumed once the runner has started, from the runner's private `_deployment_registry`
(elopipe.cli.commands.serve._runner). This test fails when a Prefect release renames or drops
either, instead of `serve` silently polling on after Ctrl-C or never serving. It enters the
runner on the session's Prefect server (`prefect_harness`); no server of its own.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING
from uuid import UUID

import pytest

from elopipe.cli.commands.serve import _register, _runner, drop_leftover_runs, stop_polling

if TYPE_CHECKING:
    from prefect.runner import Runner

pytestmark = pytest.mark.slow


def test_stop_polling_reaches_the_runners_scheduled_run_poller(prefect_harness: str, tmp_path: Path) -> None:
    from prefect.client.orchestration import get_client

    runner = _runner("private-attr")
    deployment = _register(
        runner,
        tmp_path / "inbox",
        None,
        3600,
        tmp_path / "store.duckdb",
        ["fide"],
        tmp_path / "out",
        "private-attr",
        2.0,
    )

    async def paused() -> bool:
        async with get_client() as client:
            return (await client.read_deployment(deployment)).paused

    async def poll_after_stop() -> tuple[bool, object, object]:
        assert await paused()  # registered paused: a stop before the runner starts leaves it so
        async with runner:  # what Runner.start() enters first: it builds the poller
            assert not await paused()  # resumed once the runner has started
            stopped = stop_polling(runner)
            await runner._get_and_submit_flow_runs()  # the runner's own poll step, as its loop calls it
            after_stop = runner.last_polled
            runner._scheduled_run_poller.stopping = False  # the control: not stopped, the same step polls
            await runner._get_and_submit_flow_runs()
            return stopped, after_stop, runner.last_polled

    stopped, after_stop, unstopped = asyncio.run(poll_after_stop())
    assert stopped
    assert after_stop is None  # a stopped poller asked the server for nothing
    assert unstopped is not None


def _deploy(tmp_path: Path, inbox: str, name: str) -> tuple[Runner, UUID]:
    """`serve`'s runner for deployment `name` on drop folder `inbox`, and the deployment, registered."""
    runner = _runner(name)
    return runner, _register(
        runner, tmp_path / inbox, None, 600, tmp_path / "store.duckdb", ["fide"], tmp_path / "out", name, 2.0
    )


async def _scheduled(deployment: UUID) -> dict[UUID, tuple[str, bool, dt.datetime]]:
    """The scheduled runs of `deployment`: id -> (inbox parameter, auto-scheduled, time)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

    async with get_client() as client:
        runs = await client.read_flow_runs(deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment])))
    return {
        r.id: (r.parameters["inbox"], r.auto_scheduled, r.expected_start_time)
        for r in runs
        if r.state is not None and r.state.is_scheduled()
    }


def test_a_new_serve_drops_the_runs_an_earlier_serve_left_due(prefect_harness: str, tmp_path: Path) -> None:
    """A serve killed without its stop leaves its schedule active: the runs due while no serve ran
    stay, with its drop folder, and Prefect's upsert of the next serve keeps them (it drops the
    future ones only). The next serve of the deployment, on another folder, drops them before its
    runner starts; a run a user created by hand stays."""
    from prefect.client.orchestration import get_client
    from prefect.states import Scheduled

    _, first = _deploy(tmp_path, "old-inbox", "leftover")
    an_hour_ago = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)

    async def schedule_and_add_one_by_hand() -> UUID:
        async with get_client() as client:
            # what the server's scheduler does for an active schedule: runs from an hour ago on
            response = await client._client.post(
                f"/deployments/{first}/schedule", json={"start_time": an_hour_ago.isoformat(), "min_runs": 8}
            )
            response.raise_for_status()
            run = await client.create_flow_run_from_deployment(first, state=Scheduled(scheduled_time=an_hour_ago))
            return run.id

    by_hand = asyncio.run(schedule_and_add_one_by_hand())
    _, second = _deploy(tmp_path, "new-inbox", "leftover")  # the next serve, same name, another folder
    assert second == first
    before = asyncio.run(_scheduled(second))
    now = dt.datetime.now(dt.UTC)
    late = {i for i, (inbox, auto, at) in before.items() if auto and at < now}
    assert late and all(before[i][0].endswith("old-inbox") for i in late)  # Prefect kept them: the defect
    assert asyncio.run(drop_leftover_runs(second)) == len(late)
    after = asyncio.run(_scheduled(second))
    assert not any(auto for _, auto, _ in after.values())
    assert by_hand in after


def test_the_runner_fetches_no_run_before_it_is_due(prefect_harness: str, tmp_path: Path) -> None:
    """Prefect starts a fetched run's process at once, and by default fetches the runs due in the
    next 10 s: after a first Ctrl-C ("no new runs") such a run was already started. serve's runner
    fetches only the runs that are due."""
    from prefect.client.orchestration import get_client
    from prefect.states import Scheduled

    runner, deployment = _deploy(tmp_path, "inbox", "no-prefetch")

    async def fetched() -> tuple[set[UUID], UUID, UUID]:
        async with get_client() as client:
            now = dt.datetime.now(dt.UTC)
            due = await client.create_flow_run_from_deployment(deployment, state=Scheduled(scheduled_time=now))
            soon = await client.create_flow_run_from_deployment(
                deployment, state=Scheduled(scheduled_time=now + dt.timedelta(seconds=8))
            )
        async with runner:
            runs = await runner._scheduled_run_poller._get_scheduled_flow_runs()
        return {r.id for r in runs}, due.id, soon.id

    ids, due, soon = asyncio.run(fetched())
    assert due in ids  # the control: a due run is fetched
    assert soon not in ids
