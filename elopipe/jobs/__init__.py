"""The jobs: what the `elopipe` command and the Prefect flows ask of the library, one function per
job, each taking one typed request (`requests`) and owning its store connection (read-only where
the job only reads: DuckDB lets one process write a file). The CLI parses options into a request,
calls a job and prints what it returns; the flows wrap the same jobs as tasks. Nothing above this
package opens the store.
"""
