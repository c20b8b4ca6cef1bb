"""What a thread's status says while the run calls a tool follows what kind of tool it is, not
what the tool is called: an imported tool that happens to be named like a built-in shows as any
other tool."""

from __future__ import annotations

from pathlib import Path

from fisk_ai.knowledge.access import KnowledgeIndex
from fisk_ai.serve.slack.text import Phase
from fisk_ai.tools.builtin.knowledge import KnowledgeSearch
from tests.agent.conftest import FakeTool
from tests.fakes.messages_api import reply, text, tool_use
from tests.fakes.slack import FakeSlack, Posted
from tests.serve.slack.conftest import ANA, CHANNEL, StartBot


async def _status_after_one_call(
    slack: FakeSlack, start_bot: StartBot, tool: KnowledgeSearch | FakeTool
) -> Posted:
    turns = [
        reply(tool_use("t1", tool.name, {"query": "retention"}), stop_reason="tool_use"),
        reply(text("Seven days.")),
    ]
    async with start_bot(turns, tools=[tool]):
        mention = await slack.mention(CHANNEL, ANA, "how long are messages kept?")
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 2)
        status = slack.bot_messages(CHANNEL, mention.ts)[0]
        await slack.wait_for(lambda: "Answered" in status.text)
    return status


async def test_a_knowledge_search_shows_as_searching_knowledge(
    slack: FakeSlack, start_bot: StartBot, tmp_path: Path
) -> None:
    search = KnowledgeSearch(
        KnowledgeIndex(tmp_path / "knowledge"), top_k=5, max_injected_tokens=6000
    )

    status = await _status_after_one_call(slack, start_bot, search)

    assert status.edits[:2] == [Phase.THINKING.value, Phase.SEARCHING_KNOWLEDGE.value]


async def test_a_tool_only_named_like_a_knowledge_tool_shows_as_calling_tools(
    slack: FakeSlack, start_bot: StartBot
) -> None:
    status = await _status_after_one_call(slack, start_bot, FakeTool("knowledge_notes"))

    assert status.edits[:2] == [Phase.THINKING.value, Phase.CALLING_TOOLS.value]


async def test_a_tool_only_named_like_a_question_shows_as_calling_tools(
    slack: FakeSlack, start_bot: StartBot
) -> None:
    status = await _status_after_one_call(slack, start_bot, FakeTool("ask_human_later"))

    assert status.edits[:2] == [Phase.THINKING.value, Phase.CALLING_TOOLS.value]
