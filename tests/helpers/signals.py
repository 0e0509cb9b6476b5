"""Signalling a command at a point it names: a test waits on the command's own line, never on a clock."""

from __future__ import annotations

import subprocess
from pathlib import Path


def signal_at_line(
    cmd: list[str], text: str, sig: int, cwd: Path, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """Run `cmd`, send it `sig` once a line of its standard error holds `text`, and wait for it.
    Returns (exit status, standard output, standard error: every line). Raises AssertionError when
    the command ends before it says `text`."""
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            if text in line:
                proc.send_signal(sig)
                break
        else:
            raise AssertionError(f"the command ended before it said {text!r}: {''.join(seen)}")
        stdout, rest = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, stdout, "".join(seen) + rest
