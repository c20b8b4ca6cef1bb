"""A tool that cannot say whether it is confirmation-gated is served by neither surface: served
ungated, it would run unapproved the day it needed approval (architecture, "Serving surfaces
gate differently")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fisk_ai.llm.types import ToolDef
from fisk_ai.mcpserver.serving import select_mcp_tools
from fisk_ai.serve.tools import select_served_tools
from fisk_ai.tools.base import Confirmable, ExecDeps, Kind, Outcome, Presentation, Tool

UNCONFIRMABLE = "it cannot report whether it is confirmation-gated"


@dataclass(frozen=True)
class SilentTool:
    """Exposable on both surfaces, with no answer to whether a call must be approved."""

    name: str = "reboot"
    description: str = "Reboots the host"
    model_description: str = "Reboots the host"
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    kind: Kind = Kind.CUSTOM
    presentation: Presentation = Presentation.TRACED
    mcp_exposable: bool = True
    a2a_exposable: bool = True

    def definition(self, defer_loading: bool) -> ToolDef:
        return ToolDef(self.name, self.description, self.input_schema)

    async def execute(self, arguments: str, deps: ExecDeps) -> Outcome:
        return Outcome("rebooted")


def test_the_silent_tool_is_a_tool_that_cannot_answer_confirmable() -> None:
    tool = SilentTool()
    assert isinstance(tool, Tool)
    assert not isinstance(tool, Confirmable)


def test_fisk_mcp_refuses_a_tool_that_cannot_say_whether_it_is_gated() -> None:
    selection = select_mcp_tools([SilentTool()])

    assert selection.exposed == ()
    assert selection.unservable == (("reboot", UNCONFIRMABLE),)


def test_serving_tools_over_a2a_refuses_a_tool_that_cannot_say_whether_it_is_gated() -> None:
    selection = select_served_tools([SilentTool()])

    assert selection.exposed == ()
    assert selection.unservable == (("reboot", UNCONFIRMABLE),)
