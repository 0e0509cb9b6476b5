"""PGN: the reader (tags, movetext, results), its column-wise analysis of large files, and
streaming of files too large to hold."""
