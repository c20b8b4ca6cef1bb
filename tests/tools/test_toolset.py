from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from fisk_ai.llm.types import ToolDef
from fisk_ai.tools.base import ExecDeps, Kind, Outcome, Presentation, Tool
from fisk_ai.tools.toolset import ToolCollisionError, ToolSet, ToolSource


@dataclass(frozen=True)
class NamedTool:
    name: str
    description: str = "a tool"
    kind: Kind = Kind.CUSTOM
    presentation: Presentation = Presentation.TRACED
    mcp_exposable: bool = False
    a2a_exposable: bool = False

    @property
    def model_description(self) -> str:
        return self.description

    @property
    def input_schema(self) -> Mapping[str, Any]:
        return {"type": "object", "properties": {}}

    def definition(self, defer_loading: bool) -> ToolDef:
        return ToolDef(self.name, self.description, self.input_schema, defer_loading)

    async def execute(self, arguments: str, deps: ExecDeps) -> Outcome:
        return Outcome(self.name)


def test_named_tool_satisfies_the_protocol() -> None:
    assert isinstance(NamedTool("a"), Tool)


def test_tools_iterate_in_assembly_order() -> None:
    tools = ToolSet(
        [
            ToolSource("application ./app", [NamedTool("b"), NamedTool("a")]),
            ToolSource("memory", [NamedTool("memory_read")]),
        ]
    )

    assert [tool.name for tool in tools] == ["b", "a", "memory_read"]
    assert len(tools) == 3


def test_lookup_finds_a_tool_and_its_source() -> None:
    tool = NamedTool("memory_read")
    tools = ToolSet([ToolSource("memory", [tool])])

    assert tools.get("memory_read") is tool
    assert tools.source_of("memory_read") == "memory"
    assert "memory_read" in tools
    assert tools.get("nope") is None


def test_collision_names_the_tool_and_both_sources() -> None:
    with pytest.raises(ToolCollisionError) as raised:
        ToolSet(
            [
                ToolSource("application ./app", [NamedTool("stream_rm")]),
                ToolSource('mcp_clients "nats"', [NamedTool("stream_rm")]),
            ]
        )

    message = str(raised.value)
    assert '"stream_rm"' in message
    assert "application ./app" in message
    assert 'mcp_clients "nats"' in message


def test_an_empty_set_has_no_tools() -> None:
    assert len(ToolSet()) == 0
    assert list(ToolSet()) == []
