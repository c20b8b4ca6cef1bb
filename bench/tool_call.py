"""What the loop costs around one call to an application command, beside a bare baseline.

The command is a real ``FiskCommandTool`` loaded from an introspection model (so its arguments
are decoded, checked against the command's schema and rendered to an argument vector exactly as
in a run), but its process is not spawned: ``run_command`` answers at once, so the figure is the
loop's own work per call, not a fork's. Two runs are measured, each a Runner over an in-memory
session store whose model asks for the command on every iteration but the last:

- ungated: ``stream ls`` (no approval);
- gated: ``stream rm`` (``ai:confirm``), approved once per call by an operator who always says
  yes, so the trace line, the approval question, the gate and the execution all read the call.

The baseline is the same number of bare awaits of the model and of the instant process run,
with the same argument vector. Time is the process's CPU time, and each figure the fastest of 101
repetitions, so a busy machine disturbs it least; the baseline is measured in each repetition
too. Nothing is asserted.

    python bench/tool_call.py [--iterations N]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

# bench/agent.py, beside this script: the instant model, the in-memory store, the silent sink.
from agent import InstantModel, MemoryStore, NoEvents  # noqa: E402

import fisk_ai.tools.fiskapp.tool as command_tool  # noqa: E402
from fisk_ai.agent.resources import Resources  # noqa: E402
from fisk_ai.agent.runner import Runner  # noqa: E402
from fisk_ai.agent.settings import AgentSettings  # noqa: E402
from fisk_ai.llm.types import Message, Request, Role, ToolUseBlock, user_text  # noqa: E402
from fisk_ai.tools.fiskapp.execute import CommandRun  # noqa: E402
from fisk_ai.tools.fiskapp.loader import load_application  # noqa: E402
from fisk_ai.tools.fiskapp.model import ApplicationModel  # noqa: E402
from fisk_ai.tools.questions import Answer, ApprovalChoice, Question  # noqa: E402
from fisk_ai.tools.toolset import ToolSet, ToolSource  # noqa: E402
from tests.fakes.fiskapp import application, arg, command, flag  # noqa: E402

REPETITIONS = 101
ARGUMENTS = '{"stream": "ORDERS", "force": true, "limit": "20"}'
ARGV = ("stream", "ls", "--force", "--limit=20", "--", "ORDERS")
COMMAND_OUTPUT = "x" * 400
INSTANT_RUN = CommandRun(COMMAND_OUTPUT, truncated=False, exit_code=0, timed_out=False)


async def instant_run(app_path: str, argv: Sequence[str], **options: Any) -> CommandRun:
    return INSTANT_RUN


def ops_model() -> dict[str, Any]:
    flags = [flag("force", "Do not prompt", boolean=True), flag("limit", "At most this many")]
    stream = [arg("stream", "Stream name", required=True)]
    return application(
        "ops",
        commands=[
            command(
                "stream",
                "Streams",
                commands=[
                    command("ls", "List streams", flags=flags, args=stream),
                    command("rm", "Remove", tags=["ai:confirm"], flags=flags, args=stream),
                ],
            )
        ],
    )


class CommandModel(InstantModel):
    """Asks for ``tool_name`` with the same arguments on every call but the last."""

    def __init__(self, iterations: int, tool_name: str) -> None:
        super().__init__(iterations)
        self._calls = [
            type(response)(
                Message(Role.ASSISTANT, (ToolUseBlock(f"tu_{number}", tool_name, ARGUMENTS),)),
                response.stop_reason,
                response.usage,
            )
            for number, response in enumerate(self._calls, start=1)
        ]


class AlwaysYes:
    def can_prompt(self) -> bool:
        return True

    async def ask(self, question: Question) -> Answer:
        return ApprovalChoice.ONCE


def command_tools() -> ToolSet:
    loaded = load_application(ApplicationModel.model_validate(ops_model()), "/bin/true")
    return ToolSet([ToolSource("ops", tuple(loaded.tools))])


async def runner_seconds(iterations: int, tool_name: str) -> float:
    settings = AgentSettings(
        model="bench", max_iterations=iterations + 1, max_tokens=10**12, system_prompt="bench"
    )
    model = CommandModel(iterations, tool_name)
    resources = Resources(settings, model, command_tools(), MemoryStore())
    runner = Runner(resources, events=NoEvents(), prompter=AlwaysYes())
    started = time.process_time()
    async with runner:
        result = await runner.start("go")
    elapsed = time.process_time() - started
    if result.llm_calls != iterations:
        raise RuntimeError(f"the runner made {result.llm_calls} calls, not {iterations}")
    return elapsed


async def bare_seconds(iterations: int, tool_name: str) -> float:
    model = CommandModel(iterations, tool_name)
    request = Request(model="bench", system=("bench",), messages=(user_text("go"),))
    started = time.process_time()
    for _ in range(iterations):
        await model.call(request)
        await instant_run("/bin/true", ARGV)
    return time.process_time() - started


def per_call_ms(iterations: int, tool_name: str, repetitions: int) -> tuple[float, float]:
    """The fastest milliseconds per iteration of the runner and of the bare awaits."""
    runs, bares = [], []
    for _ in range(repetitions):
        runs.append(asyncio.run(runner_seconds(iterations, tool_name)))
        bares.append(asyncio.run(bare_seconds(iterations, tool_name)))
    return (
        min(runs) * 1000 / iterations,
        min(bares) * 1000 / iterations,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    # Short runs, many of them: a long conversation would add its own growth to every call.
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--repetitions", type=int, default=REPETITIONS)
    options = parser.parse_args()
    # The process is the tool's cost, not the loop's: it answers at once here.
    command_tool.run_command = instant_run  # type: ignore[attr-defined,assignment]
    rows: Mapping[str, str] = {"ungated": "stream_ls", "gated": "stream_rm"}
    print(f"{'call':<10}{'loop ms/call':>14}{'bare ms/call':>14}{'overhead ms':>13}{'ratio':>8}")
    for label, tool_name in rows.items():
        loop, bare = per_call_ms(options.iterations, tool_name, options.repetitions)
        print(f"{label:<10}{loop:>14.3f}{bare:>14.4f}{loop - bare:>13.3f}{loop / bare:>8.0f}")


if __name__ == "__main__":
    main()
