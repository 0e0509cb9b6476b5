"""The one ingest driver: sources -> parse (a process pool, or Dask units) -> load batches into
the store, then identity. Also the drop-folder watcher."""
