"""Imported first by every flow module: set Prefect's environment before Prefect is imported,
then make Prefect's logging set-up (when the flow module imports `prefect.main`) cheaper
(flows.prefect_logging).

Not left to `flows/__init__.py` alone: an editable install can expose `flows` as a namespace
package (outside the repository folder), and then `__init__.py` never runs.
"""

from flows.prefect_env import configure

configure()

# isort: split
from flows.prefect_logging import fill_placeholders_lazily  # noqa: E402  (imports Prefect: after configure())

fill_placeholders_lazily()
