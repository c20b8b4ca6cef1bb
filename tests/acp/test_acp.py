"""`fisk acp` driven by the ACP package's client side, as an editor drives it: sessions made,
loaded and prompted, gated commands put to the client, turns cancelled, and a client that dies.

The installed `fisk acp` runs against the fake Messages API and a fake fleet application whose
``purge`` command is gated by harness.confirm_tags. The tests that neither end the agent nor need
a second one share one (``borrowed``), each with its own client, sessions and model turns; the
others start their own.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
import pytest_asyncio
from acp import RequestError
from acp.schema import (
    ContentToolCallContent,
    PermissionOption,
    TextContentBlock,
    ToolCallUpdate,
)

from tests.acp.driver import (
    BorrowedAgent,
    Fleet,
    RecordingClient,
    SharedAgent,
    fisk_acp,
    fleet,
    journal_completed,
    shared_agent,
)
from tests.e2e.agent_runs import fisk, tool_results
from tests.fakes.fiskapp import runs_of
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, thinking, tool_use
from tests.fakes.watched_messages_api import WatchedMessagesAPI

pytestmark = pytest.mark.e2e

Test = TypeVar("Test", bound=Callable[..., Any])


def shares_the_agent(test: Test) -> Test:
    """Runs ``test`` on the loop the shared agent's pipes belong to, and on the worker that
    runs the module's other tests of it, so it starts once."""
    on_the_agents_loop = pytest.mark.asyncio(loop_scope="module")
    marked: Test = on_the_agents_loop(pytest.mark.xdist_group("acp_shared_agent")(test))
    return marked


PROMPT = "how is the fleet?"
ANSWER = "The fleet is **fine**: nothing to purge."
REASONING = "The inventory says where things stand."
NARRATION = "Looking at the inventory first."

SHOW_THEN_ANSWER = [
    reply(
        thinking(REASONING, "c2lnbmF0dXJlLTE="),
        text(NARRATION),
        tool_use("tu_show", "show", {"what": "inventory"}),
        stop_reason="tool_use",
    ),
    reply(text(ANSWER)),
]
PURGE_THEN_ANSWER = [
    reply(tool_use("tu_purge", "purge", {}), stop_reason="tool_use"),
    reply(text("Purged.")),
]
PURGE_TWICE_THEN_ANSWER = [
    reply(tool_use("tu_purge_1", "purge", {}), stop_reason="tool_use"),
    reply(tool_use("tu_purge_2", "purge", {}), stop_reason="tool_use"),
    reply(text("Purged twice.")),
]


def always(option_id: str | None) -> Any:
    def choose(_call: ToolCallUpdate, _options: list[PermissionOption]) -> str | None:
        return option_id

    return choose


@pytest.fixture
def home(tmp_path: Path) -> Fleet:
    return fleet(tmp_path)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SharedAgent]:
    with WatchedMessagesAPI() as api:
        async with shared_agent(tmp_path_factory.mktemp("acp"), api) as agent:
            yield agent


@pytest_asyncio.fixture(loop_scope="module")
async def borrowed(shared: SharedAgent) -> AsyncIterator[BorrowedAgent]:
    """The shared agent for one test; the test's scripted turns are all taken by its end."""
    hold = await shared.borrow()
    yield hold
    hold.model.close()


@shares_the_agent
async def test_initialize_offers_load_and_nothing_fisk_lacks(borrowed: BorrowedAgent) -> None:
    answer = await borrowed.agent.initialize()
    capabilities = answer.agent_capabilities
    assert capabilities.load_session is True
    assert capabilities.prompt_capabilities.image is False
    assert capabilities.prompt_capabilities.audio is False
    assert capabilities.mcp_capabilities.http is False
    assert capabilities.mcp_capabilities.sse is False
    assert answer.auth_methods == []
    assert answer.agent_info.name == "fisk-ai"


@shares_the_agent
async def test_a_prompt_is_answered_in_streamed_chunks(borrowed: BorrowedAgent) -> None:
    client, agent = borrowed.client, borrowed.agent
    borrowed.model.script(SHOW_THEN_ANSWER)
    session = await agent.new_session()
    response = await agent.prompt(session, PROMPT)
    assert response.stop_reason == "end_turn"
    assert client.agent_text() == NARRATION + ANSWER
    chunks = [
        update
        for _, update in client.updates
        if getattr(update, "session_update", "") == "agent_message_chunk"
    ]
    assert len(chunks) > 2, "the answer should arrive in pieces as it is written"
    assert client.thought_text() == REASONING


@shares_the_agent
async def test_a_tool_call_shows_its_argv_kind_status_and_output(borrowed: BorrowedAgent) -> None:
    client, agent = borrowed.client, borrowed.agent
    borrowed.model.script(SHOW_THEN_ANSWER)
    await agent.prompt(await agent.new_session(), PROMPT)
    [call] = client.tool_calls()
    assert call.tool_call_id == "tu_show"
    assert call.title == "show -- inventory"
    assert call.kind == "read"
    [result] = client.tool_updates()
    assert result.tool_call_id == "tu_show"
    assert result.status == "completed"
    assert result.content is not None
    [shown] = result.content
    assert isinstance(shown, ContentToolCallContent)
    assert isinstance(shown.content, TextContentBlock)
    assert "show" in shown.content.text


@shares_the_agent
async def test_stdout_carries_only_protocol_frames(borrowed: BorrowedAgent) -> None:
    agent = borrowed.agent
    borrowed.model.script(SHOW_THEN_ANSWER)
    await agent.prompt(await agent.new_session(), PROMPT)
    assert agent.stdout_lines
    for line in agent.stdout_lines:
        frame = json.loads(line)
        assert frame["jsonrpc"] == "2.0", line


async def test_a_loaded_session_replays_its_history_and_takes_the_next_prompt(
    home: Fleet,
) -> None:
    with FakeMessagesAPI([*SHOW_THEN_ANSWER, reply(text("Still fine."))]) as api:
        async with fisk_acp(home, api, RecordingClient()) as first:
            session = await first.new_session()
            await first.prompt(session, PROMPT)
        assert await first.exited() == 0
        reader = RecordingClient()
        async with fisk_acp(home, api, reader) as second:
            await second.initialize()
            await second.connection.load_session(
                cwd=str(home.home), session_id=session, mcp_servers=[]
            )
            replayed = reader.updates[:]
            response = await second.prompt(session, "and now?")
        model_saw = api.requests[-1]["messages"]
    assert {session_id for session_id, _ in replayed} == {session}
    assert PROMPT in reader.user_text()
    assert ANSWER in "".join(
        update.content.text
        for _, update in replayed
        if getattr(update, "session_update", "") == "agent_message_chunk"
    )
    assert [call.title for call in reader.tool_calls()] == ["show -- inventory"]
    assert response.stop_reason == "end_turn"
    assert len(model_saw) == 5, "the follow-up continues the stored conversation"
    assert len(await home.journals()) == 1


@shares_the_agent
async def test_loading_an_unknown_session_is_refused(borrowed: BorrowedAgent) -> None:
    agent = borrowed.agent
    await agent.initialize()
    with pytest.raises(RequestError) as refused:
        await agent.connection.load_session(
            cwd=str(borrowed.fleet.home), session_id="nope", mcp_servers=[]
        )
    assert isinstance(refused.value.data, dict)
    assert "no stored conversation" in refused.value.data["details"]


@shares_the_agent
async def test_a_gated_command_allowed_once_runs_after_the_client_is_asked(
    borrowed: BorrowedAgent,
) -> None:
    client, agent = borrowed.choosing(always("allow-once")), borrowed.agent
    borrowed.model.script(PURGE_THEN_ANSWER)
    response = await agent.prompt(await agent.new_session(), "purge it")
    [(call, options)] = client.permission_requests
    assert call.tool_call_id == "tu_purge"
    assert call.title == "purge"
    assert call.kind == "delete"
    assert [option.kind for option in options] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    assert borrowed.purges() == [["purge"]]
    assert response.stop_reason == "end_turn"


@shares_the_agent
async def test_a_gated_command_allowed_always_is_not_asked_again(borrowed: BorrowedAgent) -> None:
    client, agent = borrowed.choosing(always("allow-always")), borrowed.agent
    borrowed.model.script(PURGE_TWICE_THEN_ANSWER)
    await agent.prompt(await agent.new_session(), "purge it twice")
    assert len(client.permission_requests) == 1
    assert borrowed.purges() == [["purge"], ["purge"]]


@shares_the_agent
async def test_a_gated_command_rejected_does_not_run(borrowed: BorrowedAgent) -> None:
    client, agent = borrowed.choosing(always("reject-once")), borrowed.agent
    borrowed.model.script(PURGE_THEN_ANSWER)
    response = await agent.prompt(await agent.new_session(), "purge it")
    assert borrowed.purges() == []
    [result] = client.tool_updates()
    assert result.status == "failed"
    assert response.stop_reason == "end_turn"


@shares_the_agent
async def test_rejected_always_declines_again_without_asking_and_says_so(
    borrowed: BorrowedAgent,
) -> None:
    client, agent = borrowed.choosing(always("reject-always")), borrowed.agent
    borrowed.model.script(PURGE_TWICE_THEN_ANSWER)
    await agent.prompt(await agent.new_session(), "purge it twice")
    assert len(client.permission_requests) == 1
    assert borrowed.purges() == []
    assert "keeps no refusal past this conversation" in client.agent_text()


@shares_the_agent
async def test_a_permission_request_the_client_cancels_declines(borrowed: BorrowedAgent) -> None:
    borrowed.choosing(always(None))
    agent = borrowed.agent
    borrowed.model.script(PURGE_THEN_ANSWER)
    response = await agent.prompt(await agent.new_session(), "purge it")
    assert borrowed.purges() == []
    assert response.stop_reason == "end_turn"


@shares_the_agent
async def test_cancel_stops_the_turn_mid_call(borrowed: BorrowedAgent) -> None:
    agent, model = borrowed.agent, borrowed.model
    # The answer after the tool call is never asked for: the turn ends at its first call.
    model.script(SHOW_THEN_ANSWER[:1])
    held = model.hold(1)
    try:
        session = await agent.new_session()
        turn = asyncio.create_task(agent.prompt(session, PROMPT))
        await model.until_arrived(1)
        await agent.connection.cancel(session_id=session)
        response = await turn
    finally:
        held.set()
    assert response.stop_reason == "cancelled"
    [journal] = await borrowed.new_journals()
    assert not await journal_completed(borrowed.fleet, journal)


async def test_a_client_that_dies_at_a_question_leaves_a_resumable_journal(home: Fleet) -> None:
    agents: list[Any] = []

    def die(_call: ToolCallUpdate, _options: list[PermissionOption]) -> str | None:
        agents[0].crash_client()
        return None

    client = RecordingClient(choose=die)
    with FakeMessagesAPI([*PURGE_THEN_ANSWER, reply(text("Nothing purged."))]) as api:
        async with fisk_acp(home, api, client) as crashed:
            agents.append(crashed)
            session = await crashed.new_session()
            turn = asyncio.create_task(crashed.prompt(session, "purge it"))
            assert await crashed.exited() == 0
            turn.cancel()
        assert runs_of(home.purge_log) == []
        [journal] = await home.journals()
        assert not await journal_completed(home, journal)
        again = RecordingClient(choose=always("reject-once"))
        async with fisk_acp(home, api, again) as resumed:
            await resumed.initialize()
            await resumed.connection.load_session(
                cwd=str(home.home), session_id=session, mcp_servers=[]
            )
            response = await resumed.prompt(session, "never mind")
    assert "purge it" in again.user_text()
    assert response.stop_reason == "end_turn"
    assert await home.journals() == [journal]


def test_a_configuration_without_an_application_is_refused_in_one_sentence(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text("system_prompt: hi\nllm:\n  model: claude-test-1\n")
    result = fisk("acp", "--config", "agent.yaml", cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 1
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("fisk: error: ")
    assert "application_path" in line


@shares_the_agent
async def test_an_ask_human_confirm_is_a_yes_no_permission_request(
    borrowed: BorrowedAgent,
) -> None:
    client, agent = borrowed.choosing(always("yes")), borrowed.agent
    turns = [
        reply(
            tool_use("tu_ask", "ask_human_confirm", {"question": "Purge now?"}),
            stop_reason="tool_use",
        ),
        reply(text("You said yes.")),
    ]
    borrowed.model.script(turns)
    await agent.prompt(await agent.new_session(), "ask me first")
    [result] = tool_results(borrowed.model.requests[-1]).values()
    [(call, options)] = client.permission_requests
    assert call.title == "Purge now?"
    assert call.tool_call_id == "tu_ask"
    assert [(option.option_id, option.kind) for option in options] == [
        ("yes", "allow_once"),
        ("no", "reject_once"),
    ]
    assert "true" in json.dumps(result).lower()


@shares_the_agent
async def test_an_ask_human_input_is_shown_as_a_message_and_not_answered(
    borrowed: BorrowedAgent,
) -> None:
    client, agent = borrowed.client, borrowed.agent
    turns = [
        reply(
            tool_use("tu_ask", "ask_human_input", {"question": "Which node?"}),
            stop_reason="tool_use",
        ),
        reply(text("Tell me in your next prompt.")),
    ]
    borrowed.model.script(turns)
    await agent.prompt(await agent.new_session(), "ask me which")
    [result] = tool_results(borrowed.model.requests[-1]).values()
    assert client.permission_requests == []
    assert "Which node?" in client.agent_text()
    assert json.loads(result)["value"] is None


async def test_a_sigterm_stops_the_running_turn_and_leaves_it_resumable(home: Fleet) -> None:
    with WatchedMessagesAPI(SHOW_THEN_ANSWER) as api:
        api.hold(1)
        async with fisk_acp(home, api, RecordingClient()) as agent:
            session = await agent.new_session()
            turn = asyncio.create_task(agent.prompt(session, PROMPT))
            await api.arrived()
            agent.process.send_signal(signal.SIGTERM)
            assert await agent.exited() == 0
            turn.cancel()
    [journal] = await home.journals()
    assert not await journal_completed(home, journal)
