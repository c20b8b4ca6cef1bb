"""A FiskApp wired to a real runner: a scripted provider, a fake fisk application's command
tools (``stream rm`` is gated by ai:confirm) and a file session store."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from fisk_ai.agent.runner import AgentSettings, Runner
from fisk_ai.llm.types import Provider
from fisk_ai.screens.run import RunSetup, ToolRow
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.tools.fiskapp.loader import load_application
from fisk_ai.tools.fiskapp.model import ApplicationModel
from fisk_ai.tools.toolset import ToolSet, ToolSource
from fisk_ai.tui.app import FiskApp
from fisk_ai.tui.bridge import RunBridge
from tests.fakes.fiskapp import application, arg, command, write_fake_app
from tests.fakes.provider import Reply, ScriptedProvider

# Animations off, so Pilot sees the end state of every transition at once.
os.environ["TEXTUAL_ANIMATIONS"] = "none"

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


def build_app(
    tmp_path: Path,
    provider: Provider,
    *,
    prompt: str = "hello",
    tool_output: bool = False,
    resume: str = "",
) -> tuple[FiskApp, Runner]:
    """The app and the runner behind it; close the runner when done."""
    tools = ops_tools(tmp_path)
    bridge = RunBridge()
    store = FileSessionStore(tmp_path / "runs")
    runner = Runner(
        SETTINGS,
        provider=provider,
        tools=tools,
        store=store,
        events=bridge,
        prompter=bridge,
    )
    bridge.bind(runner, store=store)
    setup = RunSetup(
        identity="ops-agent",
        model=SETTINGS.model,
        prompt=prompt,
        resume=resume,
        tools=tuple(ToolRow(tool.name, "ops", tool.name == "stream_rm") for tool in tools),
        max_tokens=SETTINGS.max_tokens,
        bell=False,
        version="test",
        tool_output=tool_output,
    )
    return FiskApp(bridge, setup), runner


@asynccontextmanager
async def workstation(
    tmp_path: Path,
    replies: Sequence[Reply],
    *,
    prompt: str = "hello",
    tool_output: bool = False,
    resume: str = "",
) -> AsyncIterator[FiskApp]:
    app, runner = build_app(
        tmp_path, ScriptedProvider(replies), prompt=prompt, tool_output=tool_output, resume=resume
    )
    async with runner:
        yield app


@asynccontextmanager
async def running(
    tmp_path: Path,
    replies: Sequence[Reply],
    *,
    prompt: str = "hello",
    tool_output: bool = False,
    resume: str = "",
) -> AsyncIterator[tuple[FiskApp, Pilot[None]]]:
    """The workstation running headless at ``SIZE``, with its pilot."""
    async with (
        workstation(
            tmp_path, replies, prompt=prompt, tool_output=tool_output, resume=resume
        ) as app,
        app.run_test(size=SIZE) as pilot,
    ):
        yield app, pilot
