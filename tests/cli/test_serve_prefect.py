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
from pathlib import Path

import pytest

from elopipe.cli.commands.serve import _register, _runner, stop_polling

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
