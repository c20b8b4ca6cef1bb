"""The journal is read once per turn: a follow-up at the terminal, through the a2a engine, the
server and the runner, reads the stored conversation at most once."""

from __future__ import annotations

from pathlib import Path

from fisk_ai.a2a.conversation import AgentConversation
from fisk_ai.a2a.in_process import InProcessBroker
from fisk_ai.agent.outcome import Completed
from fisk_ai.agent.resources import Resources
from fisk_ai.serve.prompts import LOCAL, PromptsOptions, PromptsServer
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.records import Record
from tests.agent.conftest import FakeTool, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.prompter import ScriptedPrompter
from tests.fakes.provider import ScriptedProvider, answer, call, calls
from tests.serve.prompts.engine import IDENTITY, SETTINGS, WAIT


class CountingStore(FileSessionStore):
    """A real file store that counts how often a journal is read whole."""

    reads = 0

    async def read(self, run_id: str) -> list[Record]:
        self.reads += 1
        return await super().read(run_id)


async def test_a_follow_up_turn_reads_the_journal_at_most_once(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "runs")
    provider = ScriptedProvider(
        [
            answer("three streams"),
            calls(call("t1", "lookup")),
            answer("ORDERS holds 12 messages"),
        ]
    )
    broker = InProcessBroker()
    server = PromptsServer(
        broker.connect(),
        Resources(SETTINGS, provider, toolset(FakeTool("lookup")), store),
        PromptsOptions(identity=IDENTITY, workers=1, request_timeout=WAIT, naming=LOCAL),
    )
    await server.start()
    try:
        conversation = AgentConversation(
            broker.connect(),
            IDENTITY,
            request_timeout=WAIT,
            events=RecordingSink(),
            prompter=ScriptedPrompter([]),
        )
        await conversation.start("how many streams")
        store.reads = 0

        result = await conversation.follow_up("how many messages in the first one")
    finally:
        await server.close()
        await broker.close()

    assert result.outcome == Completed("ORDERS holds 12 messages")
    assert (result.llm_calls, result.tool_calls) == (3, 1)
    assert store.reads <= 1
