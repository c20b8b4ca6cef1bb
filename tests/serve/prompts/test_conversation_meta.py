"""A served conversation's journal names its token and its caller, so an operator can hand a
caller who lost the token its conversation back: `fisk session show` prints both, and
`fisk session ls`, whose output gets pasted into tickets, prints neither token."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from fisk_ai.a2a.in_process import InProcessTransport
from fisk_ai.a2a.messages import Ack, Identity, RequestPrompt, TerminalResult, new_request
from fisk_ai.serve.prompts.options import conversation_session_id
from fisk_ai.sessions.fold import fold
from tests.e2e.conftest import FISK
from tests.fakes.provider import answer
from tests.serve.prompts.engine import IDENTITY, StartAgent, exchange


async def fisk(*args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        str(FISK),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"},
    )
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    return out.decode()


def prompt(text: str, sender: str, **fields: str) -> RequestPrompt:
    return new_request(
        RequestPrompt,
        sender=Identity(name=sender),
        recipient=Identity(name=IDENTITY),
        prompt=text,
        **fields,
    )


async def test_the_token_and_caller_are_in_the_meta_and_session_show_prints_them(
    agent: StartAgent, caller: InProcessTransport, tmp_path: Path
) -> None:
    started = await agent((), (answer("two streams"), answer("still two")))
    first = await exchange(caller, prompt("how many streams", "ops-console"))
    ack = first[0]
    assert isinstance(ack, Ack) and ack.conversation_token
    token = ack.conversation_token
    # A follow-up from another caller keeps the meta the conversation started with.
    follow = await exchange(caller, prompt("and now", "other", conversation_token=token))
    assert isinstance(follow[-1], TerminalResult)

    session = conversation_session_id(IDENTITY, token)
    meta = fold(await started.store.read(session)).meta
    assert (meta.conversation_token, meta.caller) == (token, "ops-console")

    state = str(tmp_path / "runs")
    shown = await fisk("session", "--state-dir", state, "show", session)
    assert f"    Conversation: {token}\n" in shown
    assert "          Caller: ops-console (unverified)\n" in shown
    listed = await fisk("session", "--state-dir", state, "ls")
    assert session in listed
    assert token not in listed
