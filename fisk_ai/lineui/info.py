"""The `fisk info` report: what an agent would run with, as plain text or as rich tables."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Literal, TextIO

from fisk_ai.llm.anthropic import tool_search_off
from fisk_ai.tools.base import Confirmable
from fisk_ai.tools.mcp.importing import McpTool
from fisk_ai.tools.remote import RemoteTool
from fisk_ai.util.durations import format_duration
from fisk_ai.util.redact import redact_url
from fisk_ai.util.sanitize import single_line, strip_control

if TYPE_CHECKING:
    from pathlib import Path

    from fisk_ai.agent.application import ApplicationTools
    from fisk_ai.config import Config, Embeddings
    from fisk_ai.knowledge.store import Manifest
    from fisk_ai.serve.remote import RemoteImport
    from fisk_ai.tools.mcp.sessions import ServerReport
    from fisk_ai.tools.toolset import ToolSet

DESCRIPTION_LIMIT = 50
TOOL_SEARCH_THRESHOLD = 10
MEMORY_LIMITS = "64 KB per entry, 1024 entries"


@dataclass(frozen=True)
class Field:
    label: str
    value: str


@dataclass(frozen=True)
class Section:
    title: str
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class ToolRow:
    name: str
    source: str
    gate: str
    """The tag that gates the tool (``ai:confirm`` or a confirm_tags entry); empty when ungated."""
    description: str
    tags: tuple[str, ...]


@dataclass(frozen=True)
class GlobalFlagRow:
    name: str
    help: str
    exposed: bool
    required: bool

    @property
    def marker(self) -> str:
        if self.exposed and self.required:
            return "[exposed, required]"
        return "[exposed]" if self.exposed else ""


@dataclass(frozen=True)
class InfoReport:
    sections: tuple[Section, ...]
    tools: tuple[ToolRow, ...]
    global_flags: tuple[GlobalFlagRow, ...]
    prompt: str
    warnings: tuple[str, ...]
    remote_hosts: tuple[str, ...] = ()
    """One status line per remote_tools entry: its tool count, or why it is unavailable."""
    mcp_clients: tuple[str, ...] = ()
    """The MCP clients section's lines (``mcp_server_lines``)."""


TOOL_HEADERS = ("TOOL", "SOURCE", "GATE", "DESCRIPTION", "TAGS")


def info_tool_set(
    cfg: Config,
    application_tools: ApplicationTools,
    remote: RemoteImport,
    mcp_servers: Sequence[ServerReport] = (),
) -> tuple[ToolSet, str]:
    """The set a run would offer, and the collision that would fail the run among the remote
    and MCP tools: ``fisk info`` reports it and lists the rest, where a run would stop."""
    from fisk_ai.agent.application import run_tool_set
    from fisk_ai.serve.memory import unopened_memory
    from fisk_ai.tools.mcp.importing import mcp_source_label
    from fisk_ai.tools.toolset import ToolCollisionError, ToolSource

    # The memory tools are listed as a run would offer them; nothing here opens the store.
    memory = unopened_memory(cfg)
    mcp_sources = [
        ToolSource(mcp_source_label(report.entry.name), report.listing.tools)
        for report in mcp_servers
        if report.listing is not None
    ]
    try:
        return run_tool_set(cfg, application_tools, remote.hosts, memory, mcp_sources), ""
    except ToolCollisionError as exc:
        collision = str(exc)
    try:
        return run_tool_set(cfg, application_tools, memory=memory, mcp_sources=mcp_sources), (
            collision
        )
    except ToolCollisionError:
        return run_tool_set(cfg, application_tools, memory=memory), collision


def mcp_server_lines(reports: Sequence[ServerReport]) -> tuple[str, ...]:
    """The MCP clients section: per server where it is reached and over which transport, its
    answer time, tools advertised and kept, the imported names, and each tool left out and why;
    or why it is unavailable."""
    lines: list[str] = []
    for report in reports:
        entry = report.entry
        lines.append(f"{entry.name}: {report.transport.value} {report.endpoint}")
        if report.listing is None:
            lines.append(f"  unavailable: {report.unavailable}")
            continue
        listing = report.listing
        lines.append(
            f"  answered in {report.answer_seconds * 1000:.0f} ms; {listing.advertised} tools "
            f"advertised, {len(listing.tools)} kept"
        )
        if listing.tools:
            lines.append("  imported: " + ", ".join(tool.name for tool in listing.tools))
        lines += [f"  left out: {name} ({reason})" for name, reason in listing.skipped]
    return tuple(lines)


def build_report(
    cfg: Config,
    application_tools: ApplicationTools,
    tool_set: ToolSet,
    remote: RemoteImport | None = None,
    collision: str = "",
    memory_entries: str = "",
    mcp_servers: Sequence[ServerReport] = (),
) -> InfoReport:
    """The report for one configuration, the application tools it yields, the whole set a
    run would offer, and what its remote_tools hosts answered. ``memory_entries`` is what the
    memory store holds, where counting it was cheap."""
    from fisk_ai.config import FileMemoryOptions, FileSessionsOptions

    sections: list[Section] = []
    if cfg.llm.model:
        sections.append(_model_section(cfg))
    application = application_tools.application
    if application is not None:
        fields = [Field("Path", application.app_path), Field("Name", application.name)]
        if application.version:
            fields.append(Field("Version", application.version))
        fields.append(Field("Tool timeout", _timeout_text(cfg.harness.tool_timeout)))
        sections.append(Section("Application", tuple(fields)))

    sessions = cfg.harness.sessions
    session_options = sessions.backend_options
    session_fields = [Field("Backend", sessions.backend.value)]
    if isinstance(session_options, FileSessionsOptions):
        session_fields.append(Field("Directory", session_options.directory))
    else:
        session_fields.append(Field("Stream", session_options.stream))
        session_fields.append(Field("Context", cfg.nats_context or "(none)"))
    sections.append(Section("Sessions", tuple(session_fields)))

    memory = cfg.harness.memory
    if memory.enabled:
        memory_options = memory.backend_options
        memory_fields = [Field("Backend", memory.backend.value)]
        if isinstance(memory_options, FileMemoryOptions):
            memory_fields.append(Field("Directory", memory_options.directory))
        else:
            memory_fields.append(Field("Bucket", memory_options.bucket))
            memory_fields.append(Field("Context", cfg.nats_context or "(none)"))
            prefix = memory_options.prefix
            memory_fields.append(Field("Prefix", prefix if prefix else "(flat)"))
        if memory.read_only:
            memory_fields.append(Field("Access", "read-only"))
        memory_fields.append(Field("Index", "off (no_index)" if memory.no_index else "on"))
        if memory_entries:
            memory_fields.append(Field("Entries", memory_entries))
        memory_fields.append(Field("Limits", MEMORY_LIMITS))
        sections.append(Section("Memory", tuple(memory_fields)))
    sections.append(telemetry_section(cfg))

    tools = tuple(
        ToolRow(
            name=tool.name,
            source=tool.alias if isinstance(tool, RemoteTool | McpTool) else "local",
            gate=application_tools.gates.get(tool.name, ""),
            description=tool.description,
            tags=tuple(tool.tags) if isinstance(tool, Confirmable) else (),
        )
        for tool in tool_set
    )
    global_flags = tuple(
        GlobalFlagRow(name=flag.name, help=flag.help, exposed=flag.exposed, required=flag.required)
        for flag in (application.global_flags if application else ())
    )
    return InfoReport(
        sections=tuple(sections),
        tools=tools,
        global_flags=global_flags,
        prompt=cfg.system_prompt,
        warnings=(
            *application_tools.warnings,
            *(remote.warnings if remote else ()),
            *((collision,) if collision else ()),
        ),
        remote_hosts=tuple(status.line for status in (remote.statuses if remote else ())),
        mcp_clients=mcp_server_lines(mcp_servers),
    )


def telemetry_section(cfg: Config) -> Section:
    """The Telemetry section: each effective value with where it came from (file, default, or
    the environment variable that overrides the file). `fisk info` takes no --no-telemetry, so
    no value here comes from a flag."""
    from fisk_ai.telemetry import DEFAULT_ENDPOINT, TelemetrySettings, export_on, off_switch

    block = cfg.telemetry
    written = block.model_fields_set
    written_capture = block.capture.model_fields_set if "capture" in written else set()

    def origin(key: str, *, capture: bool = False) -> str:
        return "file" if key in (written_capture if capture else written) else "default"

    settings = TelemetrySettings(enabled=block.enabled)
    exporting = export_on(settings)
    switch = off_switch(settings)
    enabled = f"{str(exporting).lower()} ({f'env {switch}' if switch else origin('enabled')})"
    ratio = "1" if block.sample_ratio is None else f"{block.sample_ratio:g}"
    capture = block.capture.enabled and exporting
    capture_origin = origin("enabled", capture=True)
    if block.capture.enabled and not exporting:
        capture_origin = "file, off while export is off"
    fields = [
        Field("Enabled", enabled),
        Field(
            "Endpoint", f"{redact_url(block.endpoint or DEFAULT_ENDPOINT)} ({origin('endpoint')})"
        ),
        Field(
            "Service name",
            f"{block.service_name} (file)"
            if block.service_name
            else f"{cfg.identity} (default: the identity)",
        ),
        Field("Sample ratio", f"{ratio} ({origin('sample_ratio')})"),
        Field("Metrics", f"{'off' if block.no_metrics else 'on'} ({origin('no_metrics')})"),
        Field("Capture", f"{'on' if capture else 'off'} ({capture_origin})"),
    ]
    if capture:
        fields.append(
            Field(
                "Capture messages",
                f"{block.capture.messages.value} ({origin('messages', capture=True)})",
            )
        )
        limit = block.capture.max_bytes
        fields.append(
            Field(
                "Capture max bytes",
                f"{limit or 'unlimited'} ({origin('max_bytes', capture=True)})",
            )
        )
    return Section("Telemetry", tuple(fields))


def _model_section(cfg: Config) -> Section:
    llm = cfg.llm
    if llm.thinking is None:
        thinking = "not set (the provider's default)"
    else:
        thinking = "enabled" if llm.thinking.enabled else "disabled"
    # Every provider fisk ships offers tool search: what is left is the setting and the model.
    off = tool_search_off(supported=True, disabled=llm.no_tool_search, model=llm.model)
    if llm.no_tool_search:
        tool_search = "disabled (no_tool_search)"
    elif off is not None:
        tool_search = f"unavailable ({off.reason})"
    else:
        tool_search = f"enabled (used when {TOOL_SEARCH_THRESHOLD} or more tools are available)"
    budget = llm.budget
    fields = [
        Field("Model", llm.model),
        Field("Provider", llm.provider),
        Field("Thinking", thinking),
    ]
    if llm.reasoning_effort:
        fields.append(Field("Reasoning effort", llm.reasoning_effort))
    fields += [
        Field("Tool search", tool_search),
        Field(
            "Budget",
            f"{budget.max_tokens} tokens per conversation, {budget.max_iterations} "
            f"iterations per turn, {format_duration(budget.call_timeout)} per model call",
        ),
    ]
    return Section("Model", tuple(fields))


def _timeout_text(timeout: timedelta) -> str:
    return format_duration(timeout) if timeout else "none"


def tool_cells(row: ToolRow) -> tuple[str, str, str, str, str]:
    return (
        single_line(row.name),
        single_line(row.source),
        single_line(row.gate),
        single_line(row.description, DESCRIPTION_LIMIT),
        single_line(", ".join(row.tags)),
    )


def render_plain(report: InfoReport) -> str:
    """The report as plain text: no escape sequences, stable for pipes and diffs."""
    blocks = [_plain_section(section) for section in report.sections]
    blocks.append(_plain_tools(report.tools))
    if report.remote_hosts:
        blocks.append(
            "Remote tool hosts:\n"
            + "\n".join(f"  {single_line(line)}" for line in report.remote_hosts)
        )
    if report.mcp_clients:
        blocks.append(
            "MCP clients:\n" + "\n".join(f"  {single_line(line)}" for line in report.mcp_clients)
        )
    if report.global_flags:
        blocks.append(_plain_global_flags(report.global_flags))
    blocks.append(_plain_prompt(report.prompt))
    if report.warnings:
        blocks.append(
            "Warnings:\n" + "\n".join(f"  warning: {single_line(w)}" for w in report.warnings)
        )
    return "\n\n".join(blocks) + "\n"


def _plain_section(section: Section) -> str:
    width = max(len(field.label) for field in section.fields)
    lines = [f"{section.title}:"]
    lines += [f"  {field.label:>{width}}: {single_line(field.value)}" for field in section.fields]
    return "\n".join(lines)


def _plain_tools(tools: tuple[ToolRow, ...]) -> str:
    if not tools:
        return "Tools:\n  (no tools)"
    rows = [TOOL_HEADERS, *(tool_cells(row) for row in tools)]
    widths = [max(len(row[column]) for row in rows) for column in range(len(TOOL_HEADERS))]
    lines = ["Tools:"]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=True)]
        lines.append(("  " + "  ".join(cells)).rstrip())
    return "\n".join(lines)


def _plain_global_flags(flags: tuple[GlobalFlagRow, ...]) -> str:
    names = [f"--{single_line(flag.name)}" for flag in flags]
    helps = [single_line(flag.help) for flag in flags]
    name_width = max(len(name) for name in names)
    help_width = max(len(text) for text in helps)
    lines = ["Global flags:"]
    for name, text, flag in zip(names, helps, flags, strict=True):
        lines.append(f"  {name:<{name_width}}  {text:<{help_width}}  {flag.marker}".rstrip())
    return "\n".join(lines)


def _plain_prompt(prompt: str) -> str:
    if not prompt.strip():
        return "Prompt:\n\n  (no system prompt)"
    body = "\n".join(f"  {line}".rstrip() for line in strip_control(prompt).strip().splitlines())
    return f"Prompt:\n\n{body}"


def print_rich(report: InfoReport, file: TextIO) -> None:
    """The report for a terminal: rounded tables, every untrusted string rendered as plain text."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=file, highlight=False)
    for section in report.sections:
        grid = Table.grid(padding=(0, 1))
        grid.add_column(justify="right", style="bold")
        grid.add_column()
        for field in section.fields:
            grid.add_row(Text(field.label + ":"), Text(single_line(field.value)))
        console.print(Text(f"{section.title}:", style="bold underline"))
        console.print(grid)
        console.print()

    table = Table(box=box.ROUNDED, header_style="bold")
    for header in TOOL_HEADERS:
        table.add_column(header, overflow="fold")
    for row in report.tools:
        name, source, gate, description, tags = tool_cells(row)
        table.add_row(
            Text(name), Text(source), Text(gate, style="yellow"), Text(description), Text(tags)
        )
    console.print(Text("Tools:", style="bold underline"))
    console.print(table if report.tools else Text("  (no tools)"))
    console.print()

    for title, lines in (
        ("Remote tool hosts:", report.remote_hosts),
        ("MCP clients:", report.mcp_clients),
    ):
        if lines:
            console.print(Text(title, style="bold underline"))
            for line in lines:
                console.print(Text("  " + single_line(line)))
            console.print()

    if report.global_flags:
        console.print(Text("Global flags:", style="bold underline"))
        flags = Table.grid(padding=(0, 2))
        flags.add_column(style="bold")
        flags.add_column()
        flags.add_column(style="green")
        for flag in report.global_flags:
            flags.add_row(
                Text(f"--{single_line(flag.name)}"), Text(single_line(flag.help)), Text(flag.marker)
            )
        console.print(flags)
        console.print()

    console.print(Text("Prompt:", style="bold underline"))
    console.print()
    prompt = strip_control(report.prompt).strip() or "(no system prompt)"
    for line in prompt.splitlines():
        console.print(Text("  " + line))
    if report.warnings:
        console.print()
    for warning in report.warnings:
        console.print(Text(f"warning: {single_line(warning)}", style="yellow"))


async def knowledge_section(cfg: Config) -> Section | None:
    """The Knowledge section as the index really is: where it lives, what it indexes, whether
    it is built and what it holds, and the tier that answers (hybrid with an embeddings block,
    lexical without). None with knowledge off."""
    import asyncio

    from fisk_ai.knowledge.access import knowledge_directory

    knowledge = cfg.harness.knowledge
    if not knowledge.enabled:
        return None
    directory = knowledge_directory(cfg)
    state, manifest = await asyncio.to_thread(_knowledge_index_state, directory)
    fields = [
        Field("Directory", str(directory)),
        Field("Paths", ", ".join(knowledge.paths) or "(none)"),
        Field("Index", state),
        Field(
            "Tier",
            "lexical (FTS5)" if knowledge.embeddings is None else "hybrid (FTS5 + vectors, RRF)",
        ),
        Field("Results", f"top {knowledge.top_k}, at most {knowledge.max_injected_tokens} tokens"),
    ]
    if knowledge.embeddings is not None:
        fields.append(Field("Embeddings", _embedder_label(knowledge.embeddings)))
    # Shown for a built index with vectors, or one the configuration expects vectors in.
    if manifest is not False and (manifest is not None or knowledge.embeddings is not None):
        fields.append(Field("Manifest", _manifest_label(manifest, knowledge.embeddings)))
    return Section("Knowledge", tuple(fields))


def _embedder_label(settings: Embeddings) -> str:
    from fisk_ai.config import EmbeddingsProvider

    if settings.provider is EmbeddingsProvider.LOCAL:
        return f"{settings.model}, in-process (provider: local)"
    return f"{settings.model} at {redact_url(settings.base_url)}"


def _manifest_label(manifest: Manifest | None, settings: Embeddings | None) -> str:
    """What the built index's vectors were made with, and whether that is what the
    configuration asks for (a search of a mismatched index is refused)."""
    from fisk_ai.knowledge.embeddings import manifest_model

    if manifest is None:
        return "none: indexed lexical-only"
    held = f"model={manifest.model} dim={manifest.dimension}"
    if settings is not None and manifest_model(settings) != manifest.model:
        return (
            f"{held}, not the configured {manifest_model(settings)}; rebuild with "
            "fisk knowledge index --reindex"
        )
    return held


def _knowledge_index_state(directory: Path) -> tuple[str, Manifest | Literal[False] | None]:
    """The index's state line and its embeddings manifest (None for a lexical index, False
    when no index could be read)."""
    from fisk_ai.knowledge import KnowledgeError
    from fisk_ai.knowledge.search import counts
    from fisk_ai.knowledge.store import KnowledgeReader, database_error, read_manifest

    reader = KnowledgeReader(directory)
    try:
        if not reader.open():
            return "not built (fisk knowledge index builds it)", False
        with reader.use() as connection:
            held = counts(connection)
            manifest = read_manifest(connection)
    except KnowledgeError as exc:
        return f"unusable: {exc}", False
    except database_error() as exc:
        return f"unreadable ({exc})", False
    finally:
        reader.close()
    return f"built, {held.documents} documents, {held.chunks} chunks", manifest


def a2a_http_section(cfg: Config) -> Section | None:
    """The A2A HTTP endpoint as `fisk serve` would run it: where it listens, the URL its card
    gives, and whether calls need a token; or why it would not run. None without the block."""
    from fisk_ai.config.funnel import is_loopback_address

    http = cfg.expose.agent.a2a_http
    if http is None:
        return None
    a2a = cfg.expose.agent.a2a
    if a2a is None or a2a.prompts is None:
        return Section(
            "A2A HTTP",
            (Field("Served", "no: fisk serve refuses it without expose.agent.a2a.prompts"),),
        )
    port = str(http.port) if http.port else "any free port"
    if http.token_env:
        auth = f"bearer token from {http.token_env}"
    elif is_loopback_address(http.address):
        auth = "none (loopback only)"
    else:
        auth = "none: anyone reaching the address runs the agent"
    fields = [
        Field("Served", "yes, by fisk serve beside a2a/prompts"),
        Field("Listen", f"{http.address}, {port}"),
        Field(
            "Card URL", redact_url(http.public_url) if http.public_url else "(the bound address)"
        ),
        Field("Auth", auth),
        Field(
            "Questions",
            "input-required, answered by the next message"
            if a2a.prompts.elicit
            else "none asked: gated commands are refused (expose.agent.a2a.prompts.elicit)",
        ),
    ]
    return Section("A2A HTTP", tuple(fields))


def with_section(report: InfoReport, section: Section | None) -> InfoReport:
    """``report`` with ``section`` after its others (a Knowledge section follows Memory)."""
    if section is None:
        return report
    return dataclasses.replace(report, sections=(*report.sections, section))


async def count_memories(cfg: Config) -> str:
    """How many memories the file backend holds, or why they could not be counted; "" for a
    backend that counting would mean connecting to (jetstream), or with memory off."""
    from pathlib import Path

    from fisk_ai.config import FileMemoryOptions
    from fisk_ai.memory import MemoryStoreError
    from fisk_ai.memory.file import FileMemoryStore

    memory = cfg.harness.memory
    options = memory.backend_options
    if not memory.enabled or not isinstance(options, FileMemoryOptions):
        return ""
    try:
        items = await FileMemoryStore(Path(options.directory)).list()
    except MemoryStoreError as exc:
        return f"unreadable ({exc})"
    return str(len(items))
