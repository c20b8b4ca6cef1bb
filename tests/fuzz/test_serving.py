"""A running agent's subjects, whatever arrives on them: the task, tool and discovery subjects
of a prompts engine and a tools server answer every request that leaves somewhere to reply (the
first message of a reply set, or the service error headers), and the agent keeps serving a
well-formed prompt afterwards."""

from __future__ import annotations

import asyncio
import json
import tempfile
from datetime import timedelta
from pathlib import Path

from hypothesis import event, given
from hypothesis import strategies as st

from fisk_ai.a2a.codec import encode
from fisk_ai.a2a.errors import A2AError, RequestTimeout
from fisk_ai.a2a.in_process import InProcessBroker
from fisk_ai.a2a.messages import Identity, RequestPrompt, ToolRequest, new_request
from fisk_ai.a2a.outcome import outcome_of
from fisk_ai.a2a.prompts_client import PromptsClient
from fisk_ai.a2a.transport import discovery_subject, task_subject, tool_subject
from fisk_ai.agent.outcome import Completed
from fisk_ai.agent.resources import Resources
from fisk_ai.serve.prompts import PromptsOptions, PromptsServer
from fisk_ai.serve.tools import ToolsOptions, ToolsServer
from fisk_ai.sessions.file import FileSessionStore
from tests.agent.conftest import SETTINGS, FakeTool, toolset
from tests.fakes.provider import ScriptedProvider, answer
from tests.fuzz.strategies import documents

IDENTITY = "ops"
CALLER = Identity(name="peer")
WAIT = timedelta(seconds=5)


def _shapes() -> list[bytes]:
    prompt = new_request(
        RequestPrompt, sender=CALLER, recipient=Identity(name=IDENTITY), prompt="hi"
    )
    tool = new_request(ToolRequest, sender=CALLER, recipient=Identity(name=IDENTITY), name="status")
    return [encode(prompt), encode(tool)]


PAYLOADS = st.sampled_from(_shapes()).flatmap(lambda data: documents(json.loads(data))) | (
    st.binary(max_size=64)
)
SUBJECTS = st.sampled_from(["task", "tool", "discovery"])


async def _exercise(arrivals: list[tuple[str, bytes]], directory: Path) -> None:
    broker = InProcessBroker()
    status = FakeTool("status")
    tools = toolset(status)
    resources = Resources(
        SETTINGS, ScriptedProvider([answer("still here")] * 8), tools, FileSessionStore(directory)
    )
    prompts = PromptsServer(
        broker.connect(), resources, PromptsOptions(IDENTITY, workers=2, request_timeout=WAIT)
    )
    served = ToolsServer(
        broker.connect(),
        [status],
        ToolsOptions(IDENTITY, version="1.0.0", max_concurrent=2, tool_timeout=None),
    )
    await prompts.start()
    await served.start()
    caller = broker.connect()
    subjects = {
        "task": task_subject(IDENTITY),
        "tool": tool_subject(IDENTITY),
        "discovery": discovery_subject(IDENTITY),
    }
    try:
        for subject, data in arrivals:
            try:
                await caller.request(subjects[subject], data, timeout=WAIT)
                event(f"{subject}: answered")
            except RequestTimeout:
                raise AssertionError(f"nothing answered {data!r} on {subject}") from None
            except A2AError as error:
                event(f"{subject}: {type(error).__name__}")
        # A well-formed prompt among the arrivals holds a worker until its turn ends.
        await prompts.wait_idle()
        client = PromptsClient(caller, IDENTITY, request_timeout=WAIT)
        terminal = await client.ask("are you still there?")
        assert outcome_of(terminal) == Completed("still here")
    finally:
        await prompts.close()
        await served.close()
        await broker.close()


@given(st.lists(st.tuples(SUBJECTS, PAYLOADS), min_size=1, max_size=4))
def test_every_request_is_answered_and_the_agent_keeps_serving(
    arrivals: list[tuple[str, bytes]],
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        asyncio.run(_exercise(arrivals, Path(directory)))
