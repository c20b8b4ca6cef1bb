"""What `fisk run` exports is accepted by a real collector: rotel's `rotel-agent` (shipped inside
the rotel wheel) receives it over OTLP/HTTP and forwards it, re-encoded, over OTLP/HTTP to the
in-process receiver, which decodes it with the OpenTelemetry proto classes."""

from __future__ import annotations

import errno
import os
import platform
import socket
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import pytest

from tests.fakes.nats_cluster import free_ports
from tests.patience import DEADLINE
from tests.telemetry.receiver import Receiver, attributes
from tests.telemetry.test_operator_surfaces import cowsay_config, joke

READY_LINE = "Starting Rotel."
START_WAIT = DEADLINE
"""Seconds rotel may take to log its start line and accept on its HTTP port (about 20 ms)."""
STOP_WAIT = DEADLINE
"""Seconds rotel may take to forward what it holds and exit after SIGTERM."""
PORT_RETRY = 0.01
"""Seconds to wait on rotel's exit between two connection attempts while its port is not yet
accepting."""

pytestmark = pytest.mark.e2e


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


def _wait_until_accepting(process: subprocess.Popen[str], port: int) -> None:
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
        _wait_until_accepting(process, http_port)
        yield collector
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(timeout=STOP_WAIT)


def test_a_runs_spans_and_token_usage_reach_the_receiver_through_rotel(
    rotel: Collector, receiver: Receiver, tmp_path: Path
) -> None:
    config = cowsay_config(
        tmp_path, f"\ntelemetry:\n  enabled: true\n  endpoint: {rotel.endpoint}\n"
    )
    ran = joke(tmp_path, config)
    assert ran.returncode == 0, ran.stderr
    rotel.stop()
    assert rotel.process.returncode == 0, rotel.log

    exported = receiver.spans()
    assert f"telemetry: {len(exported)} of {len(exported)} spans delivered" in (
        ran.stderr.splitlines()
    )
    # Startup is the process's own trace; the turn is one trace of its own.
    (startup,) = [span for span in exported if span.name == "startup cowsay"]
    spans = [span for span in exported if span is not startup]
    assert len({span.trace_id for span in spans}) == 1
    (root,) = [span for span in spans if span.name == "invoke_agent cowsay"]
    assert attributes(root)["gen_ai.operation.name"] == "invoke_agent"
    chats = [span for span in spans if span.name == "chat claude-haiku-4-5"]
    assert chats
    for chat in chats:
        described = attributes(chat)
        assert described["gen_ai.provider.name"] == "anthropic"
        assert described["gen_ai.request.model"] == "claude-haiku-4-5"
        assert int(described["gen_ai.usage.input_tokens"]) > 0
        assert chat.parent_span_id == root.span_id
    assert attributes(chats[0])["gen_ai.response.finish_reasons"] == ("tool_use",)
    tools = [span for span in spans if span.name.startswith("execute_tool ")]
    assert {attributes(tool)["gen_ai.tool.name"] for tool in tools} >= {"say"}
    assert all(tool.parent_span_id == root.span_id for tool in tools)

    tokens = receiver.metric_points("gen_ai.client.token.usage")
    token_types = {
        attribute.value.string_value
        for point in tokens
        for attribute in point.attributes
        if attribute.key == "gen_ai.token.type"
    }
    assert token_types == {"input", "output"}
    assert sum(point.sum for point in tokens) == sum(
        int(attributes(chat)["gen_ai.usage.input_tokens"])
        + int(attributes(chat)["gen_ai.usage.output_tokens"])
        for chat in chats
    )
