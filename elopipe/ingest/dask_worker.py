"""Preloaded in every worker process of the local Dask cluster (elopipe.ingest.scaleout.local_cluster).

A Ctrl-C in the terminal reaches the whole process group, the local cluster's workers with it:
they would die mid-task, and the writer would wait on their tasks. The writer handles Ctrl-C
(it stops after the batch it is writing, or at once on a second one) and its workers end with it.
"""

from __future__ import annotations

import signal
import threading
from typing import Any


def dask_setup(worker: Any) -> None:
    """Dask's preload hook: ignore SIGINT in this worker process (the main thread only can)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
