import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.nats_cluster import free_ports
from tests.telemetry.receiver import Receiver
from tests.telemetry.rotel_collector import (
    READY_LINE,
    START_WAIT,
    STOP_WAIT,
    Collector,
    rotel_agent,
    wait_until_accepting,
)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    running.start()
    yield running
    running.stop()


@pytest.fixture
def rotel(receiver: Receiver, tmp_path: Path) -> Iterator[Collector]:
    """rotel-agent on free loopback ports, forwarding traces and metrics to ``receiver``."""
    binary = rotel_agent()
    http_port, grpc_port = free_ports(2)
    # The caller's ROTEL_* variables would override the flags below.
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("ROTEL_")
    }
    process = subprocess.Popen(
        [
            str(binary),
            "start",
            f"--otlp-http-endpoint=127.0.0.1:{http_port}",
            f"--otlp-grpc-endpoint=127.0.0.1:{grpc_port}",
            "--exporter=otlp",
            "--otlp-exporter-protocol=http",
            f"--otlp-exporter-endpoint={receiver.endpoint}",
            f"--pid-file={tmp_path / 'rotel.pid'}",
            f"--log-file={tmp_path / 'rotel.log'}",
        ],
        env={**environment, "NO_COLOR": "1"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    log: list[str] = []
    started = threading.Event()

    def read_log() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            log.append(line.rstrip())
            if READY_LINE in line:
                started.set()
        started.set()  # the output ended: rotel exited, which the port check reports

    reader = threading.Thread(target=read_log, daemon=True)
    reader.start()
    collector = Collector(f"http://127.0.0.1:{http_port}", process, log)
    try:
        assert started.wait(START_WAIT), f"rotel-agent logged no start line: {log}"
        wait_until_accepting(process, http_port)
        yield collector
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(timeout=STOP_WAIT)
