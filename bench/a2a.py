"""What serving a tool over a2a costs, on loopback against the embedded nats-server.

- bare request/reply: one nats-py request answered by a subscriber echoing the bytes, the floor
  any exchange pays;
- a2a tool call: ``call_tool`` against a ``ToolsServer`` whose tool answers at once in process,
  so the figure is the protocol's own cost (encode and schema check both ways, the ack, the
  reply set on an inbox) and not a command's;
- served calls per second with max_concurrent_tools 4 and four callers, for the in-process tool
  and for a fake fisk application's command (a real process per call).

Latencies are p50 and p99 over sequential calls on one connection pair.

    python bench/a2a.py [--calls N] [--seconds S]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from fisk_ai.a2a.client import call_tool
from fisk_ai.a2a.nats import NatsTransport
from fisk_ai.a2a.transport import Delivery
from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from fisk_ai.llm.types import ToolDef
from fisk_ai.serve.tools import ToolsOptions, ToolsServer
from fisk_ai.tools.base import ExecDeps, Kind, Outcome, Presentation, Tool

IDENTITY = "bench"
REPO_ROOT = Path(__file__).resolve().parent.parent
WAIT = timedelta(seconds=30)


class InstantTool:
    name = "instant"
    description = "Answers at once"
    model_description = "Answers at once"
    input_schema: Mapping[str, Any] = {"type": "object"}
    kind = Kind.CUSTOM
    presentation = Presentation.TRACED
    mcp_exposable = True
    a2a_exposable = True

    def definition(self, defer_loading: bool) -> ToolDef:
        return ToolDef(self.name, self.description, self.input_schema)

    async def execute(self, arguments: str, deps: ExecDeps) -> Outcome:
        return Outcome("ok")


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def latencies(call: Callable[[], Awaitable[object]], calls: int) -> list[float]:
    for _ in range(min(50, calls)):
        await call()
    taken: list[float] = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        taken.append(time.perf_counter() - started)
    return taken


async def throughput(
    call: Callable[[], Awaitable[object]], callers: int, seconds: float
) -> tuple[float, int]:
    deadline = time.perf_counter() + seconds
    done = 0

    async def caller() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await call()
            done += 1

    started = time.perf_counter()
    await asyncio.gather(*(caller() for _ in range(callers)))
    return done / (time.perf_counter() - started), done


async def fake_command_tool(directory: Path) -> Tool:
    sys.path.insert(0, str(REPO_ROOT))
    from fisk_ai.tools.fiskapp.introspect import introspect
    from fisk_ai.tools.fiskapp.loader import load_application
    from tests.fakes.fiskapp import sample_model, write_fake_app

    app = write_fake_app(directory, sample_model(), name="ops")
    loaded = load_application(await introspect(str(app)), str(app))
    return next(tool for tool in loaded.tools if tool.name == "status")


async def main(calls: int, seconds: float) -> None:
    async with EmbeddedBroker() as broker:
        serving = NatsTransport(await broker.connect(name="server"))
        calling = NatsTransport(await broker.connect(name="caller"))

        async def echo(delivery: Delivery) -> None:
            await serving.publish(delivery.reply, delivery.data)

        await serving.subscribe("bench.echo", echo)
        payload = b'{"name":"instant","input":{}}'
        bare = await latencies(lambda: calling.request("bench.echo", payload, timeout=WAIT), calls)

        with tempfile.TemporaryDirectory() as scratch:
            command = await fake_command_tool(Path(scratch))
            server = ToolsServer(
                serving,
                [InstantTool(), command],
                ToolsOptions(
                    identity=IDENTITY, version="1.0.0", max_concurrent=4, tool_timeout=WAIT
                ),
            )
            await server.start()

            def tool(name: str) -> Callable[[], Awaitable[object]]:
                return lambda: call_tool(calling, IDENTITY, name, {}, request_timeout=WAIT)

            served = await latencies(tool("instant"), calls)
            instant_rate, instant_done = await throughput(tool("instant"), 4, seconds)
            command_rate, command_done = await throughput(tool("status"), 4, seconds)
            await server.close()
        await serving.close()
        await calling.close()
        await serving.client.close()
        await calling.client.close()

    def row(label: str, samples: list[float]) -> str:
        p50, p99 = percentile(samples, 0.5) * 1e3, percentile(samples, 0.99) * 1e3
        return f"{label:<28} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms"

    print(f"{calls} sequential calls each, loopback, embedded nats-server")
    print(row("bare NATS request/reply", bare))
    print(row("a2a tool call (in process)", served))
    overhead = statistics.median(served) - statistics.median(bare)
    print(f"{'a2a overhead at p50':<28} {overhead * 1e3:7.3f} ms")
    print(f"max_concurrent_tools 4, four callers, {seconds:g}s each:")
    print(f"{'  in-process tool':<28} {instant_rate:8.0f} calls/s ({instant_done} calls)")
    print(f"{'  fake fisk command':<28} {command_rate:8.0f} calls/s ({command_done} calls)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=3.0)
    options = parser.parse_args()
    if locate_server_binary() is None:
        sys.exit("no nats-server binary beside this interpreter or on PATH")
    asyncio.run(main(options.calls, options.seconds))
