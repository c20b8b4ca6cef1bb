"""What each door into an agent costs, beside fisk's own a2a prompt over NATS.

One prompt, answered by the fake Messages API with a short text reply and no tool call, is sent
to its answer over each door, each against an agent started once:

- a2a over NATS (the baseline): ``PromptsClient`` on the embedded nats-server to the prompts
  channel of a `fisk serve`;
- A2A 1.0 over HTTP: the a2a-sdk client's ``message/send`` to the same `fisk serve`, whose
  endpoint asks that same prompts channel (so its figure holds a second a2a exchange, both ends
  in the serving process, on top of HTTP and the SDK);
- ACP: the ACP package's client side driving `fisk acp` on stdio, ``session/prompt`` in a new
  session (made untimed before each prompt).

Each prompt starts a new conversation, so no door carries a longer history than another. The
doors take turns prompt by prompt, so a slowdown of the machine falls on all of them alike. Only
prompt to answer is timed; printed are p50 and p90 of each, and each door's overhead over the
baseline in milliseconds and as a ratio (target: under 5 ms at p50). The fake Messages API sends
each stream event at once (no Nagle), as a real provider's stream arrives.

    python bench/doors.py [--prompts N] [--warmup W]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO_ROOT = BENCH.parent
# Run as a script, bench/ comes first on the path, where bench/a2a.py would shadow the a2a-sdk.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != BENCH]
sys.path.insert(0, str(REPO_ROOT))

import httpx  # noqa: E402
from a2a.types.a2a_pb2 import TaskState  # noqa: E402

from fisk_ai.a2a.messages import TerminalResult  # noqa: E402
from fisk_ai.a2a.nats import NatsTransport  # noqa: E402
from fisk_ai.a2a.prompts_client import PromptsClient  # noqa: E402
from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary  # noqa: E402
from tests.acp.driver import AcpAgent, Fleet, RecordingClient, fisk_acp  # noqa: E402
from tests.e2e.agent_runs import fisk_environment, write_config  # noqa: E402
from tests.fakes.fiskapp import application, command, write_fake_app  # noqa: E402
from tests.fakes.messages_api import FakeMessagesAPI, reply, text  # noqa: E402
from tests.patience import DEADLINE  # noqa: E402
from tests.serve.test_a2a_http import (  # noqa: E402
    IDENTITY,
    Served,
    Setup,
    answer_of,
    client_of,
    send,
    start_serve,
    user_message,
)

PROMPT = "how is the fleet?"
ANSWER = "The fleet is green."
TARGET_MS = 5.0

Prompt = Callable[[], Awaitable[None]]
"""Sends the prompt over one door and returns once its answer is in; raises on a wrong one."""


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def untimed() -> None:
    return None


@dataclass
class Door:
    label: str
    prompt: Prompt
    prepare: Callable[[], Awaitable[None]] = untimed
    """Run before each prompt, off the clock."""
    samples_ms: list[float] = field(default_factory=list)

    async def timed(self) -> None:
        await self.prepare()
        started = time.perf_counter()
        await self.prompt()
        self.samples_ms.append((time.perf_counter() - started) * 1000)


def over_nats(calling: NatsTransport) -> Door:
    client = PromptsClient(calling, IDENTITY, request_timeout=timedelta(seconds=DEADLINE))

    async def prompt() -> None:
        result = await client.ask(PROMPT)
        if not isinstance(result, TerminalResult) or result.text != ANSWER:
            raise RuntimeError(f"a2a over NATS answered {result!r}")

    return Door("a2a over NATS", prompt)


async def over_http(http: httpx.AsyncClient, served: Served) -> Door:
    client = await client_of(http, served)

    async def prompt() -> None:
        task = await send(client, user_message(PROMPT))
        if task.status.state != TaskState.TASK_STATE_COMPLETED or answer_of(task) != ANSWER:
            raise RuntimeError(f"A2A over HTTP answered {task}")

    return Door("A2A 1.0 over HTTP", prompt)


def over_acp(agent: AcpAgent, recorder: RecordingClient) -> Door:
    sessions: list[str] = []

    async def new_session() -> None:
        recorder.updates.clear()
        created = await agent.connection.new_session(cwd=str(Path.cwd()), mcp_servers=[])
        sessions.append(str(created.session_id))

    async def prompt() -> None:
        response = await agent.prompt(sessions.pop(), PROMPT)
        if response.stop_reason != "end_turn" or recorder.agent_text() != ANSWER:
            raise RuntimeError(
                f"ACP answered {recorder.agent_text()!r}, stopping {response.stop_reason}"
            )

    return Door("ACP (fisk acp)", prompt, new_session)


@contextlib.asynccontextmanager
async def serve_and_acp(
    scratch: Path, api: FakeMessagesAPI, broker: EmbeddedBroker
) -> AsyncIterator[tuple[Served, AcpAgent, RecordingClient]]:
    """A `fisk serve` with the prompts channel and the A2A HTTP endpoint, and a `fisk acp`,
    both wrapping the same fake application with the same system prompt and model."""
    app = write_fake_app(
        scratch, application("ops", commands=[command("status", "Show fleet status")]), name="ops"
    )
    contexts = scratch / "xdg" / "nats" / "context"
    contexts.mkdir(parents=True)
    (contexts / "test.json").write_text(json.dumps({"url": broker.url, "token": broker.token}))
    environment = fisk_environment(scratch, api, extra={"XDG_CONFIG_HOME": str(scratch / "xdg")})
    setup = Setup(scratch, broker, api, app, environment)
    served = await start_serve(setup, setup.config())

    acp_home = scratch / "acp"
    acp_home.mkdir()
    acp_config = write_config(acp_home, application=app)
    fleet = Fleet(acp_home, acp_config, acp_home / "unused.jsonl")
    recorder = RecordingClient()
    try:
        async with fisk_acp(fleet, api, recorder) as agent:
            await agent.initialize()
            yield served, agent, recorder
    finally:
        if served.process.returncode is None:
            served.process.terminate()
            await asyncio.wait_for(served.process.wait(), DEADLINE)


def report(doors: list[Door]) -> None:
    baseline, *others = doors
    base50 = percentile(baseline.samples_ms, 0.5)
    base90 = percentile(baseline.samples_ms, 0.9)
    count = len(baseline.samples_ms)
    print(f"{count} prompts per door, one short text answer each, fake Messages API, loopback")
    print(f"  {'door':<22} {'p50 ms':>8} {'p90 ms':>8}   {'overhead p50':>13} {'p90':>9}  ratio")
    print(f"  {baseline.label:<22} {base50:8.2f} {base90:8.2f}   {'(baseline)':>13}")
    for door in others:
        p50 = percentile(door.samples_ms, 0.5)
        p90 = percentile(door.samples_ms, 0.9)
        overhead = p50 - base50
        verdict = "within" if overhead < TARGET_MS else "over"
        print(
            f"  {door.label:<22} {p50:8.2f} {p90:8.2f}   {overhead:+10.2f} ms"
            f" {p90 - base90:+7.2f}  {p50 / base50:5.2f}x  ({verdict} the {TARGET_MS:g} ms target)"
        )


async def main(prompts: int, warmup: int) -> None:
    rounds = warmup + prompts
    with (
        tempfile.TemporaryDirectory() as scratch,
        FakeMessagesAPI([reply(text(ANSWER)) for _ in range(3 * rounds)]) as api,
    ):
        async with (
            EmbeddedBroker() as broker,
            serve_and_acp(Path(scratch), api, broker) as (served, agent, recorder),
            httpx.AsyncClient(timeout=DEADLINE) as http,
        ):
            calling = NatsTransport(await broker.connect(name="bench"))
            doors = [over_nats(calling), await over_http(http, served), over_acp(agent, recorder)]
            for round_number in range(rounds):
                for door in doors:
                    await door.timed()
                if round_number == warmup - 1:
                    for door in doors:
                        door.samples_ms.clear()
            await calling.close()
            await calling.client.close()
    report(doors)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=21)
    parser.add_argument("--warmup", type=int, default=3)
    options = parser.parse_args()
    if locate_server_binary() is None:
        sys.exit("no nats-server binary beside this interpreter or on PATH")
    asyncio.run(main(options.prompts, options.warmup))
