"""Content capture changes the export's shape (architecture, "Content capture"): trace exports
are gzip-compressed and carry at most a batch derived from ``telemetry.capture.max_bytes``;
with capture off neither applies. A real collector, rotel, takes the compressed export and
forwards the captured content intact."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from fisk_ai.telemetry import Telemetry, TelemetrySettings, start
from tests.telemetry.receiver import Receiver, attributes
from tests.telemetry.rotel_collector import Collector

SPANS = 40
LARGEST_LIMIT = 65536
"""The per-attribute limit at which a 2 MiB request holds 16 spans of two attributes each."""
BATCH_AT_LARGEST_LIMIT = 16


@dataclass(frozen=True)
class TraceExport:
    """One trace export request as it arrived: its Content-Encoding and how many spans it held."""

    encoding: str
    spans: int


class ExportRecorder:
    """An OTLP/HTTP endpoint on loopback that keeps how each trace export was sent."""

    def __init__(self) -> None:
        self.exports: list[TraceExport] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                encoding = self.headers.get("Content-Encoding", "")
                if encoding == "gzip":
                    body = gzip.decompress(body)
                if self.path == "/v1/traces":
                    request = ExportTraceServiceRequest()
                    request.ParseFromString(body)
                    held = sum(
                        len(scope.spans)
                        for resource in request.resource_spans
                        for scope in resource.scope_spans
                    )
                    recorder.exports.append(TraceExport(encoding, held))
                payload = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def recorder() -> Iterator[ExportRecorder]:
    running = ExportRecorder()
    running.start()
    yield running
    running.stop()


def export_tool_spans(telemetry: Telemetry) -> None:
    """Record ``SPANS`` tool spans, each carrying captured arguments, and flush them."""
    for number in range(SPANS):
        arguments = f'{{"n": {number}}}'
        with telemetry.tool_call("status", kind="application") as span:
            span.content("gen_ai.tool.call.arguments", partial(str, arguments))
    telemetry.shutdown()


def test_a_capturing_export_is_gzip_in_batches_sized_from_the_limit(
    recorder: ExportRecorder,
) -> None:
    settings = TelemetrySettings(
        enabled=True,
        endpoint=recorder.endpoint,
        no_metrics=True,
        capture=True,
        capture_max_bytes=LARGEST_LIMIT,
    )

    export_tool_spans(start(settings))

    assert sum(export.spans for export in recorder.exports) == SPANS
    assert {export.encoding for export in recorder.exports} == {"gzip"}
    assert max(export.spans for export in recorder.exports) <= BATCH_AT_LARGEST_LIMIT


def test_an_export_without_capture_is_not_compressed(recorder: ExportRecorder) -> None:
    settings = TelemetrySettings(enabled=True, endpoint=recorder.endpoint, no_metrics=True)

    export_tool_spans(start(settings))

    assert sum(export.spans for export in recorder.exports) == SPANS
    assert {export.encoding for export in recorder.exports} == {""}


@pytest.mark.e2e
def test_a_real_collector_takes_the_compressed_export_and_keeps_the_content(
    rotel: Collector,
    receiver: Receiver,
) -> None:
    settings = TelemetrySettings(
        enabled=True,
        endpoint=rotel.endpoint,
        no_metrics=True,
        capture=True,
        capture_max_bytes=LARGEST_LIMIT,
    )

    export_tool_spans(start(settings))
    rotel.stop()

    arguments = sorted(
        str(attributes(span)["gen_ai.tool.call.arguments"]) for span in receiver.spans()
    )
    assert arguments == sorted(f'{{"n": {number}}}' for number in range(SPANS))
