"""The startup banner of `fisk serve`: what is served, where, and with which limits, in the
user guide's layout. Each row says what the process started, never what was merely configured.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fisk_ai.config import Config, SlackExposure
    from fisk_ai.serve.a2a_http.hosting import A2aHttpEndpoint
    from fisk_ai.serve.jobs.channel import JobsChannel
    from fisk_ai.serve.prompts.intake import PromptsChannel
    from fisk_ai.serve.tools import ServedSelection, ToolsServer

__all__ = [
    "JOBS_TOOL_NOTE",
    "PROMPTS_TOOL_NOTE",
    "SLACK_TOOL_NOTE",
    "Started",
    "answers_a2a_http",
    "answers_prompts",
    "answers_slack",
    "banner",
    "knowledge_label",
    "reaches_nats",
    "runs_agent",
    "serves_tools",
    "sessions_label",
    "stores_reach_nats",
    "takes_jobs",
]

PROMPTS_TOOL_NOTE = (
    "Answering a prompt runs the agent loop and reaches every tool the top-level include and "
    "exclude selected."
)
JOBS_TOOL_NOTE = (
    "Each job taken runs the agent loop on the prompt it carries and reaches every tool the "
    "top-level include and exclude selected."
)
SLACK_TOOL_NOTE = (
    "A mention of the bot runs the agent loop on its thread and reaches every tool the "
    "top-level include and exclude selected."
)

_Rows = list[tuple[str, list[str]]]


def answers_prompts(cfg: Config) -> bool:
    a2a = cfg.expose.agent.a2a
    return a2a is not None and a2a.prompts is not None


def answers_a2a_http(cfg: Config) -> bool:
    return cfg.expose.agent.a2a_http is not None and answers_prompts(cfg)


def takes_jobs(cfg: Config) -> bool:
    return cfg.expose.agent.jobs is not None


def answers_slack(cfg: Config) -> bool:
    return cfg.expose.agent.slack is not None


def runs_agent(cfg: Config) -> bool:
    """Whether a channel of ``cfg`` runs the agent loop, and so needs the provider."""
    return answers_prompts(cfg) or takes_jobs(cfg) or answers_slack(cfg)


def serves_tools(cfg: Config) -> bool:
    a2a = cfg.expose.agent.a2a
    return a2a is not None and a2a.serve_tools


def reaches_nats(cfg: Config) -> bool:
    """Whether something `fisk serve` runs for ``cfg`` reaches NATS: the a2a endpoints, the
    queue, remote_tools, or a session or memory backend that declared it needs NATS (the
    JetStream ones). Only then does the process connect to the agent's NATS context, so a Slack
    bot keeping its sessions in files needs none."""
    return (
        answers_prompts(cfg)
        or serves_tools(cfg)
        or takes_jobs(cfg)
        or bool(cfg.remote_tools)
        or stores_reach_nats(cfg)
    )


def stores_reach_nats(cfg: Config) -> bool:
    """Whether the session backend, or the memory backend when memory is on, is one that
    registered as needing NATS; the registry answers, so a new backend needs no change here."""
    from fisk_ai.memory.backends import backend_requires_nats as memory_requires_nats
    from fisk_ai.sessions.backends import backend_requires_nats as sessions_require_nats

    harness = cfg.harness
    memory = harness.memory
    return sessions_require_nats(harness.sessions.backend.value) or (
        memory.enabled and memory_requires_nats(memory.backend.value)
    )


@dataclass(frozen=True)
class Started:
    """What the process started, as the banner reports it: the prompts channel, the tool
    server with its selection, the jobs channel and whether --workers sized it, whether the
    started telemetry handle exports, and the directory command tools run in (None: this one,
    shown only where a channel runs the agent loop), and the A2A HTTP endpoint."""

    version: str
    prompts: PromptsChannel | None = None
    tools: tuple[ToolsServer, ServedSelection] | None = None
    jobs: tuple[JobsChannel, bool] | None = None
    telemetry: bool = False
    work_dir: Path | None = None
    a2a_http: A2aHttpEndpoint | None = None


def banner(cfg: Config, started: Started) -> str:
    """The startup banner. Slack is listed because the banner is printed only once every
    configured channel is open."""
    from fisk_ai.util.durations import format_duration

    queue = started.jobs[0] if started.jobs is not None else None
    prompts = started.prompts
    endpoints = (
        ([queue.name] if queue is not None else [])
        + (["a2a/prompts"] if prompts is not None else [])
        + (["a2a"] if started.tools is not None else [])
        + (["a2a/http"] if started.a2a_http is not None else [])
        + (["slack"] if answers_slack(cfg) else [])
    )
    runs = prompts is not None or queue is not None or answers_slack(cfg)
    top: _Rows = [("Endpoints", endpoints)]
    if runs:
        top.append(("Model", [cfg.llm.model]))
    top += _context_rows(cfg, jobs=queue is not None)
    if runs:
        top += _run_rows(cfg)
    top.append(("Telemetry", ["enabled" if started.telemetry else "disabled"]))
    if runs or started.work_dir is not None:
        # A run's commands start here; the guide prints it for every channel that runs one.
        top.append(("Tool Directory", [str(started.work_dir or Path.cwd())]))
    if runs:
        top.append(("Tool Timeout", [format_duration(cfg.harness.tool_timeout)]))
    sections: list[tuple[str, _Rows, str]] = []
    if started.jobs is not None:
        channel, from_flag = started.jobs
        source = "--workers" if from_flag else "config"
        top.append(("Queue Workers", [f"{channel.options.workers} ({source})"]))
        sections.append(("Taking queued jobs", _jobs_rows(channel), JOBS_TOOL_NOTE))
    if prompts is not None:
        sections.append(("Answering prompts over a2a", _prompts_rows(cfg), PROMPTS_TOOL_NOTE))
    if started.tools is not None:
        sections.append(("Serving tools over a2a", _tools_rows(cfg, *started.tools), ""))
    if started.a2a_http is not None:
        sections.append(("Answering A2A 1.0 over HTTP", _a2a_http_rows(cfg, started.a2a_http), ""))
    if cfg.expose.agent.slack is not None:
        sections.append(
            ("Answering in Slack", _slack_rows(cfg.expose.agent.slack), SLACK_TOOL_NOTE)
        )
    width = 4 + max(
        len(label) for label, _ in [*top, *(row for _, rows, _ in sections for row in rows)]
    )
    lines = [f"Serving {cfg.identity}/{started.version}:", ""]
    lines += _rows(top, indent="", width=width)
    for title, rows, note in sections:
        lines += ["", f"  {title}:", ""]
        lines += _rows(rows, indent="  ", width=width)
        if note:
            lines.append(f"    {note}")
    return "\n".join(lines) + "\n"


def _run_rows(cfg: Config) -> _Rows:
    """The stores every run shares; memory only when it is on, as the guide's banners print."""
    from fisk_ai.serve.memory import memory_location

    rows: _Rows = [("Sessions", [sessions_label(cfg)])]
    if cfg.harness.memory.enabled:
        rows.append(("Memory", [memory_location(cfg)]))
    rows.append(("Knowledge", [knowledge_label(cfg)]))
    if cfg.mcp_clients:
        from fisk_ai.tools.mcp.sessions import server_endpoint

        rows.append(
            (
                "MCP Servers",
                [f"{entry.name} ({server_endpoint(entry)})" for entry in cfg.mcp_clients],
            )
        )
    return rows


def knowledge_label(cfg: Config) -> str:
    """Knowledge as the banner names it: disabled, or the tier it searches (lexical, or hybrid
    with its embeddings model) over its directory. A search whose embedder does not answer
    falls back to the lexical tier and says so in its result."""
    if not cfg.harness.knowledge.enabled:
        return "disabled"
    from fisk_ai.knowledge.access import knowledge_directory

    embeddings = cfg.harness.knowledge.embeddings
    tier = "lexical" if embeddings is None else f"hybrid with {embeddings.model}"
    return f"enabled, {tier} ({knowledge_directory(cfg)})"


def sessions_label(cfg: Config) -> str:
    """The session backend as the banner names it, with the options that say where it keeps
    the sessions: ``jetstream (FISK_SESSIONS)``. A directory is left out, as the guide's
    ``file`` row has it, since ``--state-dir`` may move it."""
    sessions = cfg.harness.sessions
    options = sessions.backend_options.model_dump()
    where = [str(value) for key, value in options.items() if key != "directory" and value]
    name = sessions.backend.value
    return f"{name} ({', '.join(where)})" if where else name


def _context_rows(cfg: Config, *, jobs: bool) -> _Rows:
    """The NATS contexts: the queue's when jobs are taken, and the agent's when the process
    reaches NATS through it and it is not the queue's."""
    queue = cfg.expose.agent.jobs
    # An unnamed queue context is the agent's own.
    queue_context = (queue.nats_context or cfg.nats_context) if queue is not None else ""
    rows: _Rows = []
    if jobs:
        rows.append(("Queue Context", [queue_context]))
    if reaches_nats(cfg) and not (jobs and queue_context == cfg.nats_context):
        rows.append(("Agent Context", [cfg.nats_context]))
    return rows


def _jobs_rows(jobs: JobsChannel) -> _Rows:
    from fisk_ai.serve.jobs.wire import queue_stream
    from fisk_ai.util.durations import format_duration

    settings = jobs.settings
    return [
        ("Queue", [f"{jobs.options.queue} (stream {queue_stream(jobs.options.queue)})"]),
        ("Task Type", [jobs.options.task_type]),
        ("Run Time", [format_duration(settings.run_time)]),
        ("Tries", [str(settings.tries) if settings.tries > 0 else "unlimited"]),
        ("Concurrency", [str(settings.concurrency)]),
    ]


def _prompts_rows(cfg: Config) -> _Rows:
    from fisk_ai.a2a.transport import SUBJECT_PREFIX, task_subject

    a2a = cfg.expose.agent.a2a
    assert a2a is not None and a2a.prompts is not None
    return [
        ("Requests", [task_subject(cfg.identity)]),
        ("Cancels", [f"{SUBJECT_PREFIX}.cancel.{cfg.identity}.*"]),
        ("Workers", [str(a2a.prompts.workers)]),
    ]


def _a2a_http_rows(cfg: Config, endpoint: A2aHttpEndpoint) -> _Rows:
    from fisk_ai.util.redact import redact_url

    http = cfg.expose.agent.a2a_http
    assert http is not None
    auth = f"bearer token from {http.token_env}" if endpoint.bearer else "none"
    return [
        ("Listening", [endpoint.listening]),
        ("URL", [redact_url(endpoint.url)]),
        ("Agent Card", [redact_url(endpoint.card_url)]),
        ("Auth", [auth]),
    ]


def _slack_rows(slack: SlackExposure) -> _Rows:
    from fisk_ai.util.durations import format_duration

    return [
        ("Workers", [str(slack.workers)]),
        ("Progress", ["disabled" if slack.no_progress else "enabled"]),
        ("Answer Grace", [format_duration(slack.answer_grace)]),
    ]


def _tools_rows(cfg: Config, server: ToolsServer, selection: ServedSelection) -> _Rows:
    from fisk_ai.util.durations import format_duration

    a2a = cfg.expose.agent.a2a
    assert a2a is not None
    rows: _Rows = [
        ("Discovery", [server.discovery_subject]),
        ("Tools", [server.tool_subject]),
        ("Concurrency", [str(a2a.max_concurrent_tools)]),
        ("Tool Timeout", [format_duration(a2a.tool_timeout)]),
        ("Exposed", list(server.tool_names) or ["none"]),
    ]
    if selection.withheld:
        rows.append(("Withheld", list(selection.withheld)))
    return rows


def _rows(rows: _Rows, *, indent: str, width: int) -> list[str]:
    lines: list[str] = []
    for label, values in rows:
        first, *rest = values
        lines.append(f"{indent}{label.rjust(width)}: {first}")
        lines += [f"{indent}{' ' * (width + 2)}{value}" for value in rest]
    return lines
