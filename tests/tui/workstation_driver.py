"""Driving the workstation under Pilot and reading back what it shows: the transcript and the
status bar as drawn, the toasts, what the model was sent, and waits for a turn to end or ask."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Static

from fisk_ai.llm.types import Request, Response, TextBlock
from fisk_ai.screens.approval import ApprovalScreen
from fisk_ai.workstation.app import FiskApp
from tests.fakes.provider import Reply, ScriptedProvider, answer, call, calls
from tests.patience import DEADLINE
from tests.screens.answerable import until_answerable
from tests.tui.workstation import SIZE, build_app, running


def screen_text(app: FiskApp) -> str:
    view = app.run_screen.view
    return "\n".join(strip.text for strip in (view.render_line(y) for y in range(view.size.height)))


async def settle(app: FiskApp, pilot: Pilot[None]) -> None:
    """Wait until the turn in flight has ended or put a question up."""
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def until_question(app: FiskApp, pilot: Pilot[None]) -> None:
    """Wait until an approval is up and takes keys, or the turn has ended."""
    for _ in range(200):
        if isinstance(app.screen, ApprovalScreen):
            await until_answerable(app)
            return
        if not app.run_screen.turn_running:
            return
        await pilot.pause()


def remove_stream() -> list[Reply]:
    return [calls(call("t1", "stream_rm", {"stream": "ORDERS"})), answer("removed")]


async def send(app: FiskApp, pilot: Pilot[None], text: str) -> None:
    app.run_screen.chat.value = text
    await pilot.press("enter")


def status_text(app: FiskApp) -> str:
    return str(app.run_screen.query_one("#status", Static).render()).rstrip()


def toasts(app: FiskApp) -> list[str]:
    return [str(notification.message) for notification in app._notifications]


def texts_of(provider: ScriptedProvider, request: int) -> list[str]:
    """The text of every user message of one request, oldest first."""
    return [
        block.text
        for message in provider.requests[request].messages
        if message.role.value == "user"
        for block in message.content
        if isinstance(block, TextBlock)
    ]


async def first_conversation(tmp_path: Path) -> str:
    """Run one exchange and leave; return the stored session's id."""
    async with running(tmp_path, [answer("the streams are fine")]) as (app, pilot):
        await settle(app, pilot)
        session = app.bridge.session_id
        await pilot.press("ctrl+d")
    assert session
    return session


async def until_resuming(app: FiskApp, pilot: Pilot[None], session: str) -> None:
    """Wait for the resuming marker in the transcript (not only on the rows drawn, which a
    busy machine may not have laid out yet), a hang failing after the suite's deadline."""
    marker = f'--- resuming "{session}" ---'
    async with asyncio.timeout(DEADLINE):
        while marker not in app.run_screen.view.transcript.text():
            await pilot.pause()


class GatedProvider(ScriptedProvider):
    """Holds every model call until the test opens ``gate``: a turn in flight, on demand."""

    def __init__(self, replies: Sequence[Reply]) -> None:
        super().__init__(replies)
        self.gate = asyncio.Event()

    async def call(self, request: Request) -> Response:
        await self.gate.wait()
        return await super().call(request)


@asynccontextmanager
async def gated(
    tmp_path: Path, replies: Sequence[Reply], *, resume: str = ""
) -> AsyncIterator[tuple[FiskApp, Pilot[None], GatedProvider]]:
    """The workstation whose model calls wait for ``provider.gate``."""
    provider = GatedProvider(replies)
    app, agent = build_app(tmp_path, provider, resume=resume)
    try:
        async with app.run_test(size=SIZE) as pilot:
            yield app, pilot, provider
    finally:
        await agent.close()
