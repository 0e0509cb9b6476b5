"""The locks in `requirements/` (made by `scripts/lock`) cover what `pyproject.toml` asks for.

The README's commands and CI install only what a lock pins (`--no-deps` for elopipe itself), so a
dependency added to `pyproject.toml` without `scripts/lock` would be missing, or a range narrowed
without it would be ignored: these tests fail first, naming the package.
"""

from __future__ import annotations

import re
import tomllib
from collections import defaultdict

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.helpers.paths import REPO

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def _pins(lock: str) -> dict[str, set[Version]]:
    """Every pinned version of each package in `requirements/<lock>` (a universal lock may pin two
    versions of one package under different markers), each with its hashes."""
    pins: dict[str, set[Version]] = defaultdict(set)
    entries = (REPO / "requirements" / lock).read_text(encoding="utf-8").split("\n")
    for i, line in enumerate(entries):
        m = PIN.match(line)
        if m:
            assert entries[i + 1].strip().startswith("--hash=sha256:"), f"{lock}: {m.group(1)} has no hash"
            pins[canonicalize_name(m.group(1))].add(Version(m.group(2)))
    return pins


def _wanted(extras: tuple[str, ...]) -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    reqs = project["project"]["dependencies"] + project["build-system"]["requires"]
    for extra in extras:
        reqs += project["project"]["optional-dependencies"][extra]
    return [Requirement(r) for r in reqs]


@pytest.mark.parametrize(("lock", "extras"), [("run.txt", ()), ("dev.txt", ("dev", "dask"))])
def test_the_lock_pins_every_requirement_within_its_range(lock: str, extras: tuple[str, ...]) -> None:
    pins = _pins(lock)
    for req in _wanted(extras):
        got = pins.get(canonicalize_name(req.name))
        assert got, f"requirements/{lock} lacks {req.name}: run scripts/lock"
        outside = sorted(str(v) for v in got if not req.specifier.contains(v, prereleases=True))
        assert not outside, f"requirements/{lock} pins {req.name} {outside}, outside {req}: run scripts/lock"


def test_the_run_lock_takes_the_dev_locks_versions() -> None:
    dev = _pins("dev.txt")
    other = {name: sorted(map(str, v)) for name, v in _pins("run.txt").items() if not v <= dev.get(name, set())}
    assert other == {}, f"requirements/run.txt pins versions dev.txt does not: {other}; run scripts/lock"


def test_the_installer_lock_is_the_lock_tools_version() -> None:
    """`scripts/test.sh` installs with the uv of `requirements/tools.txt`: the version
    `scripts/lock` compiles with (`UV_VERSION`), pinned with its hashes."""
    (version,) = re.findall(r"^UV_VERSION=(\S+)$", (REPO / "scripts" / "lock").read_text(encoding="utf-8"), re.M)
    assert _pins("tools.txt") == {"uv": {Version(version)}}
    assert f"uv=={version}" in (REPO / "requirements" / "tools.in").read_text(encoding="utf-8")
