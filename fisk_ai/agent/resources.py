"""Shared resources a host builds once for its runs: the model provider, and the bundle of
what every run of one agent shares."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from fisk_ai.errors import FiskError
from fisk_ai.llm import registry
from fisk_ai.llm.types import Provider
from fisk_ai.telemetry import DISABLED, Telemetry, TelemetrySettings
from fisk_ai.telemetry import start as start_telemetry_settings

if TYPE_CHECKING:
    # Only annotations here: importing the configuration schema (pydantic) is left to whoever
    # reads a configuration, so `fisk run` can draw its first frame without it.
    from fisk_ai import config
    from fisk_ai.agent.hooks import Hooks
    from fisk_ai.agent.prompt import SystemPrompt
    from fisk_ai.agent.settings import AgentSettings
    from fisk_ai.memory.store import MemoryStore
    from fisk_ai.sessions.store import SessionStore
    from fisk_ai.tools.toolset import ToolSet

HTTP_DEBUG_FILE = "http-debug.log"

CurrentTools: TypeAlias = "Callable[[], ToolSet]"
"""A function returning the tool set the next model call sees."""


@dataclass(frozen=True)
class MemoryAccess:
    """The memory store every run of one agent shares, and whether each run starts with the
    index of what is stored in its system prompt (``harness.memory.no_index`` turns it off)."""

    store: MemoryStore
    index: bool = True


@dataclass(frozen=True)
class Resources:
    """What every run of one agent shares, built once by whoever hosts it: the settings, the
    model, the tools (or a function returning the current set, read once per model call), the
    session store, and the system prompt's parts, hooks and memory when the agent has them;
    ``telemetry`` is the handle spans go through (the disabled one unless export is on)."""

    settings: AgentSettings
    provider: Provider
    tools: ToolSet | CurrentTools
    store: SessionStore
    system: SystemPrompt | None = None
    hooks: Hooks | None = None
    memory: MemoryAccess | None = None
    telemetry: Telemetry = DISABLED


def current_tools(resources: Resources) -> CurrentTools:
    """The function returning the tool set a model call sees."""
    tools = resources.tools
    return tools if callable(tools) else (lambda: tools)


@dataclass(frozen=True)
class ProviderOptions:
    """How to reach the model, from flags and the environment.

    ``replay`` answers from a cassette instead of ``llm.provider``; ``record`` writes every
    exchange of the chosen provider to a cassette.
    """

    api_key: str = ""
    base_url: str = ""
    http_debug: bool = False
    trace: str = ""
    record: str = ""
    replay: str = ""


def provider_name(cfg: config.Config, options: ProviderOptions) -> str:
    return "replay" if options.replay else cfg.llm.provider


def build_provider(cfg: config.Config, options: ProviderOptions) -> Provider:
    """The provider a run calls, failing now with the flag or variable to set."""
    name = provider_name(cfg, options)
    registration = registry.lookup(name)
    if name == "anthropic":
        from fisk_ai.llm.anthropic import validate_base_url

        if not options.api_key:
            raise FiskError(
                "the Anthropic API needs a key; set ANTHROPIC_API_KEY or pass --api-key "
                "(or answer from a cassette with --replay FILE)"
            )
        base_url = validate_base_url(options.base_url) if options.base_url else None
        provider: Provider = registration.factory(
            api_key=options.api_key,
            base_url=base_url,
            http_debug_path=HTTP_DEBUG_FILE if options.http_debug else None,
            trace_path=options.trace or None,
        )
    else:
        provider = registration.factory(path=options.replay or None)
    if options.record:
        from fisk_ai.llm.replay import RecordingProvider

        provider = RecordingProvider(provider, options.record)
    return provider


def start_telemetry(cfg: config.Config, *, disabled_by: str = "") -> Telemetry:
    """The telemetry handle of ``cfg``: the disabled one unless ``telemetry.enabled`` is set
    and nothing switched it off (``disabled_by`` names the switch, such as --no-telemetry).
    A bad endpoint fails here, before anything is hosted; capture is off whenever export is."""
    from fisk_ai.config import CaptureMessages

    block = cfg.telemetry
    return start_telemetry_settings(
        TelemetrySettings(
            enabled=block.enabled,
            endpoint=block.endpoint,
            service_name=block.service_name or cfg.identity,
            sample_ratio=block.sample_ratio,
            no_metrics=block.no_metrics,
            capture=block.capture.enabled,
            capture_max_bytes=block.capture.max_bytes,
            capture_full_messages=block.capture.messages is CaptureMessages.FULL,
            disabled_by=disabled_by,
        )
    )
