"""An image an MCP tool answers with reaches the model as an image block beside the result's
text, in the request after the call and again in the first request of a resumed run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fisk_ai.agent.outcome import Completed
from fisk_ai.llm.anthropic import AnthropicProvider
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.tools.mcp.sessions import open_mcp_sessions
from fisk_ai.tools.toolset import ToolSet
from tests.agent.conftest import make_runner
from tests.fakes.events import RecordingSink
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.mcp.conftest import raw_entry
from tests.mcp.server_tools import GOOD, PNG

IMAGE_CONTENT = [{"type": "image", "data": PNG, "mimeType": "image/png"}]
IMAGE_BLOCK = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
}
CALL = reply(tool_use("tu_1", "raw_good", {}), stop_reason="tool_use")


def tool_result_sent(request: dict[str, Any]) -> dict[str, Any]:
    last = request["messages"][-1]["content"]
    results = [block for block in last if block["type"] == "tool_result"]
    assert len(results) == 1, f"expected one tool result in {last}"
    result: dict[str, Any] = results[0]
    return result


async def test_an_mcp_image_is_sent_as_an_image_block_after_the_text(tmp_path: Path) -> None:
    entry = raw_entry(RAW_TOOLS=json.dumps([GOOD]), RAW_CONTENT=json.dumps(IMAGE_CONTENT))
    store = FileSessionStore(tmp_path / "runs")
    async with open_mcp_sessions([entry]) as sessions:
        with FakeMessagesAPI([CALL, reply(text("a PNG"))]) as api:
            provider = AnthropicProvider("key", base_url=api.base_url, max_retries=0)
            runner = make_runner(
                provider=provider,
                tools=ToolSet(sessions.sources()),
                store=store,
                events=RecordingSink(),
            )
            async with runner:
                result = await runner.start("what does the tool show?")

    assert result.outcome == Completed("a PNG")
    assert tool_result_sent(api.requests[1])["content"] == [
        {"type": "text", "text": "[image 1: image/png, 308 bytes, attached]"},
        IMAGE_BLOCK,
    ]


async def test_a_resumed_run_sends_the_mcp_image_again(tmp_path: Path) -> None:
    entry = raw_entry(RAW_TOOLS=json.dumps([GOOD]), RAW_CONTENT=json.dumps(IMAGE_CONTENT))
    store = FileSessionStore(tmp_path / "runs")
    async with open_mcp_sessions([entry]) as sessions:
        tools = ToolSet(sessions.sources())
        # The request after the call finds the script spent and fails the run; the resume
        # answers it.
        with FakeMessagesAPI([CALL]) as api:
            provider = AnthropicProvider("key", base_url=api.base_url, max_retries=0)
            first = make_runner(provider=provider, tools=tools, store=store, events=RecordingSink())
            async with first:
                failed = await first.start("what does the tool show?")
            api.script([reply(text("a PNG"))])
            resumed = make_runner(
                provider=provider, tools=tools, store=store, events=RecordingSink()
            )
            async with resumed:
                result = await resumed.resume(failed.session_id)

    assert result.outcome == Completed("a PNG")
    assert IMAGE_BLOCK in tool_result_sent(api.requests[-1])["content"]
