"""Imported first by every flow module: set Prefect's environment before Prefect is imported.

Not left to `flows/__init__.py` alone: an editable install can expose `flows` as a namespace
package (outside the repository folder), and then `__init__.py` never runs.
"""

from flows.prefect_env import configure

configure()
