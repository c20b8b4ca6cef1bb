"""A conversation held with the prompts engine, turn by turn."""

from __future__ import annotations

from fisk_ai.a2a.in_process import InProcessTransport
from fisk_ai.a2a.messages import Ack, TerminalResult
from tests.serve.prompts.engine import exchange, prompt


async def converse(caller: InProcessTransport, *texts: str) -> str:
    """Run one turn per text in one conversation and return its token."""
    token: str | None = None
    for text in texts:
        ack, *_, result = await exchange(caller, prompt(text, conversation_token=token))
        assert isinstance(ack, Ack) and ack.conversation_token
        assert isinstance(result, TerminalResult)
        token = ack.conversation_token
    assert token is not None
    return token
