"""`elopipe serve`, held in its start-up window until a signal comes, for the tests of a stop
there (test_flows_serve): `python -m tests.flows.serve_held WHERE MARKER serve ARGS...` writes
MARKER once held, WHERE being

- `registered`: the deployment is registered, the event loop not yet running;
- `starting`: Prefect's runner is starting (the last step of its start, every other part of it
  entered), not yet started.

A test waits for MARKER, not for a time: the window lasts a fraction of a second otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def main() -> None:
    where, marker = sys.argv[1], Path(sys.argv[2])
    import elopipe.cli.commands.serve as serve_command

    real = serve_command.flow_runs_start_deaf_to_ctrl_c

    @contextlib.contextmanager
    def held() -> Iterator[None]:
        if where == "registered":
            marker.write_text(where)
            signal.pause()  # until a signal: its handler raises, as it would here
        else:
            from prefect._internal.observers import FlowRunCancellingObserver

            async def held_start(_self: Any) -> Any:
                marker.write_text(where)
                await asyncio.get_running_loop().create_future()  # until serve cancels its start

            FlowRunCancellingObserver.__aenter__ = held_start  # type: ignore[method-assign]
        with real():
            yield

    serve_command.flow_runs_start_deaf_to_ctrl_c = held
    sys.argv = ["elopipe", *sys.argv[3:]]
    from elopipe.cli.main import main as elopipe_main

    elopipe_main()


if __name__ == "__main__":
    main()
