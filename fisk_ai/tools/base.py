"""The Tool contract every source of tools implements, and the values a tool call produces.

Kind-specific policy stays out of ``Tool``: a consumer that needs to know about gating or behaviour
asks for the narrow capability protocols (``Confirmable``, ``BehaviorDescriber``) instead.
Exposure over MCP and a2a is the deliberate exception, so every new kind must answer it.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from fisk_ai.llm.types import ToolDef
from fisk_ai.tools.questions import Prompter
from fisk_ai.tools.tags import Behavior


class Kind(enum.Enum):
    """Where a tool comes from; the label logs and metrics carry."""

    APPLICATION = "application"
    BUILTIN = "builtin"
    REMOTE = "remote"
    CUSTOM = "custom"
    MCP = "mcp"
    UNKNOWN = "unknown"


class Presentation(enum.Enum):
    """How a surface shows a call to the tool, independent of where the tool comes from."""

    COMMAND = "command"
    REMOTE = "remote"
    SELF_RENDERED = "self_rendered"
    TRACED = "traced"


@dataclass(frozen=True)
class ExecRecord:
    """What ran when a tool call executed a command.

    ``command`` is the command line as an operator would type it after the application path.
    """

    command: str
    exit_code: int
    truncated: bool = False


@dataclass(frozen=True)
class Deferral:
    """A tool's word that it started the work and will answer later, out of band.

    ``note`` tells the operator what the call waits for (shown by ``fisk session show``);
    ``handle`` is the tool's own reference to the work, kept in the journal for whoever answers.
    """

    note: str = ""
    handle: str = ""


@dataclass(frozen=True)
class Outcome:
    """The answer to one tool call, or, with ``deferral``, the promise of one.

    The exec record is the discriminator: with it, ``output`` is a command's captured output and
    the model is sent the CommandResult envelope; without it, ``output`` is passed through as is.
    An outcome carrying a deferral is not a result: the call is journaled as deferred, its
    ``output`` is ignored, and the run suspends until somebody supplies the answer.
    """

    output: str = ""
    is_error: bool = False
    exec: ExecRecord | None = None
    deferral: Deferral | None = None
    timed_out: bool = False
    """The tool ran out of its time limit and was stopped; ``output`` says so to the model."""

    @property
    def model_content(self) -> str:
        """The text the model receives as the tool result."""
        if self.exec is None:
            return self.output
        envelope: dict[str, Any] = {
            "command": self.exec.command,
            "exit_code": self.exec.exit_code,
            "output": self.output,
        }
        if self.exec.truncated:
            envelope["truncated"] = True
        return json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class ExecDeps:
    """What the caller lends a tool for one call.

    ``timeout`` of None (or zero) means no limit. ``timeout_setting`` names the configuration key
    the timeout came from, so a timeout message tells the operator what to raise. ``prompter`` is
    lent only to a tool that asks a person something; None means nobody can be asked.
    """

    work_dir: Path | None = None
    timeout: timedelta | None = None
    timeout_setting: str = "harness.tool_timeout"
    prompter: Prompter | None = None


@runtime_checkable
class Tool(Protocol):
    """One tool the model can call, whatever its source."""

    @property
    def name(self) -> str:
        """The flat name the model addresses the tool by."""
        ...

    @property
    def description(self) -> str:
        """The plain help an operator sees in listings."""
        ...

    @property
    def model_description(self) -> str:
        """The description the model sees, which may carry more than the human one."""
        ...

    @property
    def input_schema(self) -> Mapping[str, Any]:
        """A JSON Schema object whose root type is object."""
        ...

    @property
    def kind(self) -> Kind: ...

    @property
    def presentation(self) -> Presentation: ...

    @property
    def mcp_exposable(self) -> bool: ...

    @property
    def a2a_exposable(self) -> bool: ...

    def definition(self, defer_loading: bool) -> ToolDef:
        """What a provider is told about this tool."""
        ...

    async def execute(self, arguments: str, deps: ExecDeps) -> Outcome:
        """Run one call; ``arguments`` is the raw JSON text, where "" and "null" mean {}."""
        ...


@runtime_checkable
class Confirmable(Protocol):
    """A tool that can say whether an operator must approve a call before it runs."""

    @property
    def tags(self) -> Sequence[str]: ...

    def confirm_trigger(self, confirm_tags: Sequence[str]) -> str | None:
        """The tag that gates this tool under ``confirm_tags``, or None when it is not gated."""
        ...


@runtime_checkable
class BehaviorDescriber(Protocol):
    """A tool that can describe what a call does. A tool without it gets conservative defaults."""

    def behavior(self) -> Behavior: ...


@runtime_checkable
class ShowsCommand(Protocol):
    """A tool that runs a command and can show the command line a call would run."""

    @property
    def command_line(self) -> str:
        """The command path as an operator types it, without arguments."""
        ...

    def argv(self, arguments: Mapping[str, Any]) -> list[str]:
        """The argument vector after the application path; raises ValueError when the
        arguments cannot be rendered."""
        ...

    def display(self, arguments: str) -> str: ...


@runtime_checkable
class AsksOperator(Protocol):
    """A tool whose call waits on a person: it is lent the run's prompter, and the tool timeout
    does not apply to it, since the deadline would cancel the operator's own question."""

    @property
    def asks_operator(self) -> bool: ...
