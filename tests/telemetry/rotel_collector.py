"""A real OpenTelemetry collector, rotel, run from its installed package on loopback ports."""

from __future__ import annotations

import errno
import platform
import socket
import subprocess
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import pytest

from tests.patience import DEADLINE

READY_LINE = "Starting Rotel."

START_WAIT = DEADLINE
"""Seconds rotel may take to log its start line and accept on its HTTP port (about 20 ms)."""

STOP_WAIT = DEADLINE
"""Seconds rotel may take to forward what it holds and exit after SIGTERM."""

PORT_RETRY = 0.01
"""Seconds to wait on rotel's exit between two connection attempts while its port is not yet
accepting."""


def rotel_agent() -> Path:
    """The `rotel-agent` binary of the installed rotel package, or a skip naming why it cannot
    run on this machine."""
    spec = find_spec("rotel")
    if spec is None or spec.origin is None:
        pytest.skip(f"rotel is not installed: it has no wheel for {platform.machine()}")
    binary = Path(spec.origin).parent / "rotel-agent"
    if not binary.is_file():
        pytest.skip(f"rotel ships no rotel-agent binary for {platform.machine()}")
    try:
        subprocess.run(
            [str(binary), "--version"], capture_output=True, timeout=START_WAIT, check=False
        )
    except OSError as error:
        if error.errno == errno.ENOEXEC:
            pytest.skip(f"rotel-agent is not built for this machine's {platform.machine()}")
        raise
    return binary


@dataclass
class Collector:
    endpoint: str
    process: subprocess.Popen[str]
    log: list[str]

    def stop(self) -> None:
        """SIGTERM: rotel forwards every batch it still holds before it exits."""
        self.process.terminate()
        self.process.wait(timeout=STOP_WAIT)


def wait_until_accepting(process: subprocess.Popen[str], port: int) -> None:
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=START_WAIT).close()
            return
        except ConnectionRefusedError:
            try:
                process.wait(timeout=PORT_RETRY)
            except subprocess.TimeoutExpired:
                continue
            raise AssertionError(f"rotel-agent exited with {process.returncode}") from None
