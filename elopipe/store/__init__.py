"""The DuckDB store: connections (one writer, read-only readers), the schema in one place, the
SQL views, and the rows one parsed file gives each table."""
