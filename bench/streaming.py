"""What a streaming run sends over a2a, beside what it reads from the model.

A prompts engine on the embedded nats-server answers one turn with the real provider against the
fake Messages API, which streams a long answer at a steady pace (one piece of ``--chars`` characters
every ``--delay`` seconds, about one token each). A caller asking for deltas counts the piece
messages it receives. Printed: the pieces (tokens) a second the provider read, the piece messages
a second the caller got, and their ratio, beside the serving side's cap of one message every 50 ms.

    python bench/streaming.py [--tokens N] [--delay S] [--chars C]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from fisk_ai.a2a.events import delta_from_message  # noqa: E402
from fisk_ai.a2a.messages import EventMessage, TerminalResult, UnknownEvent  # noqa: E402
from fisk_ai.a2a.nats import NatsTransport  # noqa: E402
from fisk_ai.a2a.prompts_client import PromptsClient, TurnOptions  # noqa: E402
from fisk_ai.agent.resources import Resources  # noqa: E402
from fisk_ai.agent.settings import AgentSettings  # noqa: E402
from fisk_ai.broker.server import EmbeddedBroker  # noqa: E402
from fisk_ai.llm.anthropic import AnthropicProvider  # noqa: E402
from fisk_ai.serve.prompts import PromptsOptions, PromptsServer  # noqa: E402
from fisk_ai.serve.prompts.turn import DELTA_INTERVAL  # noqa: E402
from fisk_ai.sessions.file import FileSessionStore  # noqa: E402
from fisk_ai.tools.toolset import ToolSet  # noqa: E402
from tests.fakes.messages_api import FakeMessagesAPI, reply, text  # noqa: E402

IDENTITY = "bench"
WAIT = timedelta(seconds=60)


async def streamed_turn(tokens: int, delay: float, chars: int, directory: Path) -> None:
    answer = ("word " * (tokens * chars // 5 + 1))[: tokens * chars]
    settings = AgentSettings(model="bench", max_iterations=2, max_tokens=10**9)
    with FakeMessagesAPI([reply(text(answer), chunk=chars, chunk_delay=delay)]) as api:
        provider = AnthropicProvider("sk-bench", base_url=api.base_url, max_retries=0)
        async with EmbeddedBroker() as broker:
            serving = NatsTransport(await broker.connect(name="server"))
            calling = NatsTransport(await broker.connect(name="caller"))
            server = PromptsServer(
                serving,
                Resources(settings, provider, ToolSet(), FileSessionStore(directory)),
                PromptsOptions(identity=IDENTITY, workers=1, request_timeout=WAIT),
            )
            await server.start()
            pieces: list[float] = []
            joined: list[str] = []

            def take(message: EventMessage | UnknownEvent) -> None:
                piece = delta_from_message(message)
                if piece is not None:
                    pieces.append(time.perf_counter())
                    joined.append(piece.text)

            client = PromptsClient(calling, IDENTITY, request_timeout=WAIT)
            began = time.perf_counter()
            result = await client.ask("go", options=TurnOptions(deltas=True, on_event=take))
            elapsed = time.perf_counter() - began
            await server.close()
            for transport in (serving, calling):
                await transport.close()
                await transport.client.close()
        await provider.aclose()
    if not isinstance(result, TerminalResult) or "".join(joined) != answer:
        raise RuntimeError("the streamed turn did not deliver the whole answer in its pieces")
    streaming = pieces[-1] - pieces[0] if len(pieces) > 1 else elapsed
    read_rate = tokens / streaming
    sent_rate = (len(pieces) - 1) / streaming
    print(f"answer: {tokens} pieces of {chars} characters, one every {delay * 1000:g} ms")
    print(f"turn: {elapsed:.2f}s; streaming {streaming:.2f}s")
    print(f"read from the model: {read_rate:.0f} tokens/s")
    print(f"sent to the caller: {len(pieces)} piece messages, {sent_rate:.1f} messages/s")
    print(f"ratio: {sent_rate / read_rate:.3f} messages per token (cap {1 / DELTA_INTERVAL:g}/s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--delay", type=float, default=0.005)
    parser.add_argument("--chars", type=int, default=4)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        asyncio.run(streamed_turn(options.tokens, options.delay, options.chars, Path(directory)))


if __name__ == "__main__":
    main()
