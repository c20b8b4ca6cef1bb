"""A FiskApp talking a2a to a hosted prompts engine: a scripted provider, a fake fisk
application's command tools (``stream rm`` is gated by ai:confirm) and a file session store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from textual.message import Message
from textual.pilot import Pilot

from fisk_ai.a2a.conversation import AgentConversation
from fisk_ai.a2a.in_process import InProcessBroker
from fisk_ai.agent.resources import Resources
from fisk_ai.agent.settings import AgentSettings
from fisk_ai.llm.types import Provider
from fisk_ai.serve.prompts import LOCAL, ConversationNaming, PromptsOptions, PromptsServer
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.tools.fiskapp.loader import load_application
from fisk_ai.tools.fiskapp.model import ApplicationModel
from fisk_ai.tools.toolset import ToolSet, ToolSource
from fisk_ai.tui.bridge import RunBridge
from fisk_ai.tui.setup import RunSetup, ToolRow
from fisk_ai.workstation import app as app_module
from fisk_ai.workstation.app import FiskApp
from tests.fakes.fiskapp import application, arg, command, write_fake_app
from tests.fakes.provider import Reply, ScriptedProvider
from tests.patience import DEADLINE_DELTA
from tests.tui.settle import SteadyCursors, pinned

SIZE = (100, 30)
SETTINGS = AgentSettings(model="test-model", max_iterations=10, interactive=True)


def ops_model() -> dict[str, Any]:
    return application(
        "ops",
        commands=[
            command("status", "Show status", tags=["ai:read_only"]),
            command("say", "Say words", args=[arg("words", "What to say", required=True)]),
            command(
                "stream",
                "Streams",
                commands=[
                    command(
                        "rm",
                        "Remove a stream",
                        tags=["ai:confirm"],
                        args=[arg("stream", "Stream name", required=True)],
                    )
                ],
            ),
        ],
    )


def ops_tools(directory: Path) -> ToolSet:
    path = write_fake_app(directory, ops_model(), name="ops")
    loaded = load_application(ApplicationModel.model_validate(ops_model()), str(path))
    return ToolSet([ToolSource("ops", loaded.tools)])


class HostedAgent:
    """The prompts engine a local run hosts, on an in-memory transport, and the terminal's
    conversation with it: the same a2a path `fisk run` takes, without a broker process."""

    def __init__(
        self, tmp_path: Path, provider: Provider, bridge: RunBridge, naming: ConversationNaming
    ) -> None:
        self.broker = InProcessBroker()
        self.store = FileSessionStore(tmp_path / "runs")
        self.tools = ops_tools(tmp_path)
        self.server = PromptsServer(
            self.broker.connect(),
            Resources(SETTINGS, provider, self.tools, self.store),
            PromptsOptions(
                identity="ops-agent",
                workers=1,
                request_timeout=DEADLINE_DELTA,
                elicit=True,
                naming=naming,
            ),
        )
        self.conversation = AgentConversation(
            self.broker.connect(),
            "ops-agent",
            request_timeout=DEADLINE_DELTA,
            events=bridge,
            prompter=bridge,
        )

    async def start(self) -> None:
        await self.server.start()

    async def close(self) -> None:
        await self.server.close()
        await self.broker.close()


class HostingApp(SteadyCursors, FiskApp):
    """The workstation with its agent started before the first screen asks it anything."""

    # A relative CSS_PATH resolves beside the subclass's module; the app's own sheet is wanted.
    CSS_PATH = str(Path(app_module.__file__).with_name("app.tcss"))

    def __init__(self, agent: HostedAgent, bridge: RunBridge, setup: RunSetup) -> None:
        super().__init__(bridge, setup)
        self.agent = agent

    async def on_load(self) -> None:
        await self.agent.start()


def build_app(
    tmp_path: Path,
    provider: Provider,
    *,
    prompt: str = "hello",
    tool_output: bool = False,
    resume: str = "",
    naming: ConversationNaming = LOCAL,
    remote: bool = False,
) -> tuple[FiskApp, HostedAgent]:
    """The app and the agent behind it; close the agent when done. ``remote`` hides the
    agent's store from the app, as for an agent another process runs."""
    bridge = RunBridge()
    agent = HostedAgent(tmp_path, provider, bridge, naming=naming)
    bridge.bind(
        agent.conversation,
        store=None if remote else agent.store,
        tools=None if remote else agent.tools,
    )
    setup = RunSetup(
        identity="ops-agent",
        model=SETTINGS.model,
        prompt=prompt,
        resume=resume,
        tools=tuple(ToolRow(tool.name, "ops", tool.name == "stream_rm") for tool in agent.tools),
        max_tokens=SETTINGS.max_tokens,
        bell=False,
        version="test",
        tool_output=tool_output,
    )
    return pinned(HostingApp(agent, bridge, setup)), agent


@asynccontextmanager
async def workstation(
    tmp_path: Path,
    replies: Sequence[Reply],
    *,
    prompt: str = "hello",
    tool_output: bool = False,
    resume: str = "",
    remote: bool = False,
) -> AsyncIterator[FiskApp]:
    app, agent = build_app(
        tmp_path,
        ScriptedProvider(replies),
        prompt=prompt,
        tool_output=tool_output,
        resume=resume,
        remote=remote,
    )
    try:
        yield app
    finally:
        await agent.close()


@asynccontextmanager
async def running(
    tmp_path: Path,
    replies: Sequence[Reply],
    *,
    prompt: str = "hello",
    tool_output: bool = False,
    resume: str = "",
    remote: bool = False,
    message_hook: Callable[[Message], None] | None = None,
) -> AsyncIterator[tuple[FiskApp, Pilot[None]]]:
    """The workstation running headless at ``SIZE``, with its pilot; ``message_hook`` sees
    every message the app's pumps receive."""
    async with (
        workstation(
            tmp_path, replies, prompt=prompt, tool_output=tool_output, resume=resume, remote=remote
        ) as app,
        app.run_test(size=SIZE, message_hook=message_hook) as pilot,
    ):
        yield app, pilot
