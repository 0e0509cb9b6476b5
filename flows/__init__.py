"""Prefect flows: thin wrappers over elopipe's jobs (`elopipe.jobs`), each taking its request.

- `ingest_files(IngestRequest)`: parse in parallel (tasks, a process pool when it pays), load from
  one writer, one transaction per file.
- `rate_lists(RateListsRequest)`: recompute the rating periods new data touched, and later.
- `publish(PublishListsRequest)`: lists and reports for the lists that changed, and those an
  interrupted publish left unwritten.
- `pipeline(RunRequest)`: the three in a row, holding the store's write lock, in one flow run
  (their bodies, not subflows: see flows.pipeline). The main job (`elopipe run`).
- `drop_folder(inbox, ...)`: one pass over a drop folder (the scheduled deployment).

Each flow module imports `flows._env` first, which sets Prefect's environment before Prefect is
imported (see flows.prefect_env).
"""
