"""What a tool another party runs has in common, whether an a2a peer or an MCP server runs it.

Such a tool is never served on (neither over MCP nor over a2a), never gated here (its owner
decides), shown as where it runs rather than as a command line, and deferred behind tool search
like any other when there are many.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from fisk_ai.llm.types import ResultImage, ToolDef
from fisk_ai.tools.base import ExecDeps, Kind, Outcome, Presentation
from fisk_ai.tools.prepared import PreparedCall, prepare_call

__all__ = ["ImportedOutcome", "ImportedTool", "ResultImage"]


@dataclass(frozen=True)
class ImportedOutcome(Outcome):
    """An imported tool's answer: the text (which names each image in its place) and the
    images themselves, sent to the model as image blocks beside the text."""

    images: tuple[ResultImage, ...] = ()


class ImportedTool:
    """``origin`` names what runs it (``remote``, ``mcp``) in the call line:
    ``stream_ls (remote nats)``."""

    name: str
    alias: str
    description: str
    input_schema: Mapping[str, Any]
    origin: ClassVar[str]

    @property
    def model_description(self) -> str:
        return self.description

    @property
    def kind(self) -> Kind:
        raise NotImplementedError

    @property
    def presentation(self) -> Presentation:
        return Presentation.REMOTE

    @property
    def mcp_exposable(self) -> bool:
        return False

    @property
    def a2a_exposable(self) -> bool:
        return False

    @property
    def command_line(self) -> str:
        return self.display("")

    def argv(self, arguments: Mapping[str, Any]) -> list[str]:
        """The call line's words: nothing runs here, so it shows where it runs."""
        return [self.name, f"({self.origin}", f"{self.alias})"]

    def display(self, arguments: str) -> str:
        return f"{self.name} ({self.origin} {self.alias})"

    def definition(self, defer_loading: bool) -> ToolDef:
        return ToolDef(self.name, self.model_description, self.input_schema, defer_loading)

    async def execute(self, arguments: str, deps: ExecDeps) -> Outcome:
        return await self.execute_prepared(prepare_call(self, arguments), deps)

    async def execute_prepared(self, call: PreparedCall, deps: ExecDeps) -> Outcome:
        """Send the call's checked arguments to whoever runs the tool."""
        if call.problem is not None:
            return Outcome(call.problem, is_error=True)
        return await self.forward(call.arguments)

    async def forward(self, arguments: Mapping[str, Any]) -> Outcome:
        """The answer of the party that runs the tool."""
        raise NotImplementedError
