"""The jobs' requests: what the user asked for, checked, as one frozen dataclass per job.

The CLI builds them from its options; the flows receive them as their one parameter (Prefect
sends parameters as JSON: paths are strings, written by `elopipe.read.sources.path_param`).
Callbacks (progress, waiting) are never part of a request: the jobs take them as arguments.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from elopipe.publish.plan import DEFAULT_MAX_LISTS
from elopipe.rating.systems import DEFAULT_SYSTEMS
from elopipe.store.connect import DEFAULT_DB


@dataclass(frozen=True)
class Cluster:
    """A running Dask cluster that parses the files: its scheduler's `address`, the `stage`
    folder it and this process share (None: a temporary one), its size when known (0: unknown)."""

    address: str
    stage: str | None = None
    workers: int = 0


@dataclass(frozen=True)
class IngestRequest:
    """`elopipe ingest` and the `ingest_files` flow: read `paths` (files, folders, archives; as
    `path_param` wrote them) into the store `db`. `validate_moves`: replay every game; `wait`:
    seconds to wait for another process holding the store (None: for ever); `cluster`: parse on
    that Dask cluster."""

    paths: tuple[str, ...]
    db: str = DEFAULT_DB
    validate_moves: bool = False
    wait: float | None = None
    cluster: Cluster | None = None


@dataclass(frozen=True)
class RateRequest:
    """`elopipe rate` and one system of the `rate_lists` flow: compute `system`'s lists ('fide',
    'fide@scenario', ...) from the games of `db`, up to the list of `through` (None: every list).
    `rules`: a forced rules version (a scenario's); `params`: the engine options given (a
    scenario's definition must agree with them); `defaults`: those that apply unless given
    (`elopipe.rating.run.rate`). `skip_empty`: with no game in the store, rate nothing (the
    outcome says so) rather than run the engine."""

    db: str
    system: str
    through: dt.date | None = None
    rules: str | None = None
    params: Mapping[str, object] = field(default_factory=dict)
    defaults: Mapping[str, object] = field(default_factory=dict)
    skip_empty: bool = False


@dataclass(frozen=True)
class RateListsRequest:
    """The `rate_lists` flow: rate each of `systems` in `db` up to the list of `through` (None:
    all data). `no_moves`, `ro_from`, `unknown_tc`: the run policies (None: their environment
    variable, else the default; `ro_from` only for the FIDE systems)."""

    db: str = DEFAULT_DB
    systems: tuple[str, ...] = DEFAULT_SYSTEMS
    through: dt.date | None = None
    no_moves: str | None = None
    ro_from: str | None = None
    unknown_tc: str | None = None


@dataclass(frozen=True)
class PublishListsRequest:
    """The `publish` flow: publish the changed lists of each of `systems` from `db` into `out`
    (`changed`: per system, from the rating; None: each system's latest list), at most
    `max_lists` recent ones per system (None: no limit); `rating_runs`: the rating run that
    produced each system's `changed` (`elopipe.publish.plan.publish_changed`)."""

    db: str = DEFAULT_DB
    systems: tuple[str, ...] = ("fide",)
    out: str = "out"
    changed: Mapping[str, list[dt.date]] | None = None
    max_lists: int | None = DEFAULT_MAX_LISTS
    rating_runs: Mapping[str, int | None] | None = None


@dataclass(frozen=True)
class RunRequest:
    """`elopipe run`, `watch` and the `pipeline` flow: ingest `paths` into `db`, rate `systems`
    up to the list of `through`, publish the changed lists into `out` (`max_lists` as in
    `PublishListsRequest`). `lock_timeout`: seconds to wait for another run writing the store
    (None: wait); the other fields as in `IngestRequest` and `RateListsRequest`."""

    paths: tuple[str, ...]
    db: str = DEFAULT_DB
    systems: tuple[str, ...] = DEFAULT_SYSTEMS
    out: str = "out"
    through: dt.date | None = None
    validate_moves: bool = False
    lock_timeout: float | None = None
    max_lists: int | None = DEFAULT_MAX_LISTS
    no_moves: str | None = None
    ro_from: str | None = None
    cluster: Cluster | None = None
    unknown_tc: str | None = None

    def ingest(self) -> IngestRequest:
        """The run's ingest: the store's lock is the run's, so no `wait` of its own."""
        return IngestRequest(self.paths, self.db, self.validate_moves, None, self.cluster)

    def rating(self) -> RateListsRequest:
        return RateListsRequest(self.db, self.systems, self.through, self.no_moves, self.ro_from, self.unknown_tc)

    def publishing(
        self, changed: Mapping[str, list[dt.date]], rating_runs: Mapping[str, int | None]
    ) -> PublishListsRequest:
        return PublishListsRequest(self.db, self.systems, self.out, changed, self.max_lists, rating_runs)


@dataclass(frozen=True)
class PublishRequest:
    """`elopipe publish`: write `system`'s lists from `db` into `out`: those of `dates` (None:
    the latest; `all_lists`: every one) in `formats`, or with `full` as `run` publishes them
    (reports, player pages, index); `wait`: seconds to wait for a process writing the store."""

    db: Path
    system: str = "fide"
    out: Path = Path("out")
    dates: tuple[dt.date, ...] | None = None
    all_lists: bool = False
    formats: tuple[str, ...] = ("csv", "parquet", "txt", "html")
    full: bool = False
    wait: float = 60


@dataclass(frozen=True)
class DiffRequest:
    """`elopipe publish --diff A B`: two lists of `system`, each a list date of `db` or a
    published CSV/Parquet file; the CSV of the differences goes into `out`."""

    db: Path
    system: str
    ref_a: str
    ref_b: str
    out: Path = Path("out")
    wait: float = 60


@dataclass(frozen=True)
class ReportRequest:
    """`elopipe report`: the performance report of `tournament` (an id or a name), or of every
    tournament rated under `system` (`tournament` None), into `out`/reports/`system`."""

    db: Path
    system: str
    tournament: str | None
    out: Path = Path("out")


@dataclass(frozen=True)
class PlayerRequest:
    """`elopipe player`: the history of the player `ref` (an ID, a player id or a name) under
    `system`, against `compare` when given; pages into `out`/players/`system`, charts as `chart`."""

    db: Path
    ref: str
    system: str = "fide"
    compare: str | None = None
    out: Path = Path("out")
    chart: str = "svg"
    all_months: bool = False


@dataclass(frozen=True)
class CompareRequest:
    """`elopipe compare A B`: two sides' lists of `list_date` (None: the latest both have)."""

    db: Path
    side_a: str
    side_b: str
    list_date: dt.date | None = None


@dataclass(frozen=True)
class ExportRequest:
    """`elopipe export`: every table of `db` as Parquet into `folder`."""

    db: Path
    folder: Path


@dataclass(frozen=True)
class ListImportRequest:
    """`elopipe lists import`: the official list `file` of `system` as the list in force on
    `list_date` (None: from the file's name or header)."""

    db: Path
    file: Path
    system: str
    list_date: dt.date | None = None


@dataclass(frozen=True)
class ListCompareRequest:
    """`elopipe lists compare`: the store's computed list of `system` on `list_date` against the
    official list `file`."""

    db: Path
    file: Path
    system: str
    list_date: dt.date


@dataclass(frozen=True)
class MergeRequest:
    """`elopipe players merge`: `merged_id` into `kept_id`, with the officer's `reason` and name."""

    db: Path
    kept_id: int
    merged_id: int
    reason: str
    by: str = "officer"


@dataclass(frozen=True)
class SplitRequest:
    """`elopipe players split`: move the entries of `player_id` written as `name`, or of
    `tournaments`, to a new player."""

    db: Path
    player_id: int
    reason: str
    name: str | None = None
    tournaments: tuple[int, ...] | None = None
    by: str = "officer"


@dataclass(frozen=True)
class SuspectsRequest:
    """`elopipe players suspects`: likely duplicates, and identity links weaker than `min_confidence`."""

    db: Path
    min_confidence: float = 0.6


@dataclass(frozen=True)
class ScenarioRequest:
    """`elopipe scenarios show|drop NAME` (all its systems, or one 'SYSTEM@NAME'); `list`: `name` None."""

    db: Path
    name: str | None = None


@dataclass(frozen=True)
class SqlRequest:
    """`elopipe sql`: one read-only `query` on `db`, stopped after `timeout` seconds (None: no
    limit), after waiting up to `wait` seconds for a process writing the store."""

    db: Path
    query: str
    timeout: float | None = None
    wait: float = 60
