"""A served conversation across a redeploy of `fisk serve`, as a peer on a real nats-server sees
it: a changed tool set lets the next turn run, a changed model answers it `failed` with advice
the peer can follow on the wire."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fisk_ai.a2a.messages import Ack, TerminalError, TerminalResult
from fisk_ai.a2a.nats import NatsTransport
from fisk_ai.a2a.prompts_client import TurnOptions
from fisk_ai.a2a.vocabulary import ErrorCode, StopReason
from tests.e2e.conftest import FISK
from tests.e2e.served_prompts import MODEL, SERVED_PROMPTS_MARKS, WAIT, Setup, agent_of
from tests.fakes.messages_api import reply, text

pytestmark = SERVED_PROMPTS_MARKS


@asynccontextmanager
async def serving(setup: Setup, config: Path) -> AsyncIterator[None]:
    """`fisk serve` on ``config`` from its banner until it drained on SIGINT."""
    process = await asyncio.create_subprocess_exec(
        str(FISK),
        "serve",
        "--config",
        str(config),
        "--state-dir",
        str(setup.state_dir),
        env=setup.environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        # The banner comes once every endpoint listens; the tools section closes it.
        while b"Exposed:" not in await asyncio.wait_for(process.stdout.readline(), WAIT):
            pass
        yield
        process.send_signal(signal.SIGINT)
        await asyncio.wait_for(process.communicate(), WAIT)
        assert process.returncode == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def redeployed(setup: Setup, tmp_path: Path, change: str) -> Path:
    config = tmp_path / "redeployed.yaml"
    config.write_text(setup.config.read_text() + change)
    return config


async def first_turn(setup: Setup, peer: NatsTransport) -> str:
    acks: list[Ack] = []
    async with serving(setup, setup.config):
        first = await agent_of(peer).ask(
            "how is the fleet", options=TurnOptions(on_ack=acks.append)
        )
    assert isinstance(first, TerminalResult), first
    return acks[0].conversation_token or ""


async def test_a_turn_after_a_redeploy_with_another_tool_set_runs(
    setup: Setup, peer: NatsTransport, tmp_path: Path
) -> None:
    setup.api.script([reply(text("the fleet is green")), reply(text("still green"))])
    token = await first_turn(setup, peer)

    without_hold = redeployed(setup, tmp_path, "exclude:\n  tools:\n    - ^hold$\n")
    async with serving(setup, without_hold):
        second = await agent_of(peer).ask("and now", token=token)

    assert isinstance(second, TerminalResult), second
    assert second.text == "still green"


async def test_a_turn_after_a_redeploy_with_another_model_fails_with_advice_for_the_wire(
    setup: Setup, peer: NatsTransport, tmp_path: Path
) -> None:
    setup.api.script([reply(text("the fleet is green"))])
    token = await first_turn(setup, peer)

    other_model = tmp_path / "other-model.yaml"
    other_model.write_text(setup.config.read_text().replace(MODEL, "claude-other-2"))
    async with serving(setup, other_model):
        second = await agent_of(peer).ask("and now", token=token)

    assert isinstance(second, TerminalError), second
    assert (second.code, second.stop_reason) == (ErrorCode.FAILED, StopReason.ERROR)
    assert f"(model: {MODEL} -> claude-other-2)" in second.error
    assert second.error.endswith("start a new conversation, or send the request with force: true")
