"""Reading files: bytes -> records and Polars frames. Pure: no database, no Prefect.

PGN (read.pgn) and TRF (read.trf) readers, the sources they read from (folders, archives), text
decoding, dates, name keys and the rate of play. Never raises on a file's content: what cannot
be read becomes an IngestIssue (read.records)."""
