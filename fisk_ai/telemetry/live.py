"""The live provider on the OpenTelemetry SDK, imported only when export is on.

It registers nothing globally: the tracer and meter come from providers this object owns, and
the W3C propagator is an instance, so an embedder's own OpenTelemetry setup is left alone.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http import Compression
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
    ServedCall,
    ServedToolOutcome,
    Span,
    Telemetry,
    TelemetrySettings,
    ToolRefusal,
    activated,
    recording_turn,
)
from fisk_ai.telemetry.genai import (
    Document,
    messages_document,
    system_instructions_document,
    value_document,
)

__all__ = ["LiveTelemetry", "current_traceparent"]

EXPORT_TIMEOUT_SECONDS = 3.0
FLUSH_TIMEOUT_MILLIS = 5000
METRIC_INTERVAL_MILLIS = 30_000
# Explicit buckets, the Go fisk-ai's, so one dashboard's percentiles read both fleets: the SDK
# defaults are shaped for milliseconds and would put every seconds-valued and token-valued
# observation into the first two buckets.
DURATION_BUCKETS: tuple[float, ...] = (
    *(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64),
    *(1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92),
)
# A turn is many model calls and, in a conversation, operator think time between them.
AGENT_DURATION_BUCKETS: tuple[float, ...] = (
    *(0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4),
    *(12.8, 25.6, 51.2, 102.4, 204.8, 409.6),
)
TOKEN_BUCKETS: tuple[int, ...] = tuple(4**power for power in range(14))
CALL_COUNT_BUCKETS: tuple[int, ...] = tuple(2**power for power in range(8))
# A journal append is a local write or a JetStream round trip: microseconds to seconds.
APPEND_BUCKETS: tuple[float, ...] = (
    *(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01),
    *(0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)
KNOWLEDGE_SOURCE = "knowledge"
# With capture on a span carries up to two content attributes (a chat span's input and output,
# a tool span's arguments and result), so an export request of N spans is up to 2 x N x
# max_bytes. The batch is sized to keep a request near 2 MiB, under a collector's usual limit:
# a refused request loses its whole batch, not the one span that made it too big.
CAPTURE_REQUEST_BYTES = 2 * 1024 * 1024
CONTENT_ATTRIBUTES_PER_SPAN = 2
MIN_CAPTURE_BATCH = 16
MAX_EXPORT_BATCH = 512

# In the GenAI metrics registry but newer than the pinned conventions package.
INVOKE_AGENT_DURATION = "gen_ai.invoke_agent.duration"
INVOKE_AGENT_INFERENCE_CALLS = "gen_ai.invoke_agent.inference_calls"
INVOKE_AGENT_TOOL_CALLS = "gen_ai.invoke_agent.tool_calls"
EXECUTE_TOOL_DURATION = "gen_ai.execute_tool.duration"

RUN_TERMINAL_REASON = "fisk.run.terminal_reason"
RUN_INTERACTIVE = "fisk.run.interactive"
RUN_RESUMED = "fisk.run.resumed"
RUN_CRASHED = "fisk.run.crashed"
RUN_TOOL_CALLS = "fisk.run.tool_calls"
RUN_REMOTE_TOOL_CALLS = "fisk.run.remote_tool_calls"
UNCACHED_INPUT_TOKENS = "fisk.llm.uncached_input_tokens"
LLM_ITERATION = "fisk.llm.iteration"
LLM_MESSAGES = "fisk.llm.messages"
LLM_TOOLS = "fisk.llm.tools"
TOOL_KIND = "fisk.tool.kind"
TOOL_OUTCOME = "fisk.tool.outcome"
TOOL_ARG_KEYS = "fisk.tool.arg_keys"
TOOL_REQUESTED_NAME = "fisk.tool.requested_name"
TOOL_REMOTE = "fisk.tool.remote"
TOOL_REMOTE_AGENT = "fisk.tool.remote_agent"
TOOL_CONFIRM_GATED = "fisk.tool.confirm_gated"
TOOL_CONFIRM_WAIT_MS = "fisk.tool.confirm_wait_ms"
TOOL_REWRITTEN = "fisk.tool.rewritten"
TOOL_RESUMED = "fisk.tool.resumed"
TOOL_EXIT_CODE = "fisk.tool.exit_code"
SERVED_REQUEST = "fisk.served.request"
SERVED_CALLER = "fisk.served.caller"
SERVED_CALLER_VERIFIED = "fisk.served.caller_verified"
SERVED_SENDER = "fisk.served.sender"
MEMORY_BACKEND = "fisk.memory.backend"
MEMORY_LOCATION = "fisk.memory.location"
CONTENT_FROM_INDEX = "fisk.content.from_index"
CONTENT_TRUNCATED = "fisk.content.truncated"
CONTENT_DROPPED_MESSAGES = "fisk.content.dropped_messages"
# The conventions define gen_ai.tool.type without constants for its values.
TOOL_TYPE_FUNCTION = "function"
TOOL_TYPE_DATASTORE = "datastore"
KNOWLEDGE_TOOL_PREFIX = "knowledge_"
MEMORY_TOOL_PREFIX = "memory_"
KIND_UNKNOWN = "unknown"
KIND_REMOTE = "remote"
KIND_BUILTIN = "builtin"
# A constant, so a model inventing tool names cannot mint span names.
UNKNOWN_TOOL_SPAN = "execute_tool unknown_tool"
TERMINAL_ERROR = "error"
STARTUP_FAILED = ErrorClass("setup_failed")

OUTCOME_EXECUTED = "executed"
OUTCOME_ERROR = "error"
OUTCOME_UNKNOWN_TOOL = "unknown_tool"
OUTCOME_DEFERRED = "deferred"
OUTCOME_UNANSWERED = "unanswered"

_MESSAGE_KEYS = frozenset({gen_ai.GEN_AI_INPUT_MESSAGES, gen_ai.GEN_AI_OUTPUT_MESSAGES})

Attribute = str | int | float | bool | tuple[str, ...]


# An instance, never registered globally; the context it reads is OpenTelemetry's own, which
# belongs to the running task whichever provider started its span.
_PROPAGATOR = TraceContextTextMapPropagator()


@dataclass
class _TurnTally:
    """What the spans under one root counted, for its attributes and the per-turn metrics."""

    agent: str = ""
    inference_calls: int = 0
    tool_calls: int = 0
    remote_tool_calls: int = 0
    input_tokens: int = 0
    uncached_input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    reasoning_tokens: int = 0
    system_captured: bool = False


# Set by the root span for the spans opened inside it; a mutable record, so a task the turn
# starts still counts into the turn's own copy.
_TALLY: ContextVar[_TurnTally | None] = ContextVar("fisk_ai_turn_tally", default=None)
_IMPORTED_NS = time.time_ns()


def process_started_ns() -> int:
    """When this process started, in Unix nanoseconds: from the kernel's record where there is
    one (about 10 ms fine), else when the telemetry SDK was loaded."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        started_after_boot = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        since_boot = time.clock_gettime(time.CLOCK_BOOTTIME)
    except (OSError, ValueError, IndexError, AttributeError):
        return _IMPORTED_NS
    now = time.time_ns()
    return min(now, now - int((since_boot - started_after_boot) * 1e9))


def capture_export_batch(max_bytes: int) -> int:
    """How many spans one export request carries with content capture on, derived from the
    per-attribute limit ``max_bytes``; with no limit (0) a span's size is unbounded, so the
    smallest batch."""
    if max_bytes <= 0:
        return MIN_CAPTURE_BATCH
    spans = CAPTURE_REQUEST_BYTES // (CONTENT_ATTRIBUTES_PER_SPAN * max_bytes)
    return min(max(spans, MIN_CAPTURE_BATCH), MAX_EXPORT_BATCH)


def argument_keys(arguments: str) -> tuple[str, ...]:
    """The key names of a tool call's JSON arguments, never their values."""
    try:
        decoded = json.loads(arguments)
    except ValueError:
        return ()
    return tuple(str(key) for key in decoded) if isinstance(decoded, dict) else ()


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
        self.finish_reason = ""
        self.first_chunk: float | None = None
        self.answered = False
        self.refusal = ""
        self.rewritten_to: tuple[str, str] | None = None
        self.terminal = ""
        self.served_outcome = ""
        self._truncated: list[str] = []
        self._dropped_messages = 0

    @property
    def recording(self) -> bool:
        return self._span.is_recording()

    @property
    def trace_id(self) -> str:
        return f"{self._span.get_span_context().trace_id:032x}"

    def set(self, key: str, value: Attribute) -> None:
        self._span.set_attribute(key, value)

    def usage(
        self,
        input_tokens: int,
        output_tokens: int,
        *,
        cache_read_tokens: int = 0,
        cache_creation_tokens: int = 0,
        reasoning_tokens: int = 0,
    ) -> None:
        # The conventions' input counts every tier, cached ones included.
        self.input_tokens = input_tokens + cache_read_tokens + cache_creation_tokens
        self.output_tokens = output_tokens
        self.set_usage(
            total_input=self.input_tokens,
            uncached_input=input_tokens,
            output=output_tokens,
            cache_read=cache_read_tokens,
            cache_creation=cache_creation_tokens,
            reasoning=reasoning_tokens,
        )
        tally = _TALLY.get()
        if tally is not None:
            tally.input_tokens += self.input_tokens
            tally.uncached_input_tokens += input_tokens
            tally.output_tokens += output_tokens
            tally.cache_read_tokens += cache_read_tokens
            tally.cache_creation_tokens += cache_creation_tokens
            tally.reasoning_tokens += reasoning_tokens

    def set_usage(
        self,
        *,
        total_input: int,
        uncached_input: int,
        output: int,
        cache_read: int,
        cache_creation: int,
        reasoning: int,
    ) -> None:
        """The usage attributes of a model call or a turn."""
        self._span.set_attribute(gen_ai.GEN_AI_USAGE_INPUT_TOKENS, total_input)
        self._span.set_attribute(gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS, output)
        self._span.set_attribute(gen_ai.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, cache_read)
        self._span.set_attribute(gen_ai.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS, cache_creation)
        self._span.set_attribute(gen_ai.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, reasoning)
        # The term a cost calculation needs, and the number the run summary prints.
        self._span.set_attribute(UNCACHED_INPUT_TOKENS, uncached_input)

    def finish_reasons(self, *reasons: str) -> None:
        self.finish_reason = reasons[0] if reasons else ""
        self._span.set_attribute(gen_ai.GEN_AI_RESPONSE_FINISH_REASONS, reasons)

    def time_to_first_chunk(self, seconds: float) -> None:
        self.first_chunk = seconds
        self._span.set_attribute(gen_ai.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK, seconds)

    def conversation(self, session_id: str) -> None:
        if session_id:
            self._span.set_attribute(gen_ai.GEN_AI_CONVERSATION_ID, session_id)

    def response(self, response_id: str, model: str) -> None:
        if response_id:
            self._span.set_attribute(gen_ai.GEN_AI_RESPONSE_ID, response_id)
        if model:
            self._span.set_attribute(gen_ai.GEN_AI_RESPONSE_MODEL, model)

    def content(self, key: str, build: Callable[[], str], *, from_index: int | None = None) -> None:
        if key == gen_ai.GEN_AI_TOOL_CALL_RESULT:
            self.answered = True
        if not self._owner.content_exported:
            return
        limit = self._owner.capture_max_bytes
        if key in _MESSAGE_KEYS:
            finish = self.finish_reason if key == gen_ai.GEN_AI_OUTPUT_MESSAGES else ""
            document = messages_document(build(), finish_reason=finish, max_bytes=limit)
        else:
            document = value_document(build(), max_bytes=limit)
        self.record(key, document)
        if from_index is not None and document.text:
            # Trimming to fit drops the oldest messages, so the captured ones begin later.
            self._span.set_attribute(CONTENT_FROM_INDEX, from_index + document.dropped_messages)

    def refused(self, refusal: ToolRefusal) -> None:
        self.refusal = refusal.value

    def rewritten(self, name: str, kind: str) -> None:
        # The span keeps its name; what it reports ran, and is counted under, is the new tool.
        self.rewritten_to = (name, kind)
        self._span.set_attribute(TOOL_REWRITTEN, True)
        self._span.set_attribute(gen_ai.GEN_AI_TOOL_NAME, name)
        self._span.set_attribute(TOOL_KIND, kind)
        self._span.set_attribute(TOOL_REMOTE, kind == KIND_REMOTE)

    def confirm_waited(self, seconds: float) -> None:
        self._span.set_attribute(TOOL_CONFIRM_WAIT_MS, round(seconds * 1000))

    def exit_code(self, code: int | None) -> None:
        if code is not None:
            self._span.set_attribute(TOOL_EXIT_CODE, code)

    def record(self, key: str, document: Document) -> None:
        """Put a rendered content document on the span, saying what was cut to fit it."""
        if not document.text:
            return
        self._span.set_attribute(key, document.text)
        if document.truncated:
            self._truncated.append(key)
            self._span.set_attribute(CONTENT_TRUNCATED, tuple(self._truncated))
        if document.dropped_messages:
            self._dropped_messages += document.dropped_messages
            self._span.set_attribute(CONTENT_DROPPED_MESSAGES, self._dropped_messages)

    def terminal_reason(self, reason: str) -> None:
        self.terminal = reason
        self._span.set_attribute(RUN_TERMINAL_REASON, reason)

    def served(self, outcome: ServedToolOutcome) -> None:
        self.served_outcome = outcome.value

    def fail(self, error: ErrorClass) -> None:
        self.error = error
        self._span.set_attribute(error_attributes.ERROR_TYPE, error.value)
        self._span.set_status(Status(StatusCode.ERROR, error.value))


def _tool_outcome(kind: str, span: _LiveSpan, raised: bool) -> str:
    """The one axis tool calls are grouped by."""
    if kind == KIND_UNKNOWN:
        return OUTCOME_UNKNOWN_TOOL
    if raised:
        # Interrupted before its answer, or stopped with the run; a crash says so on the root.
        return OUTCOME_UNANSWERED
    if span.refusal:
        return span.refusal
    if span.error is not None:
        return OUTCOME_ERROR
    return OUTCOME_EXECUTED if span.answered else OUTCOME_DEFERRED


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
        # Capture alone changes the export's shape: transcripts compress several-fold, and a
        # batch sized from the limit keeps a request within what a collector takes. Without it
        # the SDK's defaults, and the operator's OTEL_BSP_* and compression variables, stand.
        self._spans = _CountingSpanExporter(
            OTLPSpanExporter(
                endpoint=f"{endpoint}/v1/traces",
                timeout=EXPORT_TIMEOUT_SECONDS,
                compression=Compression.Gzip if settings.capture else None,
            )
        )
        batch = capture_export_batch(settings.capture_max_bytes) if settings.capture else None
        self._tracer_provider = TracerProvider(resource=resource, sampler=sampler)
        self._tracer_provider.add_span_processor(
            BatchSpanProcessor(self._spans, max_export_batch_size=batch)
        )
        self._tracer = self._tracer_provider.get_tracer("fisk_ai")
        self._propagator = _PROPAGATOR
        self._startup: trace.Span | None = None
        self._memory: dict[str, Attribute] = {}
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
                explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
            )
            self._first_chunk = meter.create_histogram(
                gen_ai_metrics.GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK,
                unit="s",
                description="Time from sending a streamed model call to its first chunk",
                explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
            )
            self._agent_duration = meter.create_histogram(
                INVOKE_AGENT_DURATION,
                unit="s",
                description="Duration of one turn of the agent",
                explicit_bucket_boundaries_advisory=AGENT_DURATION_BUCKETS,
            )
            self._agent_inference_calls = meter.create_histogram(
                INVOKE_AGENT_INFERENCE_CALLS,
                unit="{inference_call}",
                description="Model calls made in one turn of the agent",
                explicit_bucket_boundaries_advisory=CALL_COUNT_BUCKETS,
            )
            self._agent_tool_calls = meter.create_histogram(
                INVOKE_AGENT_TOOL_CALLS,
                unit="{tool_call}",
                description="Tool calls made in one turn of the agent",
                explicit_bucket_boundaries_advisory=CALL_COUNT_BUCKETS,
            )
            self._tool_duration = meter.create_histogram(
                EXECUTE_TOOL_DURATION,
                unit="s",
                description="Duration of tool calls, every exit included",
                explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
            )
            self._tool_calls = meter.create_counter(
                "fisk.tool.calls", unit="{call}", description="Tool calls handled"
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

    def _remote_parent(self, traceparent: str) -> Context | None:
        """The context of a caller's ``traceparent`` to open a span under; None, the span
        current here, when there is none."""
        return self._propagator.extract({"traceparent": traceparent}) if traceparent else None

    def startup(self, agent: str) -> None:
        if self._startup is not None:
            return
        # A root of its own: startup is the process's, not any turn's.
        self._startup = self._tracer.start_span(
            f"startup {agent}" if agent else "startup",
            context=Context(),
            kind=SpanKind.INTERNAL,
            start_time=process_started_ns(),
        )

    def memory_store(self, backend: str, location: str = "") -> None:
        self._memory = {MEMORY_BACKEND: backend}
        if location:
            self._memory[MEMORY_LOCATION] = location
        if self._startup is not None:
            self._startup.set_attributes(self._memory)

    def ready(self, *, tools_by_kind: Mapping[str, int] | None = None) -> None:
        span, self._startup = self._startup, None
        if span is None:
            return
        for kind, count in (tools_by_kind or {}).items():
            span.set_attribute(f"fisk.tools.{kind}", count)
        span.end()

    def _startup_failed(self) -> None:
        """End a startup span the process stopped before finishing: the slow or failing start
        is what the span is for."""
        if self._startup is not None:
            self._startup.set_attribute(error_attributes.ERROR_TYPE, STARTUP_FAILED.value)
            self._startup.set_status(Status(StatusCode.ERROR, STARTUP_FAILED.value))
        self.ready()

    @contextmanager
    def _run(
        self, agent: str, traceparent: str, interactive: bool, resumed: bool
    ) -> Iterator[Span]:
        self.ready()
        context = self._remote_parent(traceparent)
        began = time.perf_counter()
        with self._span(
            f"invoke_agent {agent}" if agent else "invoke_agent",
            SpanKind.SERVER if traceparent else SpanKind.INTERNAL,
            {
                gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.INVOKE_AGENT.value,
                gen_ai.GEN_AI_AGENT_NAME: agent,
                RUN_INTERACTIVE: interactive,
                RUN_RESUMED: resumed,
            },
            context,
        ) as span:
            record = recording_turn()
            if record is not None and span.recording:
                record.trace_id = span.trace_id
                record.content_exported = self.content_exported
                record.traceparent = self.traceparent()
            tally = _TurnTally(agent=agent)
            token = _TALLY.set(tally)
            raised = True
            try:
                yield span
                raised = False
            finally:
                _TALLY.reset(token)
                self._finish_run(span, tally, raised, interactive, time.perf_counter() - began)

    def _finish_run(
        self, span: _LiveSpan, tally: _TurnTally, raised: bool, interactive: bool, seconds: float
    ) -> None:
        if raised and not span.terminal:
            span.terminal_reason(TERMINAL_ERROR)
        span.set(RUN_CRASHED, raised)
        span.set(RUN_TOOL_CALLS, tally.tool_calls)
        span.set(RUN_REMOTE_TOOL_CALLS, tally.remote_tool_calls)
        span.set_usage(
            total_input=tally.input_tokens,
            uncached_input=tally.uncached_input_tokens,
            output=tally.output_tokens,
            cache_read=tally.cache_read_tokens,
            cache_creation=tally.cache_creation_tokens,
            reasoning=tally.reasoning_tokens,
        )
        if self._meter_provider is None:
            return
        measured: dict[str, Attribute] = {
            gen_ai.GEN_AI_AGENT_NAME: tally.agent,
            RUN_INTERACTIVE: interactive,
        }
        if span.terminal:
            measured[RUN_TERMINAL_REASON] = span.terminal
        self._agent_duration.record(seconds, measured)
        self._agent_inference_calls.record(tally.inference_calls, measured)
        self._agent_tool_calls.record(tally.tool_calls, measured)

    def run(
        self,
        agent: str,
        *,
        traceparent: str = "",
        interactive: bool = False,
        resumed: bool = False,
    ) -> AbstractContextManager[Span]:
        return self._run(agent, traceparent, interactive, resumed)

    @contextmanager
    def _measured_model_call(
        self, provider: str, model: str, system: Sequence[str], span_only: dict[str, Attribute]
    ) -> Iterator[Span]:
        attributes: dict[str, Attribute] = {
            gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.CHAT.value,
            gen_ai.GEN_AI_PROVIDER_NAME: provider,
            gen_ai.GEN_AI_REQUEST_MODEL: model,
        }
        began = time.perf_counter()
        span: _LiveSpan | None = None
        tally = _TALLY.get()
        try:
            # These are span attributes only: a metric keeps the model's own labels.
            with self._span(f"chat {model}", SpanKind.CLIENT, attributes | span_only) as span:
                # The system prompt is a constant of the turn: once per turn, not per call.
                if self.content_exported and not (tally and tally.system_captured):
                    span.record(
                        gen_ai.GEN_AI_SYSTEM_INSTRUCTIONS,
                        system_instructions_document(system, max_bytes=self.capture_max_bytes),
                    )
                    if tally is not None:
                        tally.system_captured = True
                yield span
        finally:
            if tally is not None:
                tally.inference_calls += 1
            if self._meter_provider is not None and span is not None:
                measured = dict(attributes)
                if span.error is not None:
                    measured[error_attributes.ERROR_TYPE] = span.error.value
                self._operation_duration.record(time.perf_counter() - began, measured)
                if span.first_chunk is not None:
                    self._first_chunk.record(span.first_chunk, attributes)
                for kind, count in (("input", span.input_tokens), ("output", span.output_tokens)):
                    if count:
                        self._token_usage.record(
                            count, {**attributes, gen_ai.GEN_AI_TOKEN_TYPE: kind}
                        )

    def model_call(
        self,
        provider: str,
        model: str,
        *,
        system: Sequence[str] = (),
        iteration: int = 0,
        messages: int = 0,
        tools: int = 0,
        max_tokens: int = 0,
    ) -> AbstractContextManager[Span]:
        span_only: dict[str, Attribute] = {
            LLM_ITERATION: iteration,
            LLM_MESSAGES: messages,
            LLM_TOOLS: tools,
        }
        if max_tokens > 0:
            span_only[gen_ai.GEN_AI_REQUEST_MAX_TOKENS] = max_tokens
        return self._measured_model_call(provider, model, system, span_only)

    @contextmanager
    def _measured_tool_call(
        self, name: str, call_id: str, kind: str, arguments: str, *, gated: bool, resumed: bool
    ) -> Iterator[Span]:
        began = time.perf_counter()
        tally = _TALLY.get()
        unknown = kind == KIND_UNKNOWN
        datastore = kind == KIND_BUILTIN and name.startswith(KNOWLEDGE_TOOL_PREFIX)
        attributes: dict[str, Attribute] = {
            gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.EXECUTE_TOOL.value,
            gen_ai.GEN_AI_TOOL_TYPE: TOOL_TYPE_DATASTORE if datastore else TOOL_TYPE_FUNCTION,
        }
        # A name no tool has came from the model unvalidated: span attribute only.
        attributes[TOOL_REQUESTED_NAME if unknown else gen_ai.GEN_AI_TOOL_NAME] = name
        if call_id:
            attributes[gen_ai.GEN_AI_TOOL_CALL_ID] = call_id
        if tally is not None and tally.agent:
            attributes[gen_ai.GEN_AI_AGENT_NAME] = tally.agent
        if kind:
            attributes[TOOL_KIND] = kind
            attributes[TOOL_REMOTE] = kind == KIND_REMOTE
        attributes[TOOL_CONFIRM_GATED] = gated
        attributes[TOOL_RESUMED] = resumed
        attributes[TOOL_REWRITTEN] = False
        if keys := argument_keys(arguments):
            attributes[TOOL_ARG_KEYS] = keys
        span_name = UNKNOWN_TOOL_SPAN if unknown else f"execute_tool {name}"
        with self._span(span_name, SpanKind.INTERNAL, attributes) as span:
            raised = True
            try:
                yield span
                raised = False
            finally:
                outcome = _tool_outcome(kind, span, raised)
                span.set(TOOL_OUTCOME, outcome)
                if span.rewritten_to is not None:
                    name, kind = span.rewritten_to
                # Set last, for the tool that ran: a PreToolUse hook may have changed it.
                if kind == KIND_BUILTIN and name.startswith(MEMORY_TOOL_PREFIX):
                    for key, value in self._memory.items():
                        span.set(key, value)
                if tally is not None:
                    tally.tool_calls += 1
                    if kind == KIND_REMOTE:
                        tally.remote_tool_calls += 1
                self._measure_tool(name, kind, outcome, span, raised, began)

    def _measure_tool(
        self, name: str, kind: str, outcome: str, span: _LiveSpan, raised: bool, began: float
    ) -> None:
        if self._meter_provider is None:
            return
        measured: dict[str, Attribute] = {TOOL_OUTCOME: outcome}
        if kind:
            measured[TOOL_KIND] = kind
        # Only a name the tool set knows is a label: bounded, unlike what a model may ask for.
        if kind and kind != KIND_UNKNOWN:
            measured[gen_ai.GEN_AI_TOOL_NAME] = name
        error = span.error or (GENERIC_ERROR if raised else None)
        if error is not None:
            measured[error_attributes.ERROR_TYPE] = error.value
        self._tool_calls.add(1, measured)
        self._tool_duration.record(time.perf_counter() - began, measured)

    def tool_call(
        self,
        name: str,
        *,
        call_id: str = "",
        kind: str = "",
        arguments: str = "",
        confirm_gated: bool = False,
        resumed: bool = False,
    ) -> AbstractContextManager[Span]:
        return self._measured_tool_call(
            name, call_id, kind, arguments, gated=confirm_gated, resumed=resumed
        )

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
        context = self._remote_parent(traceparent)
        return self._span(f"{method} {tool}", kind, attributes, context)

    def remote_agent(
        self, peer: str, request: str, *, traceparent: str = ""
    ) -> AbstractContextManager[Span]:
        context = self._remote_parent(traceparent)
        return self._span(
            f"invoke_agent {peer}",
            SpanKind.CLIENT,
            {
                gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.INVOKE_AGENT.value,
                gen_ai.GEN_AI_AGENT_NAME: peer,
                "fisk.a2a.request": request,
            },
            context,
        )

    def remote_tool(self, peer: str, tool: str) -> AbstractContextManager[Span]:
        # Go's hop span: under the local call's execute_tool, named for the peer, which is
        # operator configuration; the tool name is the peer's, so only an attribute. No
        # gen_ai.agent.name: everywhere else in the trace that is this agent.
        return self._span(
            f"invoke_agent {peer}",
            SpanKind.CLIENT,
            {
                gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.INVOKE_AGENT.value,
                gen_ai.GEN_AI_TOOL_NAME: tool,
                TOOL_REMOTE_AGENT: peer,
            },
        )

    @contextmanager
    def _served_tool(
        self, name: str, attributes: dict[str, Attribute], traceparent: str
    ) -> Iterator[Span]:
        # Never a child of whatever happens to be current where the request was read: the
        # caller's trace when it sent one that parses, else a root of its own.
        context = self._propagator.extract({"traceparent": traceparent})
        with self._span(name, SpanKind.SERVER, attributes, context) as span:
            raised = True
            try:
                yield span
                raised = False
            finally:
                # A call abandoned before its reply answered nothing, as a local one would.
                outcome = span.served_outcome or (
                    OUTCOME_UNANSWERED if raised else ServedToolOutcome.EXECUTED.value
                )
                span.set(TOOL_OUTCOME, outcome)

    def served_tool(self, call: ServedCall) -> AbstractContextManager[Span]:
        # Go's shape: no metric, since the tool duration histogram would then describe two
        # populations, the calls this agent's model makes and the calls its peers make.
        attributes: dict[str, Attribute] = {
            gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.EXECUTE_TOOL.value,
            gen_ai.GEN_AI_TOOL_TYPE: TOOL_TYPE_FUNCTION,
            gen_ai.GEN_AI_AGENT_NAME: call.agent,
            SERVED_REQUEST: call.request,
            SERVED_CALLER_VERIFIED: call.caller_verified,
        }
        # A name no served tool has is the peer's unvalidated input: an attribute only.
        if call.known:
            attributes[gen_ai.GEN_AI_TOOL_NAME] = call.tool
        elif call.tool:
            attributes[TOOL_REQUESTED_NAME] = call.tool
        if call.caller:
            attributes[SERVED_CALLER] = call.caller
        if call.sender:
            attributes[SERVED_SENDER] = call.sender
        span_name = f"execute_tool {call.tool}" if call.known else UNKNOWN_TOOL_SPAN
        return self._served_tool(span_name, attributes, call.traceparent)

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
        self._startup_failed()
        self._tracer_provider.force_flush(FLUSH_TIMEOUT_MILLIS)
        self._tracer_provider.shutdown()
        if self._meter_provider is not None:
            self._meter_provider.shutdown(timeout_millis=FLUSH_TIMEOUT_MILLIS)
        return Delivery(self._spans.attempted, self._spans.delivered, self._spans.first_error)
