"""A tool call parsed once: its arguments decoded, checked and rendered to an argument vector.

Every reader of a call takes the same prepared value: the trace line, the approval question, the
confirm gate, the journal and the tool that executes it. So the argument vector an operator is
shown is, by construction, the one the command runs with. A server taking calls from outside
(MCP, a2a) prepares them at its own edge with the same function.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from fisk_ai.llm.types import ToolUseBlock
from fisk_ai.tools.base import ExecDeps, Outcome, ShowsCommand, Tool
from fisk_ai.tools.validation import (
    ArgumentsError,
    parse_arguments,
    rendered_argv,
    validate_arguments,
)

__all__ = [
    "ExecutesPrepared",
    "PreparedCall",
    "prepare_call",
    "readable_arguments",
    "shown_argv",
]


@dataclass(frozen=True)
class PreparedCall:
    """One call to ``tool`` as it will run.

    ``input`` is the raw JSON text (after any PreToolUse rewrite), ``arguments`` its decoding
    ({} when it cannot be read), ``argv`` the vector after the application path that a command
    runs with and a surface shows (empty for a tool that runs no command; the bare command path
    when the arguments cannot be rendered), and ``problem`` why the call cannot run, or None.
    """

    tool: Tool
    input: str
    arguments: Mapping[str, Any]
    argv: tuple[str, ...]
    problem: str | None
    readable: bool = True
    """Whether ``input`` decoded to an object; a rewrite that is unreadable aborts the run."""
    call_id: str = ""

    @property
    def display(self) -> str:
        """The call as an operator reads it: the command line it runs, or the tool's name."""
        if isinstance(self.tool, ShowsCommand):
            return " ".join(self.argv)
        return f"{self.tool.name} {self.input}".strip()

    @property
    def block(self) -> ToolUseBlock:
        """The call as a hook reads it: its id, the tool it runs, its arguments' text."""
        return ToolUseBlock(self.call_id, self.tool.name, self.input)

    async def execute(self, deps: ExecDeps) -> Outcome:
        """Run the call. A tool that takes a prepared call runs exactly this one; any other
        tool is handed the raw text."""
        if isinstance(self.tool, ExecutesPrepared):
            return await self.tool.execute_prepared(self, deps)
        return await self.tool.execute(self.input, deps)


@runtime_checkable
class ExecutesPrepared(Protocol):
    """A tool that runs a prepared call as it stands, without decoding or rendering it again."""

    async def execute_prepared(self, call: PreparedCall, deps: ExecDeps) -> Outcome: ...


def prepare_call(tool: Tool, arguments_text: str, *, call_id: str = "") -> PreparedCall:
    """Decode, validate and render ``arguments_text`` for ``tool``, each exactly once.

    The problem, when there is one, is the first of: arguments that cannot be read, arguments
    the schema refuses, arguments a command cannot build an argument vector from.
    """
    try:
        arguments: Mapping[str, Any] = parse_arguments(tool.name, arguments_text)
    except ArgumentsError as exc:
        argv, _ = rendered_argv(tool, {})
        return PreparedCall(
            tool, arguments_text, {}, argv, str(exc), readable=False, call_id=call_id
        )
    problem = validate_arguments(tool.name, tool.input_schema, arguments)
    argv, unrenderable = rendered_argv(tool, arguments)
    return PreparedCall(
        tool, arguments_text, arguments, argv, problem or unrenderable, call_id=call_id
    )


def readable_arguments(tool_name: str, arguments_text: str) -> Mapping[str, Any]:
    """A call's arguments as a surface shows them: {} when the text is not an object."""
    try:
        return parse_arguments(tool_name, arguments_text)
    except ArgumentsError:
        return {}


def shown_argv(tool: Tool | None, arguments: Mapping[str, Any]) -> tuple[str, ...]:
    """The argument vector a call to ``tool`` shows, for a call that was never prepared (one
    read back from a journal)."""
    if tool is None:
        return ()
    return rendered_argv(tool, arguments)[0]
