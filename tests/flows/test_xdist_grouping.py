"""The test command's two pytest workers share ONE Prefect server: every test that needs it is
grouped on one worker (tests/conftest.py), which pytest-xdist does by suffixing the test's id."""

from __future__ import annotations

import pytest


def test_a_test_that_needs_the_prefect_server_is_in_the_prefect_group(
    request: pytest.FixtureRequest, prefect_harness: str
) -> None:
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run by scripts/test.sh's workers (-n 2 --dist loadgroup)")
    assert request.node.nodeid.endswith("@prefect"), request.node.nodeid
