"""Shared pieces of the agent tests: a real file session store, a fake fisk application's
command tools, in-process tools that record their calls, and a runner wired from them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.agent.events import EventSink
from fisk_ai.agent.hooks import Hooks
from fisk_ai.agent.resources import Resources
from fisk_ai.agent.runner import Runner
from fisk_ai.agent.settings import AgentSettings
from fisk_ai.llm.types import Provider, ToolDef
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.fold import Conversation, fold
from fisk_ai.sessions.records import Record
from fisk_ai.tools.base import ExecDeps, Kind, Outcome, Presentation, Tool
from fisk_ai.tools.fiskapp.loader import load_application
from fisk_ai.tools.fiskapp.model import ApplicationModel
from fisk_ai.tools.questions import Prompter
from fisk_ai.tools.toolset import ToolSet, ToolSource
from tests.fakes.events import RecordingSink
from tests.fakes.fiskapp import application, arg, command, flag, write_fake_app

Handler = Callable[[str, ExecDeps], Awaitable[Outcome]]

OPEN_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}


async def _ok(arguments: str, deps: ExecDeps) -> Outcome:
    return Outcome(f"ran with {arguments}")


@dataclass(eq=False)
class FakeTool:
    """An in-process tool that records every call it executes."""

    name: str
    handler: Handler = _ok
    input_schema: Mapping[str, Any] = field(default_factory=lambda: dict(OPEN_SCHEMA))
    kind: Kind = Kind.CUSTOM
    tags: tuple[str, ...] = ()
    executed: list[str] = field(default_factory=list)
    deps_seen: list[ExecDeps] = field(default_factory=list)

    @property
    def description(self) -> str:
        return f"the {self.name} tool"

    @property
    def model_description(self) -> str:
        return self.description

    @property
    def presentation(self) -> Presentation:
        return Presentation.TRACED

    @property
    def mcp_exposable(self) -> bool:
        return False

    @property
    def a2a_exposable(self) -> bool:
        return False

    def definition(self, defer_loading: bool) -> ToolDef:
        return ToolDef(self.name, self.description, self.input_schema, defer_loading)

    async def execute(self, arguments: str, deps: ExecDeps) -> Outcome:
        self.executed.append(arguments)
        self.deps_seen.append(deps)
        return await self.handler(arguments, deps)


def toolset(*tools: Tool, label: str = "test") -> ToolSet:
    return ToolSet([ToolSource(label, tools)])


def ops_model() -> dict[str, Any]:
    """A small application: ``status`` (free), ``stream rm`` (ai:confirm), ``cache purge``
    (tagged impact:rw, gated only through confirm_tags)."""
    return application(
        "ops",
        commands=[
            command("status", "Show status", tags=["ai:read_only"]),
            command(
                "stream",
                "Streams",
                commands=[
                    command(
                        "rm",
                        "Remove a stream",
                        tags=["ai:confirm"],
                        flags=[flag("force", "Do not prompt", boolean=True)],
                        args=[arg("stream", "Stream name", required=True)],
                    )
                ],
            ),
            command("cache", "Caches", commands=[command("purge", "Purge", tags=["impact:rw"])]),
        ],
    )


@pytest.fixture
def app_tools(tmp_path: Path) -> tuple[Tool, ...]:
    path = write_fake_app(tmp_path, ops_model(), name="ops")
    loaded = load_application(ApplicationModel.model_validate(ops_model()), str(path))
    return tuple(loaded.tools)


@pytest.fixture
def store(tmp_path: Path) -> FileSessionStore:
    return FileSessionStore(tmp_path / "runs")


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()


SETTINGS = AgentSettings(model="test-model", max_iterations=10, max_tokens=100_000)


def make_runner(
    *,
    provider: Provider,
    tools: ToolSet | Callable[[], ToolSet],
    store: FileSessionStore,
    events: EventSink,
    settings: AgentSettings = SETTINGS,
    prompter: Prompter | None = None,
    hooks: Hooks | None = None,
    suspend: asyncio.Event | None = None,
) -> Runner:
    return Runner(
        Resources(settings, provider, tools, store, hooks=hooks),
        events=events,
        prompter=prompter,
        suspend=suspend,
    )


async def journal(store: FileSessionStore, session_id: str) -> list[Record]:
    return await store.read(session_id)


async def folded(store: FileSessionStore, session_id: str) -> Conversation:
    return fold(await store.read(session_id))


def payloads(records: Sequence[Record]) -> list[Any]:
    return [record.payload for record in records]
