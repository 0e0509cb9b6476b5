"""`pipeline` flow, the main job: ingest -> rate -> publish, in one flow run.

The three stages are the bodies of the `ingest_files`, `rate_lists` and `publish` flows, run in
this flow run, not as subflows: the UI shows one `pipeline` run whose task runs are `ingest`, `rate
SYSTEM` and `publish SYSTEM` (each with its state and duration) and whose log holds every stage
line. A subflow costs a flow run of its own (its states through the API's orchestration, a parent
task run, the engine's set-up): three of them were 0.3 to 1 CPU-s of a warm `run` on sample_pgn/
(bench/prefect_ab.py; more on a loaded machine). With a Dask cluster the ingest stays a subflow:
its parse tasks run on that flow's task runner.

It holds the store's write lock for the whole run (elopipe.jobs.store.write_lock, re-entered by each
stage), so a second run on the same DuckDB file waits with a message instead of interleaving
its writes. A stop request (Ctrl-C in `elopipe watch`/`run`) ends it at the next safe point: after
the current batch's transaction, the current system's rating or the current system's publish;
what was committed stays, and the next run rates and publishes the rest.
"""

from __future__ import annotations

import flows._env  # noqa: F401  (Prefect's environment, before Prefect is imported)

# isort: split
import time
from dataclasses import dataclass, field
from pathlib import Path

from prefect import flow

from elopipe.ingest.driver import IngestSummary
from elopipe.jobs.requests import RunRequest
from elopipe.jobs.store import write_lock
from elopipe.runtime.interrupt import stop_requested
from flows._stages import stage_line, stage_start, stage_warning
from flows.ingest_files import ingest_step
from flows.publish import publish
from flows.rate_lists import RateFlowSummary, rate_lists


@dataclass
class PipelineSummary:
    ingest: IngestSummary
    rating: RateFlowSummary | None = None
    published: list[Path] = field(default_factory=list)
    # One line per system whose publish stopped on a file it could not write (its lists stay
    # pending in the output folder's ledger: the next run writes them).
    publish_failures: list[str] = field(default_factory=list)
    out: Path = Path("out")
    # Rating and publishing skipped or cut short: by a stop request (`interrupted`) or a failed ingest.
    stopped: bool = False
    interrupted: bool = False
    # Wall-clock (time.time()) when the flow body began and ended: the rest of a command's time
    # is Prefect's own start-up and shutdown.
    body_started: float = 0.0
    body_ended: float = 0.0

    def where(self) -> dict[str, list[Path]]:
        """Published files grouped by kind: 'lists', 'reports', 'players', 'index'."""
        groups: dict[str, list[Path]] = {}
        for p in self.published:
            try:
                kind = p.relative_to(self.out).parts[0]
            except ValueError:
                kind = "other"
            if kind.endswith(".html"):
                kind = "index"
            groups.setdefault(kind, []).append(p)
        return groups


@flow(name="pipeline", validate_parameters=False)
def pipeline(request: RunRequest) -> PipelineSummary:
    """Ingest `request.paths` into `request.db`, rate `request.systems` through `request.through`,
    publish to `request.out` (the changed lists; with `request.max_lists`, at most that many
    recent ones per system: see elopipe.publish.plan); parse on `request.cluster` when given
    (see `ingest_files`); the run policies as in `rate_lists`.
    Raises StoreBusyError when another process keeps the store's write lock past
    `request.lock_timeout` seconds (None: wait, with one message).
    """
    started = time.time()
    db, systems, out_p = request.db, request.systems, Path(request.out)
    with write_lock(db, timeout=request.lock_timeout, on_wait=lambda msg: stage_warning("pipeline", msg)):
        paths = request.paths
        stage_start("ingest", f"{len(paths)} path{'s' if len(paths) != 1 else ''}")
        ing = ingest_step(request.ingest())
        summary = PipelineSummary(ingest=ing, out=out_p, body_started=started)
        if not (stop_requested() or ing.failure):  # a full disk: rating would need the same disk
            summary.rating = rate_lists.fn(request.rating())
        # after a stop too: the publish flow then records the changed lists for the next run
        if summary.rating is not None:
            runs = {s: r.run_id if r is not None else None for s, r in summary.rating.summaries.items()}
            summary.published, summary.publish_failures = publish.fn(request.publishing(summary.rating.changed, runs))
        summary.interrupted = stop_requested()
        if summary.interrupted or ing.failure:
            summary.stopped = True
            left = (
                "publishing"
                if summary.rating is not None and len(summary.rating.changed) == len(systems)
                else ("rating and publishing")
            )
            stage_line("pipeline", f"stopped: the rest of the {left} is left for the next run")
    summary.body_ended = time.time()
    return summary
