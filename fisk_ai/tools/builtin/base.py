"""What the built-in tools share: the human-in-the-loop questions, memory and knowledge.

A built-in is always sent to the model in full, never deferred behind tool search, since a
tool the model cannot see is one it works around; it is served to nobody unless a surface says
so; and it checks its arguments against its own schema before doing anything, answering a bad
call with an error result the model can correct.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from fisk_ai.llm.types import ToolDef
from fisk_ai.tools.base import ExecDeps, Kind, Outcome, Presentation
from fisk_ai.tools.prepared import PreparedCall, prepare_call
from fisk_ai.tools.validation import ArgumentsError, parse_arguments

__all__ = ["BuiltinTool", "TracedBuiltin"]


class BuiltinTool:
    name: str
    description: str
    input_schema: Mapping[str, Any]

    @property
    def model_description(self) -> str:
        return self.description

    @property
    def kind(self) -> Kind:
        return Kind.BUILTIN

    @property
    def presentation(self) -> Presentation:
        return Presentation.TRACED

    @property
    def mcp_exposable(self) -> bool:
        return False

    @property
    def a2a_exposable(self) -> bool:
        return False

    def definition(self, defer_loading: bool) -> ToolDef:
        return ToolDef(self.name, self.model_description, self.input_schema, defer_loading=False)

    async def execute(self, arguments: str, deps: ExecDeps) -> Outcome:
        return await self.execute_prepared(prepare_call(self, arguments), deps)

    async def execute_prepared(self, call: PreparedCall, deps: ExecDeps) -> Outcome:
        """Run the call's checked arguments, or answer with what is wrong with them."""
        if call.problem is not None:
            return Outcome(call.problem, is_error=True)
        return await self.run(call.arguments, deps)

    async def run(self, arguments: Mapping[str, Any], deps: ExecDeps) -> Outcome:
        """Do the tool's work with arguments its schema accepts."""
        raise NotImplementedError


class TracedBuiltin(BuiltinTool):
    """A built-in whose trace line is its name and the one argument that says what it is about:
    ``-> memory_read build.notes``, ``-> knowledge_search retention``."""

    traced_argument: ClassVar[str]

    @property
    def command_line(self) -> str:
        return self.name

    def argv(self, arguments: Mapping[str, Any]) -> list[str]:
        value = arguments.get(self.traced_argument)
        return [self.name, value] if isinstance(value, str) and value else [self.name]

    def display(self, arguments: str) -> str:
        try:
            parsed = parse_arguments(self.name, arguments)
        except ArgumentsError:
            return self.name
        return " ".join(self.argv(parsed))
