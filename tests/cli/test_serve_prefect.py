"""`elopipe serve` against the installed Prefect: the one private attribute it relies on.

A first Ctrl-C must let the runner start no new scheduled run while the run in progress finishes
(elopipe.cli.commands.serve.stop_polling); Prefect has no public call for that, so serve sets the
`stopping` flag of the runner's private `_scheduled_run_poller`. This test fails when a Prefect
release renames or drops it, instead of `serve` silently polling on after Ctrl-C. It enters the
runner on the session's Prefect server (`prefect_harness`); no server of its own.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from elopipe.cli.commands.serve import _register, _runner, stop_polling

pytestmark = pytest.mark.slow


def test_stop_polling_reaches_the_runners_scheduled_run_poller(prefect_harness: str, tmp_path: Path) -> None:
    runner = _runner("private-attr")
    _register(
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

    async def poll_after_stop() -> tuple[bool, object, object]:
        async with runner:  # what Runner.start() enters first: it builds the poller
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
