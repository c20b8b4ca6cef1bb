"""The agent.yaml tree as strict pydantic models: field names are the YAML keys.

Every model forbids unknown keys and is frozen. Values are decoded strictly (no "5" for 5, no 1
for true); per-value normalization happens here too (durations become timedelta, closed
vocabularies become enums, zero-means-default integers are replaced), so the error for a bad value
carries the key's path and line. Derivations that need more than one key (identity, defaults
named after it, per-backend options) are the prepare stage in fisk_ai.config.funnel.

A key written with no value (null) counts as not written, except on the blocks whose presence is
a switch (expose.agent.mcp, a2a, a2a.prompts, jobs, slack), where it counts as an empty block.
"""

from __future__ import annotations

import enum
import math
import os
import re
from collections.abc import Callable
from datetime import timedelta
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    ValidationError,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from fisk_ai.util.durations import DurationError, parse_duration

__all__ = [
    "A2aExposure",
    "A2aPrompts",
    "AgentExposure",
    "Budget",
    "CaptureMessages",
    "Config",
    "ConfirmOverMcp",
    "ContentCapture",
    "Embeddings",
    "EmbeddingsProvider",
    "Expose",
    "ExposedTools",
    "FileMemoryOptions",
    "FileSessionsOptions",
    "Harness",
    "HumanInTheLoop",
    "JetStreamMemoryOptions",
    "JetStreamSessionsOptions",
    "JobsExposure",
    "Knowledge",
    "Llm",
    "McpBuiltin",
    "McpClient",
    "McpExposure",
    "Memory",
    "MemoryOptions",
    "Pii",
    "PiiMode",
    "RemoteAgent",
    "RemoteToolHost",
    "Sessions",
    "SessionsOptions",
    "SlackExposure",
    "StoreBackend",
    "Telemetry",
    "Thinking",
    "ToolFilter",
    "usable_cpu_count",
]

IDENTITY_PATTERN = re.compile(r"[a-zA-Z0-9_-]+")
DEFAULT_IDENTITY = "fisk-ai"
MAX_CONCURRENT_TOOLS = 1024

_E = TypeVar("_E", bound=enum.Enum)


def problem(detail: str) -> PydanticCustomError:
    """A value error whose detail completes the sentence '"<key>" ...'."""
    return PydanticCustomError("fisk", "{detail}", {"detail": detail})


class StoreBackend(enum.Enum):
    """Where memory or sessions are kept."""

    FILE = "file"
    JETSTREAM = "jetstream"


class ConfirmOverMcp(enum.Enum):
    """How fisk mcp treats a confirm-gated tool."""

    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


class McpBuiltin(enum.Enum):
    """The built-in tools an operator may expose over MCP."""

    KNOWLEDGE_SEARCH = "knowledge_search"
    KNOWLEDGE_ENUMERATE = "knowledge_enumerate"


class PiiMode(enum.Enum):
    """What the PII guard does with personal data in prompts and tool results."""

    REDACT = "redact"
    REJECT = "reject"
    OFF = "off"


class CaptureMessages(enum.Enum):
    """How much of the conversation each telemetry span carries when capture is on."""

    DELTA = "delta"
    FULL = "full"


def _choice(vocabulary: type[_E], *, fold_case: bool = True) -> Callable[[Any], _E | Any]:
    allowed = ", ".join(member.value for member in vocabulary)

    def convert(value: Any) -> _E | Any:
        if isinstance(value, vocabulary):
            return value
        if isinstance(value, str):
            wanted = value.strip().lower() if fold_case else value
            for member in vocabulary:
                if member.value == wanted:
                    return member
            raise problem(f'is "{value}", which is not one of {allowed}')
        raise problem(f"must be one of {allowed}")

    return convert


def _as_duration(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, str):
        try:
            return parse_duration(value.strip())
        except DurationError as error:
            shown = value if len(value) <= 40 else value[:37] + "..."
            raise problem(
                f'is not a duration ("{shown}"): {error.reason}; '
                'write one like "30s", "5m" or "1h30m"'
            ) from None
    return value


def _longer_than_zero(value: timedelta) -> timedelta:
    if value <= timedelta(0):
        raise problem('must be longer than 0s; write one like "30s"')
    return value


def _at_least(low: int) -> Callable[[int], int]:
    def check(value: int) -> int:
        if value < low:
            raise problem(f"must be at least {low}, not {value}")
        return value

    return check


def _between(low: int, high: int) -> Callable[[int], int]:
    def check(value: int) -> int:
        if not low <= value <= high:
            raise problem(f"must be between {low} and {high}, not {value}")
        return value

    return check


def _concurrency(default: Callable[[], int]) -> Callable[[int], int]:
    def check(value: int) -> int:
        if value < 0 or value > MAX_CONCURRENT_TOOLS:
            raise problem(f"must be between 0 and {MAX_CONCURRENT_TOOLS}, not {value}")
        return value or default()

    return check


MAX_REASONING_EFFORT_LENGTH = 32


def _reasoning_effort(value: str) -> str:
    # Which levels exist is the model's to say, so only the shape is checked, as Go checks it:
    # a typed newline or a pasted sentence fails here rather than at the first model call.
    effort = value.strip().lower()
    if len(effort) > MAX_REASONING_EFFORT_LENGTH:
        raise problem(f"is over {MAX_REASONING_EFFORT_LENGTH} characters; write one word")
    if any(not ("a" <= c <= "z" or c in "_-") for c in effort):
        raise problem(
            f'is "{value}", but may hold only letters, "_" and "-" (a level such as "high")'
        )
    return effort


def _entries(value: Any) -> Any:
    """A list's entries trimmed, blank ones dropped and repeats removed, as Go normalizes a
    list of names."""
    if not isinstance(value, list):
        return value
    seen: dict[Any, None] = {}
    for entry in _nulls_as_empty(value):
        cleaned = entry.strip() if isinstance(entry, str) else entry
        if cleaned != "":
            seen.setdefault(cleaned, None)
    return list(seen)


def _nulls_as_empty(value: Any) -> Any:
    """A list whose empty entries (a bare ``-``) read as empty text, as Go decodes a null into a
    string; the entries are normalized later, where blanks are dropped."""
    if not isinstance(value, list):
        return value
    return ["" if entry is None else entry for entry in value]


_SHOWN_PATTERN_LENGTH = 80


def _compiles(pattern: str) -> str:
    # An extreme pattern (nested thousands deep, a repeat count past the engine's range)
    # raises RecursionError or OverflowError rather than re.error.
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as error:
        shown = pattern
        if len(shown) > _SHOWN_PATTERN_LENGTH:
            shown = f"{shown[:_SHOWN_PATTERN_LENGTH]}... ({len(pattern):,} characters)"
        raise problem(f'is not a valid regular expression ("{shown}"): {error}') from None
    return pattern


def _identity_charset(value: str) -> str:
    if value and not IDENTITY_PATTERN.fullmatch(value):
        raise problem(f'is "{value}", but may hold only letters, digits, "_" and "-"')
    return value


def _named(value: str) -> str:
    if not value:
        raise problem('must not be empty; it may hold letters, digits, "_" and "-"')
    return _identity_charset(value)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise problem("must not be empty")
    return value


def _trimmed(value: str) -> str:
    return value.strip()


def _provider_name(value: str) -> str:
    return value.strip().lower() or "anthropic"


_KV_PREFIX = re.compile(r"[A-Za-z0-9_=-]+(\.[A-Za-z0-9_=-]+)*")


def _kv_prefix(value: str) -> str:
    if value and not _KV_PREFIX.fullmatch(value):
        raise problem(
            f'is "{value}", but may hold only letters, digits, "_", "=", "-" and '
            'dots between them (or be "" for no prefix)'
        )
    return value


def _stream_name(value: str) -> str:
    if not value or any(c in value for c in ".*> \t/\\"):
        raise problem(f'is "{value}", which is not a JetStream stream name')
    return value


def _cgroup_cpu_limit() -> int | None:
    try:
        fields = Path("/sys/fs/cgroup/cpu.max").read_text(encoding="ascii").split()
    except OSError:
        return None
    if len(fields) != 2 or fields[0] == "max":
        return None
    try:
        quota, period = int(fields[0]), int(fields[1])
    except ValueError:
        return None
    if quota <= 0 or period <= 0:
        return None
    return max(1, math.ceil(quota / period))


def usable_cpu_count() -> int:
    """CPUs this process may use: its affinity mask, capped by a container's CPU limit."""
    try:
        count = len(os.sched_getaffinity(0))
    except AttributeError:
        count = os.cpu_count() or 1
    limit = _cgroup_cpu_limit()
    if limit is not None:
        count = min(count, limit)
    return max(1, min(count, MAX_CONCURRENT_TOOLS))


def _two() -> int:
    return 2


Duration = Annotated[timedelta, BeforeValidator(_as_duration)]
PositiveDuration = Annotated[
    timedelta, BeforeValidator(_as_duration), AfterValidator(_longer_than_zero)
]
Regex = Annotated[str, AfterValidator(_compiles)]
Identity = Annotated[str, AfterValidator(_identity_charset)]
Name = Annotated[str, AfterValidator(_named)]
NonBlank = Annotated[str, AfterValidator(_not_blank)]
TextList = Annotated[list[str], BeforeValidator(_nulls_as_empty)]
"""A list of names where a blank entry is a leftover of editing, dropped when prepared."""
Trimmed = Annotated[str, AfterValidator(_trimmed)]
Count = Annotated[int, AfterValidator(_at_least(1))]
NonNegative = Annotated[int, AfterValidator(_at_least(0))]


class Block(BaseModel):
    """Base of every agent.yaml block: unknown keys are errors, values are strict, read-only."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    null_means_empty: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _null_is_unset(cls, data: Any) -> Any:
        if not isinstance(data, dict) or all(value is not None for value in data.values()):
            return data
        cleaned: dict[Any, Any] = {}
        for key, value in data.items():
            if value is None and key in cls.model_fields:
                if key in cls.null_means_empty:
                    cleaned[key] = {}
                continue
            cleaned[key] = value
        return cleaned


class ToolFilter(Block):
    """Tool names (regular expressions) and tags (exact) to include or exclude."""

    tools: list[Regex] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)

    @cached_property
    def tool_patterns(self) -> tuple[re.Pattern[str], ...]:
        """The tools patterns, compiled."""
        return tuple(re.compile(pattern) for pattern in self.tools)


class RemoteAgent(Block):
    """Declared for compatibility; nothing reads it yet."""

    name: str
    alias: str = ""


class RemoteToolHost(Block):
    """Another agent whose served tools this agent imports over NATS."""

    name: Name
    alias: Identity = ""
    include: ToolFilter = Field(default_factory=ToolFilter)
    exclude: ToolFilter = Field(default_factory=ToolFilter)


class McpClient(Block):
    """A third-party MCP server whose tools are imported as <alias>_<tool>."""

    name: Name
    alias: Identity = ""
    command: str = ""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: PositiveDuration = timedelta(seconds=30)
    include: ToolFilter = Field(default_factory=ToolFilter)
    exclude: ToolFilter = Field(default_factory=ToolFilter)


class ExposedTools(Block):
    """Narrows the tools served over MCP and a2a.serve_tools, on top of include/exclude."""

    include: ToolFilter = Field(default_factory=ToolFilter)
    exclude: ToolFilter = Field(default_factory=ToolFilter)


class McpExposure(Block):
    """fisk mcp settings; the block's presence is what enables fisk mcp."""

    port: Annotated[int, AfterValidator(_between(0, 65535))] = 0
    address: str = ""
    instructions: str = ""
    confirm_over_mcp: Annotated[ConfirmOverMcp, BeforeValidator(_choice(ConfirmOverMcp))] = (
        ConfirmOverMcp.AUTO
    )
    builtins: Annotated[
        list[Annotated[McpBuiltin, BeforeValidator(_choice(McpBuiltin, fold_case=False))]],
        BeforeValidator(_entries),
    ] = Field(default_factory=list)
    max_concurrent_tools: Annotated[int, AfterValidator(_concurrency(_two))] = 2
    tool_timeout: PositiveDuration = timedelta(seconds=30)


class A2aPrompts(Block):
    """Answering prompts over a2a; the block's presence enables it."""

    workers: Count = 1
    elicit: bool = False


class A2aExposure(Block):
    """The a2a endpoint: serving tools, answering prompts, and the timeout for calling peers."""

    null_means_empty: ClassVar[frozenset[str]] = frozenset({"prompts"})

    serve_tools: bool = False
    prompts: A2aPrompts | None = None
    max_concurrent_tools: Annotated[int, AfterValidator(_concurrency(usable_cpu_count))] = Field(
        default_factory=usable_cpu_count
    )
    tool_timeout: PositiveDuration = timedelta(seconds=30)
    request_timeout: PositiveDuration = timedelta(seconds=120)


class A2aHttpExposure(Block):
    """Google's A2A 1.0 over HTTP, a door into the prompts channel; the block's presence
    enables it. ``public_url`` is the address the agent card gives callers (empty: the bound
    address); ``token_env`` names the variable holding the bearer token every call but the
    card's must carry (empty: none); ``plaintext_token`` allows that token over plain HTTP on
    an address other than loopback."""

    address: NonBlank = "127.0.0.1"
    port: Annotated[int, AfterValidator(_between(0, 65535))] = 0
    public_url: str = ""
    token_env: str = ""
    plaintext_token: bool = False


class JobsExposure(Block):
    """Queued jobs from a Choria asyncjobs work queue; the block's presence enables it."""

    queue: NonBlank = "FISK_AI"
    task_type: NonBlank = "fisk-ai:run"
    workers: Count = 1
    nats_context: str = ""
    max_payload: Count = 524288


class SlackExposure(Block):
    """The Slack bot channel; the block's presence enables it."""

    workers: Count = 5
    context_lines: NonNegative = 20
    no_progress: bool = False
    answer_grace: Duration = timedelta(seconds=30)
    max_waiting: NonNegative = 10
    max_coalesced: Count = 5


class AgentExposure(Block):
    """How this agent is offered to others."""

    null_means_empty: ClassVar[frozenset[str]] = frozenset(
        {"mcp", "a2a", "a2a_http", "jobs", "slack"}
    )

    tools: ExposedTools = Field(default_factory=ExposedTools)
    mcp: McpExposure | None = None
    a2a: A2aExposure | None = None
    a2a_http: A2aHttpExposure | None = None
    jobs: JobsExposure | None = None
    slack: SlackExposure | None = None


class Expose(Block):
    """The expose block."""

    agent: AgentExposure = Field(default_factory=AgentExposure)


class HumanInTheLoop(Block):
    """Offers the ask_human_* tools."""

    enabled: bool = False


class FileMemoryOptions(Block):
    """harness.memory.options for the file backend."""

    directory: str = ""


class JetStreamMemoryOptions(Block):
    """harness.memory.options for the jetstream backend.

    prefix is None when the file does not set it; prepare then sets it to the identity, so an
    absent prefix (per-agent keys) and "" (a flat keyspace) stay apart.
    """

    bucket: NonBlank
    prefix: Annotated[str, AfterValidator(_kv_prefix)] | None = None
    no_require_read_before_update: bool = False


class FileSessionsOptions(Block):
    """harness.sessions.options for the file backend."""

    directory: str = ""


class JetStreamSessionsOptions(Block):
    """harness.sessions.options for the jetstream backend."""

    stream: Annotated[str, AfterValidator(_stream_name)]


MemoryOptions = FileMemoryOptions | JetStreamMemoryOptions
SessionsOptions = FileSessionsOptions | JetStreamSessionsOptions

MEMORY_OPTIONS: dict[StoreBackend, type[FileMemoryOptions] | type[JetStreamMemoryOptions]] = {
    StoreBackend.FILE: FileMemoryOptions,
    StoreBackend.JETSTREAM: JetStreamMemoryOptions,
}
SESSIONS_OPTIONS: dict[StoreBackend, type[FileSessionsOptions] | type[JetStreamSessionsOptions]] = {
    StoreBackend.FILE: FileSessionsOptions,
    StoreBackend.JETSTREAM: JetStreamSessionsOptions,
}

_Backend = Annotated[StoreBackend, BeforeValidator(_choice(StoreBackend))]


class Memory(Block):
    """The model's key/value notes across runs.

    options is the block as written; backend_options is it decoded for the chosen backend, with
    its defaults applied (set when the file is parsed).
    """

    enabled: bool = False
    backend: _Backend = StoreBackend.FILE
    no_index: bool = False
    read_only: bool = False
    options: dict[str, Any] = Field(default_factory=dict)

    _backend_options: MemoryOptions | None = PrivateAttr(default=None)

    @property
    def backend_options(self) -> MemoryOptions:
        """The options decoded for backend; defaults are filled in only by parse and load."""
        if self._backend_options is None:
            self._backend_options = MEMORY_OPTIONS[self.backend].model_validate(self.options)
        return self._backend_options


class EmbeddingsProvider(enum.Enum):
    """Where the knowledge vector tier's vectors come from."""

    OPENAI = "openai"  # an OpenAI-compatible POST <base_url>/embeddings, as upstream
    LOCAL = "local"  # the bundled all-MiniLM-L6-v2, run in-process (opt-in, beyond upstream)


LOCAL_EMBEDDINGS_MODEL = "all-MiniLM-L6-v2"
_ENDPOINT_KEYS = ("base_url", "api_key_env", "timeout")


_embeddings_provider = _choice(EmbeddingsProvider)


class Embeddings(Block):
    """The knowledge vector tier: an OpenAI-compatible embeddings endpoint (the default), or,
    with ``provider: local``, all-MiniLM-L6-v2 run in-process with no endpoint keys."""

    provider: Annotated[EmbeddingsProvider, BeforeValidator(_embeddings_provider)] = (
        EmbeddingsProvider.OPENAI
    )
    # The endpoint's, and checked when the index is opened, as the Go fisk-ai checks them: a
    # block that sets only ``timeout`` parses. A local embedder has neither.
    base_url: NonBlank = ""
    model: NonBlank = ""
    api_key_env: str = ""
    timeout: PositiveDuration = timedelta(seconds=30)
    query_prefix: str = ""
    document_prefix: str = ""

    @model_validator(mode="wrap")
    @classmethod
    def _keys_of_the_provider(
        cls, data: Any, handler: ModelWrapValidatorHandler[Embeddings]
    ) -> Embeddings:
        if not isinstance(data, dict):
            return handler(data)
        try:
            provider = _embeddings_provider(data.get("provider") or EmbeddingsProvider.OPENAI)
        except PydanticCustomError:
            return handler(data)  # which reports the provider by name
        problems: list[InitErrorDetails] = []
        if provider is EmbeddingsProvider.LOCAL:
            problems = [
                InitErrorDetails(
                    type=problem(
                        "is a key of the embeddings endpoint, and provider: local runs the "
                        "model in-process; remove it"
                    ),
                    loc=(key,),
                    input=data[key],
                )
                for key in _ENDPOINT_KEYS
                if data.get(key) is not None
            ]
            model = data.get("model")
            if model is None:
                data = {**data, "model": LOCAL_EMBEDDINGS_MODEL}
            elif model != LOCAL_EMBEDDINGS_MODEL:
                problems.append(
                    InitErrorDetails(
                        type=problem(
                            f"is {model!r}, but provider: local runs only "
                            f"{LOCAL_EMBEDDINGS_MODEL}; write that or leave model out"
                        ),
                        loc=("model",),
                        input=model,
                    )
                )
        if problems:
            raise ValidationError.from_exception_data(cls.__name__, problems)
        return handler(data)


class Knowledge(Block):
    """The operator's document corpus, searched by the knowledge tools."""

    enabled: bool = False
    paths: list[str] = Field(default_factory=list)
    directory: str = ""
    top_k: Annotated[int, AfterValidator(_between(1, 20))] = 5
    max_injected_tokens: Count = 6000
    embeddings: Embeddings | None = None


class Sessions(Block):
    """Where conversations are journaled; options and backend_options as for Memory."""

    backend: _Backend = StoreBackend.FILE
    options: dict[str, Any] = Field(default_factory=dict)

    _backend_options: SessionsOptions | None = PrivateAttr(default=None)

    @property
    def backend_options(self) -> SessionsOptions:
        """The options decoded for backend; defaults are filled in only by parse and load."""
        if self._backend_options is None:
            self._backend_options = SESSIONS_OPTIONS[self.backend].model_validate(self.options)
        return self._backend_options


class Pii(Block):
    """The PII guard."""

    mode: Annotated[PiiMode, BeforeValidator(_choice(PiiMode))] = PiiMode.REDACT


class Harness(Block):
    """How the agent loop around the model behaves."""

    human_in_the_loop: HumanInTheLoop = Field(default_factory=HumanInTheLoop)
    confirm_tags: TextList = Field(default_factory=list)
    no_tui: bool = False
    no_bell: bool = False
    tool_timeout: Duration = timedelta(minutes=5)
    memory: Memory = Field(default_factory=Memory)
    knowledge: Knowledge = Field(default_factory=Knowledge)
    sessions: Sessions = Field(default_factory=Sessions)
    pii: Pii = Field(default_factory=Pii)


class Budget(Block):
    """Limits on one conversation (max_tokens) and one turn (max_iterations)."""

    max_tokens: Count = 500000
    max_output_tokens: NonNegative = 0
    max_iterations: Count = 50
    call_timeout: PositiveDuration = timedelta(seconds=120)


class Thinking(Block):
    """Extended thinking; Llm.thinking is None when the file says nothing about it."""

    enabled: bool = False


class Llm(Block):
    """The model and its settings."""

    model: Trimmed = ""
    provider: Annotated[str, AfterValidator(_provider_name)] = "anthropic"
    budget: Budget = Field(default_factory=Budget)
    thinking: Thinking | None = None
    reasoning_effort: Annotated[str, AfterValidator(_reasoning_effort)] = ""
    no_prompt_cache: bool = False
    no_tool_search: bool = False


class ContentCapture(Block):
    """Whether telemetry spans carry conversation content."""

    enabled: bool = False
    messages: Annotated[CaptureMessages, BeforeValidator(_choice(CaptureMessages))] = (
        CaptureMessages.DELTA
    )
    max_bytes: NonNegative = 0


class Telemetry(Block):
    """OpenTelemetry export; sample_ratio is None unless the file sets it (0 is a real value).

    sample_ratio's range is checked only when telemetry is enabled (see the funnel), as Go checks
    it when the exporter starts rather than when the file is read.
    """

    enabled: bool = False
    endpoint: str = ""
    service_name: str = ""
    sample_ratio: float | None = None
    no_metrics: bool = False
    capture: ContentCapture = Field(default_factory=ContentCapture)


class Config(Block):
    """The whole of agent.yaml, prepared: identity derived, defaults applied, paths resolved.

    source is the file as it was named, base_dir the directory relative paths in it resolve
    against, identity_named whether the operator wrote identity (serving requires that), and
    warnings the problems found that do not stop a run.
    """

    identity: Identity = ""
    application_path: str = ""
    nats_context: str = ""
    system_prompt: str = ""
    include: ToolFilter = Field(default_factory=ToolFilter)
    exclude: ToolFilter = Field(default_factory=ToolFilter)
    global_flags: TextList = Field(default_factory=list)
    remote_agents: list[RemoteAgent] = Field(default_factory=list)
    remote_tools: list[RemoteToolHost] = Field(default_factory=list)
    mcp_clients: list[McpClient] = Field(default_factory=list)
    expose: Expose = Field(default_factory=Expose)
    harness: Harness = Field(default_factory=Harness)
    llm: Llm = Field(default_factory=Llm)
    telemetry: Telemetry = Field(default_factory=Telemetry)

    _source: str = PrivateAttr(default="agent.yaml")
    _base_dir: Path = PrivateAttr(default_factory=Path.cwd)
    _identity_named: bool = PrivateAttr(default=False)
    _warnings: tuple[str, ...] = PrivateAttr(default=())

    @property
    def source(self) -> str:
        """The configuration file as it was named (agent.yaml when parsed from text)."""
        return self._source

    @property
    def base_dir(self) -> Path:
        """The directory a relative application_path resolves against."""
        return self._base_dir

    @property
    def identity_named(self) -> bool:
        """True only when the operator wrote identity rather than it being derived."""
        return self._identity_named

    @property
    def warnings(self) -> list[str]:
        """Problems that do not stop a run, each one sentence."""
        return list(self._warnings)
