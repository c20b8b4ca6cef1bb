"""The wrapped application's tools under a configuration: introspect, select, gate, warn.

A run and `fisk info` assemble the application's tools the same way, so the assembly lives here
rather than in either command.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fisk_ai import config
from fisk_ai.agent.prompt import SystemPrompt, knowledge_note, memory_note
from fisk_ai.memory import MemoryStore
from fisk_ai.tools.builtin.hitl import hitl_source
from fisk_ai.tools.builtin.knowledge import knowledge_source
from fisk_ai.tools.builtin.memory import memory_source
from fisk_ai.tools.fiskapp.introspect import introspect
from fisk_ai.tools.fiskapp.loader import LoadedApplication, load_application
from fisk_ai.tools.gating import confirm_trigger, unmatched_confirm_tags
from fisk_ai.tools.remote import RemoteHost, name_remote_tools
from fisk_ai.tools.selection import ToolFilter
from fisk_ai.tools.toolset import ToolSet, ToolSource

if TYPE_CHECKING:
    from fisk_ai.knowledge.access import KnowledgeIndex
    from fisk_ai.tools.mcp.sessions import McpSessions


@dataclass(frozen=True)
class ApplicationTools:
    """What the wrapped application contributes to a run.

    ``gates`` maps each gated tool's name to the tag that gates it. ``application`` is None when
    the configuration wraps no application.
    """

    application: LoadedApplication | None
    gates: Mapping[str, str]
    warnings: tuple[str, ...]


def tool_filter(block: config.ToolFilter) -> ToolFilter:
    """The tools layer's filter for an include or exclude block of agent.yaml."""
    return ToolFilter(tools=tuple(block.tools), tags=tuple(block.tags))


def operator_secret_env_names(cfg: config.Config) -> tuple[str, ...]:
    """Variables the operator named as secrets in agent.yaml, scrubbed from every tool."""
    embeddings = cfg.harness.knowledge.embeddings
    return (embeddings.api_key_env,) if embeddings and embeddings.api_key_env else ()


async def load_application_tools(cfg: config.Config) -> ApplicationTools:
    """Introspect ``cfg.application_path`` and derive its tools, gates and warnings."""
    warnings = list(cfg.warnings)
    if not cfg.application_path:
        return ApplicationTools(application=None, gates={}, warnings=tuple(warnings))

    model = await introspect(
        cfg.application_path, extra_secret_names=operator_secret_env_names(cfg)
    )
    application = load_application(
        model,
        cfg.application_path,
        include=tool_filter(cfg.include),
        exclude=tool_filter(cfg.exclude),
        global_flags=cfg.global_flags,
        secret_env_names=operator_secret_env_names(cfg),
    )
    confirm_tags = cfg.harness.confirm_tags
    gates: dict[str, str] = {}
    for tool in application.tools:
        trigger = confirm_trigger(tool.tags, confirm_tags)
        if trigger is not None:
            gates[tool.name] = trigger
    warnings += application.warnings
    warnings += [
        f'harness.confirm_tags entry "{tag}" matches no loaded tool, so it gates nothing'
        for tag in unmatched_confirm_tags(confirm_tags, application.tools)
    ]
    return ApplicationTools(application=application, gates=gates, warnings=tuple(warnings))


def run_tool_set(
    cfg: config.Config,
    application_tools: ApplicationTools,
    remote_hosts: Sequence[RemoteHost] = (),
    memory: MemoryStore | None = None,
    mcp_sources: Sequence[ToolSource] = (),
    knowledge: KnowledgeIndex | None = None,
) -> ToolSet:
    """Every tool a run under ``cfg`` offers, in the fixed assembly order: the application's
    commands, then the human-in-the-loop tools, then the memory tools over ``memory`` (required
    when harness.memory is enabled), then the knowledge tools over ``knowledge`` (a host passes
    the index it opened; without one, an index over harness.knowledge.directory that opens
    nothing until searched), then the tools of ``remote_hosts`` (named against everything before
    them), then the tools imported from MCP servers (``mcp_sources``). A name collision aborts,
    naming both."""
    sources: list[ToolSource] = []
    application = application_tools.application
    if application is not None:
        sources.append(ToolSource(f"application_path {application.app_path}", application.tools))
    if cfg.harness.human_in_the_loop.enabled:
        sources.append(hitl_source())
    if cfg.harness.memory.enabled:
        if memory is None:
            raise ValueError("harness.memory is enabled, so the run's tool set needs its store")
        sources.append(memory_source(memory, read_only=cfg.harness.memory.read_only))
    settings = cfg.harness.knowledge
    if settings.enabled:
        if knowledge is None:
            from fisk_ai.knowledge.access import KnowledgeIndex, knowledge_directory

            knowledge = KnowledgeIndex(knowledge_directory(cfg), settings.embeddings)
        sources.append(
            knowledge_source(
                knowledge, top_k=settings.top_k, max_injected_tokens=settings.max_injected_tokens
            )
        )
    if remote_hosts:
        taken = {tool.name for source in sources for tool in source.tools}
        sources += name_remote_tools(remote_hosts, taken)
    sources += mcp_sources
    return ToolSet(sources)


def live_tool_set(
    cfg: config.Config,
    application_tools: ApplicationTools,
    remote_hosts: Sequence[RemoteHost] = (),
    memory: MemoryStore | None = None,
    mcp: McpSessions | None = None,
    knowledge: KnowledgeIndex | None = None,
) -> ToolSet | Callable[[], ToolSet]:
    """The run's tools as ``run_tool_set`` assembles them, failing now on a collision. With MCP
    sessions whose servers may change their lists, a function returning the current set
    instead: it is rebuilt only when a listing changed, and a re-listed tool whose name another
    source holds was already left out (and reported) by the sessions."""
    first = run_tool_set(
        cfg,
        application_tools,
        remote_hosts,
        memory,
        mcp.sources() if mcp else (),
        knowledge=knowledge,
    )
    if mcp is None or not mcp.connections:
        return first
    mcp_names = {tool.name for tool in mcp.tools}
    mcp.reserve([name for name in first.names if name not in mcp_names])
    current = {"generation": mcp.generation, "tools": first}

    def tools() -> ToolSet:
        if current["generation"] != mcp.generation:
            current["generation"] = mcp.generation
            current["tools"] = run_tool_set(
                cfg, application_tools, remote_hosts, memory, mcp.sources(), knowledge=knowledge
            )
        tool_set = current["tools"]
        assert isinstance(tool_set, ToolSet)
        return tool_set

    return tools


def run_system_prompt(cfg: config.Config) -> SystemPrompt:
    """The parts of the system prompt that are the same for every run of ``cfg``: the
    operator's prompt and the memory and knowledge notes. The memory index is the runner's,
    taken as each run starts."""
    memory = cfg.harness.memory
    note = memory_note(read_only=memory.read_only) if memory.enabled else ""
    knowledge = knowledge_note() if cfg.harness.knowledge.enabled else ""
    return SystemPrompt(system_prompt=cfg.system_prompt, memory_note=note, knowledge_note=knowledge)
