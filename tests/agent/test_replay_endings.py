"""Reading back how a stored conversation's last turn ended, as the live run said it."""

from __future__ import annotations

import dataclasses

from fisk_ai.agent.replay import last_turn_ending
from fisk_ai.lineui.sessions import transcript
from fisk_ai.llm.registry import ProviderError
from fisk_ai.sessions import TerminalReason
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.tui.transcript import transcript_of
from tests.agent.conftest import SETTINGS, folded, make_runner, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer

API_ERROR = "400 bad request: prompt is too long"


async def test_a_turn_that_failed_on_an_api_error_reads_back_with_its_error(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    provider = ScriptedProvider([answer("hello"), ProviderError(API_ERROR)])
    async with make_runner(provider=provider, tools=toolset(), store=store, events=sink) as runner:
        first = await runner.start("hi")
        await runner.follow_up("and the streams?")

    conversation = await folded(store, first.session_id)
    ending = last_turn_ending(conversation)
    assert ending is not None
    assert ending.reason is TerminalReason.ERROR
    assert API_ERROR in ending.message
    lines = transcript_of(conversation).text().splitlines()
    assert lines[-3:] == ["> and the streams?", "--- run error ---", f"run ended: {API_ERROR}"]


async def test_a_turn_that_answered_reads_back_with_no_ending_line(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    chat = dataclasses.replace(SETTINGS, interactive=True)
    provider = ScriptedProvider([answer("the streams are fine")])
    async with make_runner(
        provider=provider, tools=toolset(), store=store, events=sink, settings=chat
    ) as runner:
        result = await runner.start("hi")

    conversation = await folded(store, result.session_id)
    # A chat left after its answer is journaled as suspended; it ended as it should.
    assert conversation.terminal is not None
    assert last_turn_ending(conversation) is None
    assert "--- run" not in transcript_of(conversation).text()


async def test_a_chat_left_after_a_failed_turn_reads_back_with_its_error(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    chat = dataclasses.replace(SETTINGS, interactive=True)
    provider = ScriptedProvider([answer("hello"), ProviderError(API_ERROR)])
    async with make_runner(
        provider=provider, tools=toolset(), store=store, events=sink, settings=chat
    ) as runner:
        result = await runner.start("hi")
        await runner.follow_up("and the streams?")

    conversation = await folded(store, result.session_id)
    # A chat keeps a failed turn open for the next prompt; left there, the suspension the
    # journal ends with carries the error the screen showed.
    ending = last_turn_ending(conversation)
    assert ending is not None
    assert ending.reason is TerminalReason.SUSPENDED
    assert API_ERROR in ending.message
    lines = transcript_of(conversation).text().splitlines()
    assert lines[-3:] == [
        "> and the streams?",
        "--- run suspended ---",
        f"run ended: {ending.message}",
    ]


async def test_the_printed_transcript_ends_as_the_last_turn_ended(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    provider = ScriptedProvider([answer("hello"), ProviderError(API_ERROR)])
    async with make_runner(provider=provider, tools=toolset(), store=store, events=sink) as runner:
        first = await runner.start("hi")
        await runner.follow_up("and the streams?")

    # `fisk session show ID --transcript --no-tui` says it as the viewer does.
    printed = transcript(await folded(store, first.session_id), thinking=False)
    assert printed[-3:] == ["> and the streams?", "--- run error ---", f"run ended: {API_ERROR}"]
