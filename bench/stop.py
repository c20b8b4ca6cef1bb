"""How long a stop takes to end a turn whose model reply never comes, beside a bare cancel.

The model is the real anthropic SDK against the local fake Messages API, holding every reply, so
each turn sits in its model call until it is stopped. Measured, from the stop request to the
turn's result saying suspended:

- engine: a Runner with the file session store; the stop is its suspend event being set (what a
  cancel does inside the hosted agent);
- terminal: the path Esc and Ctrl-C take in the workstation (and Ctrl-C in line mode): the
  conversation's ``stop`` sends the a2a cancel through the embedded nats-server to the agent
  `fisk run` hosts, and the suspended terminal message comes back the same way;
- baseline: a bare ``asyncio`` task blocked in the SDK's ``messages.create`` against the same
  held fake, cancelled and awaited: the floor of dropping a model call in flight.

Each figure is the median (and the 90th percentile) of ``--stops`` stops, with the baseline
measured in the same run; the ratio is the median against the baseline's median. The issue's
budget is Esc to the status bar saying stopped under 100 ms, of which the status bar's own share
is timed by bench/workstation.py. Nothing is asserted.

    python bench/stop.py [--stops N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from fisk_ai.agent.outcome import RunResult, Suspended  # noqa: E402
from fisk_ai.agent.resources import ProviderOptions, Resources  # noqa: E402
from fisk_ai.agent.runner import Runner  # noqa: E402
from fisk_ai.agent.settings import AgentSettings  # noqa: E402
from fisk_ai.llm.anthropic import AnthropicProvider  # noqa: E402
from fisk_ai.serve.hosted import RunOptions, hosted_run  # noqa: E402
from fisk_ai.sessions import FileSessionStore  # noqa: E402
from fisk_ai.tools.toolset import ToolSet  # noqa: E402
from tests.e2e.agent_runs import write_config  # noqa: E402
from tests.fakes.events import RecordingSink  # noqa: E402
from tests.fakes.fiskapp import application, command, write_fake_app  # noqa: E402
from tests.fakes.messages_api import reply, text  # noqa: E402
from tests.fakes.prompter import ScriptedPrompter  # noqa: E402
from tests.fakes.watched_messages_api import WatchedMessagesAPI  # noqa: E402

BUDGET_MS = 100.0
API_KEY = "sk-bench"


def held_api(stops: int) -> WatchedMessagesAPI:
    """The fake, every one of whose ``stops`` replies is held until it stops."""
    api = WatchedMessagesAPI([reply(text("never read"))] * stops)
    for number in range(1, stops + 1):
        api.hold(number)
    return api


async def stopped_after(
    running: asyncio.Task[RunResult], api: WatchedMessagesAPI, stop: Callable[[], Awaitable[None]]
) -> float:
    """Seconds from ``stop`` to ``running`` returning suspended, once its request is out."""
    await api.arrived()
    began = time.perf_counter()
    await stop()
    result = await running
    elapsed = time.perf_counter() - began
    if not isinstance(result.outcome, Suspended):
        raise RuntimeError(f"the stopped turn ended {result.outcome!r}, not suspended")
    return elapsed


async def engine_stops(stops: int, directory: Path) -> list[float]:
    settings = AgentSettings(model="bench", max_iterations=5, max_tokens=10**9)
    samples = []
    with held_api(stops) as api:
        provider = AnthropicProvider(API_KEY, base_url=api.base_url, max_retries=0)
        store = FileSessionStore(directory / "engine")
        try:
            for _ in range(stops):
                suspend = asyncio.Event()
                resources = Resources(settings, provider, ToolSet(), store)
                async with Runner(resources, events=RecordingSink(), suspend=suspend) as runner:
                    running = asyncio.create_task(runner.start("go"))

                    async def stop(event: asyncio.Event = suspend) -> None:
                        event.set()

                    samples.append(await stopped_after(running, api, stop))
        finally:
            await provider.aclose()
    return samples


async def terminal_stops(stops: int, directory: Path) -> list[float]:
    status = command("status", "Show status")
    config = write_config(
        directory,
        application=write_fake_app(directory, application("ops", commands=[status]), name="ops"),
    )
    samples = []
    with held_api(stops) as api:
        options = RunOptions(
            config=str(config),
            prompt="",
            state_dir=str(directory / "terminal"),
            provider=ProviderOptions(api_key=API_KEY, base_url=api.base_url),
        )
        warnings: list[str] = []
        async with hosted_run(
            options,
            events=RecordingSink(),
            prompter_for=lambda reporter: ScriptedPrompter(),
            warn=warnings.append,
            interactive=True,
        ) as hosted:
            conversation = hosted.conversation
            for _ in range(stops):
                conversation.clear()
                running = asyncio.create_task(conversation.start("go"))
                samples.append(await stopped_after(running, api, conversation.stop))
    return samples


async def bare_cancels(stops: int) -> list[float]:
    import anthropic

    samples = []
    with held_api(stops) as api:
        client = anthropic.AsyncAnthropic(api_key=API_KEY, base_url=api.base_url, max_retries=0)
        try:
            for _ in range(stops):
                request = asyncio.create_task(
                    client.messages.create(
                        model="bench",
                        max_tokens=16,
                        messages=[{"role": "user", "content": "go"}],
                    )
                )
                await api.arrived()
                began = time.perf_counter()
                request.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await request
                samples.append(time.perf_counter() - began)
        finally:
            await client.close()
    return samples


def milliseconds(samples: list[float]) -> tuple[float, float]:
    """The median and the 90th percentile, in milliseconds."""
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p90 * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--stops", type=int, default=20, help="stops measured per figure")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fisk-bench-stop-") as scratch:
        directory = Path(scratch)
        bare = milliseconds(asyncio.run(bare_cancels(options.stops)))
        engine = milliseconds(asyncio.run(engine_stops(options.stops, directory)))
        terminal = milliseconds(asyncio.run(terminal_stops(options.stops, directory)))
    print(f"{options.stops} stops each, the model reply held; median / p90")
    print(f"{'figure':<58} {'median':>9} {'p90':>9} {'ratio':>8}")
    rows = (
        ("bare: cancel a task blocked in messages.create", bare),
        ("engine: suspend set -> Runner returns suspended", engine),
        ("terminal: conversation.stop() -> suspended over a2a", terminal),
    )
    for name, (median, p90) in rows:
        ratio = median / bare[0] if bare[0] else float("nan")
        print(f"{name:<58} {median:>7.2f}ms {p90:>7.2f}ms {ratio:>7.1f}x")
    print(f"budget: Esc to the status bar saying stopped < {BUDGET_MS:.0f} ms (screen included)")


if __name__ == "__main__":
    main()
