"""The drop folder: notice files that have finished arriving, run a batch, file them away.

Plain library, no Prefect: `elopipe watch` runs `loop.watch()` with a batch function that calls
the `pipeline` flow, and the scheduled `drop_folder` flow uses `arrival.collect_arrived()` +
`batch.run_batch_and_file()`. The modules: `arrival` (when a file has arrived), `outcomes` (what
a batch did with each file, and where that sends it), `filing` (moving a file to processed/ or
quarantine/ under a free name), `recheck` (the files filed away, watched for a writer that still
held them; `filed_log` keeps them between runs), `batch` (one batch run, then its files filed),
`loop` (`watch()`: when to look), `lock` (one process at a time takes files from an inbox).
Their log lines are children of the logger `elopipe.ingest.watcher`, which the CLI and the flows
show.

- A file has *arrived* when its size and mtime are the same on two polls in a row at least
  `interval` seconds apart (a copy or download still in progress changes one of them). `watch()`
  looks at once when an entry of the inbox is added, renamed or removed (the folder's own
  modification time, read every `NOTICE_SECONDS`), and again as soon as a file it saw can have
  held still for `interval`: a file that lands is taken about `interval` seconds later, not up
  to twice that. Names ending in `TEMP_SUFFIXES` (`.part`, `.tmp`, `.crdownload`, `.partial`,
  `.download`, `.filepart`, `~`), and dot files, are never taken: browsers, uploaders and
  `rsync` write under those names and rename at the end. Only regular files directly in the
  inbox are looked at: a symbolic link or a FIFO is left where it is, and named once in a warning.
- A copy can stall for longer than two polls. A file that looks cut short (`looks_complete`: a
  PGN whose last game has no result marker, a TRF whose last line has no line break, a zip
  whose end record does not end the file or with data before it, `elopipe.read.zips`) is taken
  only once it has stayed unchanged for `incomplete_wait` seconds (default 60, counted from its
  mtime), then with a warning.
- A file that changed while its batch read it (size or mtime differ from when it was taken)
  is not moved: it stays in the inbox and is taken again once it holds still, and loaded as a
  correction of the version read before (same path: see elopipe.ingest.loader).
- After a batch each file moves to `INBOX/processed/` (loaded, partial, or already in the store)
  or to `INBOX/quarantine/` with `<name>.reason.txt` beside it (rejected). A file the batch did
  not get to (stop requested) stays where it is for the next run.
- A writer may still hold a file when it is moved (a move keeps the open file): `watch()` keeps
  an eye on the files it filed away for `recheck_seconds` (default one hour), and moves one that
  changes back into the inbox with a warning, to be loaded again as a correction. It remembers
  them in `INBOX/.elopipe/filed-away.jsonl` (`filed_log`), elopipe's own file: a restarted watch
  goes on watching what an earlier one filed, and does with a changed file what a watch that kept
  running does. The one-shot `drop_folder` flow reads and adds to the same file: each run first
  moves back what changed since an earlier run filed it.
- One process at a time takes files from an inbox: `elopipe watch` holds `INBOX/.elopipe/watch.lock`
  (`lock`) for its life, and each `drop_folder` run for its own; a second is refused, naming the
  first's pid.
- Restarting never loads a file twice: the ingest ledger (sha256 in `source_files`) skips it.
"""
