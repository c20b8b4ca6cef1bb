"""Issue 14, nothing lost: what the operator writes reaches the agent as written."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fisk_ai.agent.outcome import Abandoned, Suspended
from fisk_ai.llm.registry import ProviderError
from fisk_ai.llm.types import Request, Response
from fisk_ai.screens.question import ConfirmScreen
from fisk_ai.screens.sessions import SessionBrowser
from fisk_ai.sessions import JournalLocked, fold
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.tui.status import RunState
from tests.fakes.provider import ScriptedProvider, answer
from tests.screens.answerable import until_answerable
from tests.tui.workstation import SIZE, build_app
from tests.tui.workstation_driver import send, settle, texts_of


async def test_a_follow_up_after_an_api_error_is_sent_as_written(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [ProviderError("400 bad request"), ProviderError("400 bad request"), answer("fine")]
    )
    app, agent = build_app(tmp_path, provider, prompt="first")
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            assert app.run_screen.run_state is RunState.ERROR
            await send(app, pilot, "second")
            await settle(app, pilot)
            await send(app, pilot, "third")
            await settle(app, pilot)
            assert texts_of(provider, 1)[-1] == "second"
            assert texts_of(provider, 2)[-1] == "third"
            assert app.run_screen.last_answer == "fine"
    finally:
        await agent.close()


class HeldProvider(ScriptedProvider):
    """Fails the first request, then holds every later one until the test lets go."""

    def __init__(self) -> None:
        super().__init__([ProviderError("400 bad request")])
        self.held = asyncio.Event()

    async def call(self, request: Request) -> Response:
        if self.calls == 0:
            return await super().call(request)
        self.requests.append(request)
        self.held.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_leaving_during_a_follow_up_keeps_it_and_forgets_the_old_error(
    tmp_path: Path,
) -> None:
    provider = HeldProvider()
    app, agent = build_app(tmp_path, provider, prompt="first")
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await send(app, pilot, "second")
            await provider.held.wait()
            await pilot.press("ctrl+c")
            await pilot.press("ctrl+c")
            await pilot.pause()
        outcome = app.outcome
        # The first Ctrl-C ended the follow-up suspended, whether or not the second came first.
        assert outcome.error == ""
        assert outcome.result is not None
        assert isinstance(outcome.result.outcome, Suspended | Abandoned)
        session = outcome.session_id
    finally:
        await agent.close()
    conversation = fold(await agent.store.read(session))
    assert conversation.messages[-1].text.endswith("second")


async def test_the_open_conversation_cannot_be_removed_under_the_workstation(
    tmp_path: Path,
) -> None:
    app, agent = build_app(tmp_path, ScriptedProvider([answer("hi")]))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            session = app.bridge.session_id
            with pytest.raises(JournalLocked, match="open in the workstation fisk run"):
                await FileSessionStore(agent.store.directory).remove(session)
            await pilot.press("f3")
            browser = app.screen
            assert isinstance(browser, SessionBrowser)
            await app.workers.wait_for_complete()
            await pilot.pause()
            await pilot.press("d")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmScreen)
            await until_answerable(app)
            await pilot.press("right", "enter")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert await agent.store.exists(session)
            assert any("open in the workstation" in str(n.message) for n in app._notifications)
            await pilot.press("q")
            await send(app, pilot, "/clear")
            await pilot.pause()
            await FileSessionStore(agent.store.directory).remove(session)
    finally:
        await agent.close()


class GatedProvider(ScriptedProvider):
    """Answers in order, holding the first request until ``gate`` is set."""

    def __init__(self, replies: list[Response]) -> None:
        super().__init__(replies)
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()

    async def call(self, request: Request) -> Response:
        if self.calls == 0:
            self.waiting.set()
            await self.gate.wait()
        return await super().call(request)


async def test_type_ahead_during_a_turn_is_queued_in_the_chat_bar(tmp_path: Path) -> None:
    provider = GatedProvider([answer("first"), answer("second")])
    app, agent = build_app(tmp_path, provider, prompt="first")
    try:
        async with app.run_test(size=SIZE) as pilot:
            await provider.waiting.wait()
            await pilot.pause()
            screen = app.run_screen
            folded = screen.view.transcript.output_folded
            await pilot.press("w", "h", "y", "z", "Z", "space", "y")
            assert screen.chat.value == "whyzZ y"
            assert screen.view.transcript.output_folded == folded
            await pilot.press("enter")
            # Enter took the text out of the bar in one step; it waits as a queued item.
            assert screen.chat.queued == ("whyzZ y",) and screen.chat.value == ""
            # Up in the empty bar takes it back to edit, and Enter queues it again.
            await pilot.press("up", "backspace", "backspace", "enter")
            assert screen.chat.queued == ("whyzZ",)
            provider.gate.set()
            await settle(app, pilot)
            await settle(app, pilot)
            assert texts_of(provider, 1)[-1] == "whyzZ"
            assert app.run_screen.last_answer == "second"
            assert not screen.chat.queued
    finally:
        await agent.close()
