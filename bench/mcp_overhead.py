"""What MCP costs on top of the work it carries, both directions, each beside its baseline.

- served: a command of a fake fisk application run bare (``tool.execute``, a real process per
  call) against the same command called through `fisk mcp`'s server by the SDK's own client
  over streamable HTTP on loopback; the difference is the serving overhead;
- served, instant: the same against a tool that answers at once in process, over each protocol
  era (2026-07-28 and the initialize handshake), so the overhead is not lost in a process
  start's jitter;
- imported: a direct SDK ``call_tool`` to the SDK-written echo server of the tests (stdio)
  against the same call made through an imported tool (``McpTool.execute`` over a shared
  session); the difference is the import overhead.

Latencies are p50 and p99 over sequential calls.

    python bench/mcp_overhead.py [--calls N]

(Not bench/mcp.py: run as a script, that name would shadow the mcp package it measures.)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from fisk_ai.config.models import McpClient  # noqa: E402
from fisk_ai.llm.types import ToolDef  # noqa: E402
from fisk_ai.mcpserver.serving import ServeOptions, ToolCalls, build_server  # noqa: E402
from fisk_ai.tools.base import ExecDeps, Kind, Outcome, Presentation, Tool  # noqa: E402
from fisk_ai.tools.fiskapp.introspect import introspect  # noqa: E402
from fisk_ai.tools.fiskapp.loader import load_application  # noqa: E402
from fisk_ai.tools.mcp.sessions import open_mcp_sessions  # noqa: E402
from tests.fakes.fiskapp import application, command, write_fake_app  # noqa: E402
from tests.mcp.conftest import ECHO_SERVER, served_over_http  # noqa: E402


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def timed(call: Callable[[], Awaitable[object]], calls: int) -> list[float]:
    for _ in range(max(3, calls // 10)):
        await call()
    samples: list[float] = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def report(label: str, samples: list[float]) -> float:
    p50 = statistics.median(samples)
    print(f"  {label:<34} p50 {p50:7.2f} ms   p99 {percentile(samples, 0.99):7.2f} ms")
    return p50


async def served(calls: int, directory: Path) -> None:
    from mcp import Client

    app = write_fake_app(directory, application("ops", commands=[command("status", "Health")]))
    tools: tuple[Tool, ...] = tuple(load_application(await introspect(str(app)), str(app)).tools)
    status = tools[0]
    bare = await timed(lambda: status.execute("{}", ExecDeps()), calls)
    server = build_server(ToolCalls(tools, ServeOptions(name="bench", version="1")))
    async with (
        served_over_http(server.streamable_http_app(streamable_http_path="/mcp")) as url,
        Client(url) as client,
    ):
        over = await timed(lambda: client.call_tool("status", {}), calls)
    print("served (fisk mcp):")
    base = report("bare command execution", bare)
    total = report("tools/call over streamable HTTP", over)
    print(f"  {'overhead':<34} p50 {total - base:7.2f} ms")


@dataclass
class Instant:
    """A served tool that answers at once, in process."""

    name: str = "instant"
    description: str = "Answers at once."
    model_description: str = "Answers at once."
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    tags: tuple[str, ...] = ()
    kind: Kind = Kind.CUSTOM
    presentation: Presentation = Presentation.TRACED
    mcp_exposable: bool = True
    a2a_exposable: bool = False

    def confirm_trigger(self, confirm_tags: object) -> str | None:
        return None

    def definition(self, defer_loading: bool) -> ToolDef:
        return ToolDef(self.name, self.description, self.input_schema, defer_loading)

    async def execute(self, arguments: str, deps: ExecDeps) -> Outcome:
        return Outcome("done")


async def served_instant(calls: int) -> None:
    from mcp import Client

    tool = Instant()
    bare = await timed(lambda: tool.execute("{}", ExecDeps()), calls)
    server = build_server(ToolCalls((tool,), ServeOptions(name="bench", version="1")))
    print("served, instant tool (fisk mcp):")
    base = report("bare execute (in process)", bare)
    async with served_over_http(server.streamable_http_app(streamable_http_path="/mcp")) as url:
        for era, mode in (("2026-07-28", "2026-07-28"), ("handshake", "legacy")):
            async with Client(url, mode=mode) as client:
                over = await timed(lambda: client.call_tool("instant", {}), calls)
            total = report(f"tools/call, {era} era", over)
            print(f"  {'overhead':<34} p50 {total - base:7.2f} ms")


async def imported(calls: int) -> None:
    from mcp import Client, StdioServerParameters

    direct_target = StdioServerParameters(command=sys.executable, args=[str(ECHO_SERVER)])
    async with Client(direct_target) as client:
        direct = await timed(lambda: client.call_tool("add", {"a": 1, "b": 2}), calls)
    entry = McpClient(name="echo", alias="echo", command=sys.executable, args=[str(ECHO_SERVER)])
    async with open_mcp_sessions([entry]) as sessions:
        add = next(tool for tool in sessions.tools if tool.name == "echo_add")
        through = await timed(lambda: add.execute('{"a": 1, "b": 2}', ExecDeps()), calls)
    print("imported (mcp_clients):")
    base = report("direct SDK call_tool (stdio)", direct)
    total = report("imported tool execute", through)
    print(f"  {'overhead':<34} p50 {total - base:7.2f} ms")


async def main(calls: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        await served(calls, Path(directory))
    await served_instant(calls)
    await imported(calls)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    asyncio.run(main(parser.parse_args().calls))
