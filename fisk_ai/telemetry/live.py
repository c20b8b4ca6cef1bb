"""The live provider on the OpenTelemetry SDK, imported only when export is on.

It registers nothing globally: the tracer and meter come from providers this object owns, and
the W3C propagator is an instance, so an embedder's own OpenTelemetry setup is left alone.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import (
    ALWAYS_OFF,
    ALWAYS_ON,
    ParentBased,
    TraceIdRatioBased,
)
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.semconv._incubating.attributes import mcp_attributes as mcp
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics
from opentelemetry.semconv.attributes import error_attributes, service_attributes
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from fisk_ai.telemetry.facade import (
    DEFAULT_SERVICE_NAME,
    GENERIC_ERROR,
    Delivery,
    ErrorClass,
    Span,
    Telemetry,
    TelemetrySettings,
    activated,
    recording_turn,
)

__all__ = ["LiveTelemetry", "current_traceparent"]

EXPORT_TIMEOUT_SECONDS = 3.0
FLUSH_TIMEOUT_MILLIS = 5000
METRIC_INTERVAL_MILLIS = 30_000
# Explicit buckets: the SDK defaults are shaped for milliseconds and would put every
# seconds-valued and token-valued observation into the first two buckets.
SECONDS_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 60, 120, 300)
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576)
# A journal append is an fsync or a JetStream round trip: sub-millisecond to a few seconds.
APPEND_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 5)
KNOWLEDGE_SOURCE = "knowledge"

Attribute = str | int | float | bool | tuple[str, ...]


# An instance, never registered globally; the context it reads is OpenTelemetry's own, which
# belongs to the running task whichever provider started its span.
_PROPAGATOR = TraceContextTextMapPropagator()


def current_traceparent() -> str:
    """The ``traceparent`` of the current span; empty when there is none."""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier.get("traceparent", "")


class _CountingSpanExporter(SpanExporter):
    """Counts spans handed to the collector against spans it accepted, and the first error:
    OTLP is fire and forget, so a run whose every span was refused would otherwise look fine."""

    def __init__(self, inner: SpanExporter) -> None:
        self._inner = inner
        self.attempted = 0
        self.delivered = 0
        self.first_error = ""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.attempted += len(spans)
        try:
            result = self._inner.export(spans)
        except Exception as exc:
            self.first_error = self.first_error or type(exc).__name__
            return SpanExportResult.FAILURE
        if result is SpanExportResult.SUCCESS:
            self.delivered += len(spans)
        else:
            self.first_error = self.first_error or "the collector did not accept the export"
        return result

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._inner.force_flush(timeout_millis)


class _QuietMetricExporter(OTLPMetricExporter):
    """Drops an empty collection before the wire: a collector answers 400 to one."""

    def export(
        self, metrics_data: MetricsData, timeout_millis: float | None = None, **kwargs: Any
    ) -> MetricExportResult:
        if not any(
            scope.metrics
            for resource in metrics_data.resource_metrics
            for scope in resource.scope_metrics
        ):
            return MetricExportResult.SUCCESS
        return super().export(metrics_data, timeout_millis, **kwargs)


class _LiveSpan:
    def __init__(self, span: trace.Span, owner: LiveTelemetry) -> None:
        self._span = span
        self._owner = owner
        self.input_tokens = 0
        self.output_tokens = 0
        self.error: ErrorClass | None = None

    @property
    def recording(self) -> bool:
        return self._span.is_recording()

    @property
    def trace_id(self) -> str:
        return f"{self._span.get_span_context().trace_id:032x}"

    def set(self, key: str, value: Attribute) -> None:
        self._span.set_attribute(key, value)

    def usage(self, input_tokens: int, output_tokens: int) -> None:
        self.input_tokens, self.output_tokens = input_tokens, output_tokens
        self._span.set_attribute(gen_ai.GEN_AI_USAGE_INPUT_TOKENS, input_tokens)
        self._span.set_attribute(gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS, output_tokens)

    def finish_reasons(self, *reasons: str) -> None:
        self._span.set_attribute(gen_ai.GEN_AI_RESPONSE_FINISH_REASONS, reasons)

    def content(self, key: str, build: Callable[[], str]) -> None:
        if not self._owner.content_exported:
            return
        value = build()
        limit = self._owner.capture_max_bytes
        if limit and len(value.encode("utf-8")) > limit:
            value = value.encode("utf-8")[:limit].decode("utf-8", "ignore")
        self._span.set_attribute(key, value)

    def fail(self, error: ErrorClass) -> None:
        self.error = error
        self._span.set_attribute(error_attributes.ERROR_TYPE, error.value)
        self._span.set_status(Status(StatusCode.ERROR, error.value))


class LiveTelemetry(Telemetry):
    enabled = True

    def __init__(self, settings: TelemetrySettings, endpoint: str) -> None:
        # The exporter logs every failed attempt; the counting exporter reports them instead.
        logging.getLogger("opentelemetry.exporter.otlp.proto.http").setLevel(logging.CRITICAL)
        self.content_exported = settings.capture
        self.capture_max_bytes = settings.capture_max_bytes
        self.full_messages = settings.capture_full_messages
        resource = Resource.create(
            {service_attributes.SERVICE_NAME: settings.service_name or DEFAULT_SERVICE_NAME}
        )
        ratio = 1.0 if settings.sample_ratio is None else settings.sample_ratio
        # Follow a remote parent that says sampled, so a delegation stays one trace; never one
        # that says not sampled, since any peer could otherwise switch this process's
        # recording off. The trace id is adopted either way.
        sampler = ParentBased(
            root=TraceIdRatioBased(ratio),
            remote_parent_sampled=ALWAYS_ON,
            remote_parent_not_sampled=TraceIdRatioBased(ratio),
            local_parent_sampled=ALWAYS_ON,
            local_parent_not_sampled=ALWAYS_OFF,
        )
        self._spans = _CountingSpanExporter(
            OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces", timeout=EXPORT_TIMEOUT_SECONDS)
        )
        self._tracer_provider = TracerProvider(resource=resource, sampler=sampler)
        self._tracer_provider.add_span_processor(BatchSpanProcessor(self._spans))
        self._tracer = self._tracer_provider.get_tracer("fisk_ai")
        self._propagator = _PROPAGATOR
        self._meter_provider: MeterProvider | None = None
        if not settings.no_metrics:
            reader = PeriodicExportingMetricReader(
                _QuietMetricExporter(
                    endpoint=f"{endpoint}/v1/metrics", timeout=EXPORT_TIMEOUT_SECONDS
                ),
                export_interval_millis=METRIC_INTERVAL_MILLIS,
            )
            self._meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
            meter = self._meter_provider.get_meter("fisk_ai")
            self._token_usage = meter.create_histogram(
                gen_ai_metrics.GEN_AI_CLIENT_TOKEN_USAGE,
                unit="{token}",
                description="Tokens used per model call",
                explicit_bucket_boundaries_advisory=TOKEN_BUCKETS,
            )
            self._operation_duration = meter.create_histogram(
                gen_ai_metrics.GEN_AI_CLIENT_OPERATION_DURATION,
                unit="s",
                description="Duration of model calls",
                explicit_bucket_boundaries_advisory=SECONDS_BUCKETS,
            )
            self._tool_calls = meter.create_counter(
                "fisk.tool.calls", unit="{call}", description="Tool calls handled"
            )
            self._tool_duration = meter.create_histogram(
                "fisk.tool.duration",
                unit="s",
                description="Duration of tool calls",
                explicit_bucket_boundaries_advisory=SECONDS_BUCKETS,
            )
            self._degraded_searches = meter.create_counter(
                "fisk.knowledge.degraded_searches",
                unit="{search}",
                description="Knowledge searches answered by words alone: embeddings unreachable",
            )
            self._append_duration = meter.create_histogram(
                "fisk.session.append.duration",
                unit="s",
                description="Duration of session journal appends, measured by the caller",
                explicit_bucket_boundaries_advisory=APPEND_BUCKETS,
            )

    @contextmanager
    def _span(
        self, name: str, kind: SpanKind, attributes: dict[str, Attribute], context: Any = None
    ) -> Iterator[_LiveSpan]:
        with self._tracer.start_as_current_span(
            name,
            context=context,
            kind=kind,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            live = _LiveSpan(span, self)
            try:
                with activated(self):
                    yield live
            except BaseException:
                if live.error is None:
                    live.fail(GENERIC_ERROR)
                raise

    @contextmanager
    def _run(self, agent: str, traceparent: str) -> Iterator[Span]:
        context = self._propagator.extract({"traceparent": traceparent}) if traceparent else None
        with self._span(
            f"invoke_agent {agent}" if agent else "invoke_agent",
            SpanKind.SERVER if traceparent else SpanKind.INTERNAL,
            {
                gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.INVOKE_AGENT.value,
                gen_ai.GEN_AI_AGENT_NAME: agent,
            },
            context,
        ) as span:
            record = recording_turn()
            if record is not None and span.recording:
                record.trace_id = span.trace_id
                record.content_exported = self.content_exported
                record.traceparent = self.traceparent()
            yield span

    def run(self, agent: str, *, traceparent: str = "") -> AbstractContextManager[Span]:
        return self._run(agent, traceparent)

    @contextmanager
    def _measured_model_call(self, provider: str, model: str) -> Iterator[Span]:
        attributes: dict[str, Attribute] = {
            gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.CHAT.value,
            gen_ai.GEN_AI_PROVIDER_NAME: provider,
            gen_ai.GEN_AI_REQUEST_MODEL: model,
        }
        began = time.perf_counter()
        span: _LiveSpan | None = None
        try:
            with self._span(f"chat {model}", SpanKind.CLIENT, attributes) as span:
                yield span
        finally:
            if self._meter_provider is not None and span is not None:
                measured = dict(attributes)
                if span.error is not None:
                    measured[error_attributes.ERROR_TYPE] = span.error.value
                self._operation_duration.record(time.perf_counter() - began, measured)
                for kind, count in (("input", span.input_tokens), ("output", span.output_tokens)):
                    if count:
                        self._token_usage.record(
                            count, {**attributes, gen_ai.GEN_AI_TOKEN_TYPE: kind}
                        )

    def model_call(self, provider: str, model: str) -> AbstractContextManager[Span]:
        return self._measured_model_call(provider, model)

    @contextmanager
    def _measured_tool_call(self, name: str) -> Iterator[Span]:
        began = time.perf_counter()
        span: _LiveSpan | None = None
        attributes: dict[str, Attribute] = {
            gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.EXECUTE_TOOL.value,
            gen_ai.GEN_AI_TOOL_NAME: name,
        }
        try:
            with self._span(f"execute_tool {name}", SpanKind.INTERNAL, attributes) as span:
                yield span
        finally:
            # The requested tool name is on the span only, never on an instrument.
            if self._meter_provider is not None and span is not None:
                measured: dict[str, Attribute] = {}
                if span.error is not None:
                    measured[error_attributes.ERROR_TYPE] = span.error.value
                self._tool_calls.add(1, measured)
                self._tool_duration.record(time.perf_counter() - began, measured)

    def tool_call(self, name: str) -> AbstractContextManager[Span]:
        return self._measured_tool_call(name)

    def mcp_tool_call(
        self, tool: str, *, server: str = "", served: bool = False, traceparent: str = ""
    ) -> AbstractContextManager[Span]:
        method = mcp.McpMethodNameValues.TOOLS_CALL.value
        attributes: dict[str, Attribute] = {
            mcp.MCP_METHOD_NAME: method,
            gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.EXECUTE_TOOL.value,
            gen_ai.GEN_AI_TOOL_NAME: tool,
        }
        if server:
            attributes["fisk.mcp.server"] = server
        kind = SpanKind.SERVER if served else SpanKind.CLIENT
        context = self._propagator.extract({"traceparent": traceparent}) if traceparent else None
        return self._span(f"{method} {tool}", kind, attributes, context)

    def remote_agent(self, peer: str, request: str) -> AbstractContextManager[Span]:
        return self._span(
            f"invoke_agent {peer}",
            SpanKind.CLIENT,
            {
                gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.INVOKE_AGENT.value,
                gen_ai.GEN_AI_AGENT_NAME: peer,
                "fisk.a2a.request": request,
            },
        )

    def remote_tool(self, peer: str, tool: str) -> AbstractContextManager[Span]:
        return self._span(
            f"execute_tool {tool}",
            SpanKind.CLIENT,
            {
                gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.EXECUTE_TOOL.value,
                gen_ai.GEN_AI_TOOL_NAME: tool,
                "fisk.a2a.peer": peer,
            },
        )

    def knowledge_search(self, top_k: int) -> AbstractContextManager[Span]:
        return self._span(
            f"retrieval {KNOWLEDGE_SOURCE}",
            SpanKind.INTERNAL,
            {
                gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.RETRIEVAL.value,
                gen_ai.GEN_AI_DATA_SOURCE_ID: KNOWLEDGE_SOURCE,
                gen_ai.GEN_AI_REQUEST_TOP_K: top_k,
            },
        )

    def knowledge_enumerate(self) -> AbstractContextManager[Span]:
        # Enumeration is a complete match, not a ranked retrieval: no GenAI operation name.
        return self._span(
            f"enumerate {KNOWLEDGE_SOURCE}",
            SpanKind.INTERNAL,
            {gen_ai.GEN_AI_DATA_SOURCE_ID: KNOWLEDGE_SOURCE},
        )

    def embedding_batch(self, model: str, inputs: int) -> AbstractContextManager[Span]:
        return self._span(
            f"embeddings {model}",
            SpanKind.CLIENT,
            {
                gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.EMBEDDINGS.value,
                gen_ai.GEN_AI_REQUEST_MODEL: model,
                "fisk.embeddings.inputs": inputs,
            },
        )

    def degraded_search(self) -> None:
        if self._meter_provider is not None:
            self._degraded_searches.add(1)

    def session_append(self, seconds: float, backend: str) -> None:
        if self._meter_provider is not None:
            self._append_duration.record(seconds, {"fisk.session.backend": backend})

    def traceparent(self) -> str:
        carrier: dict[str, str] = {}
        self._propagator.inject(carrier)
        return carrier.get("traceparent", "")

    def trace_id(self) -> str:
        context = trace.get_current_span().get_span_context()
        return f"{context.trace_id:032x}" if context.is_valid else ""

    def shutdown(self) -> Delivery:
        self._tracer_provider.force_flush(FLUSH_TIMEOUT_MILLIS)
        self._tracer_provider.shutdown()
        if self._meter_provider is not None:
            self._meter_provider.shutdown(timeout_millis=FLUSH_TIMEOUT_MILLIS)
        return Delivery(self._spans.attempted, self._spans.delivered, self._spans.first_error)
