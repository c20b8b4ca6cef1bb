"""The built-in tools ``expose.agent.mcp.builtins`` accepts are listed twice: as the config's
``McpBuiltin`` (config is a leaf and cannot import the tools) and as the tools that declare MCP
exposure. This pins the two lists together, so a built-in made exposable without the config
learning its name (or the reverse) fails here rather than being refused or ignored in a file."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from fisk_ai.config import McpBuiltin
from fisk_ai.memory import StoreInfo, UnopenedStore
from fisk_ai.tools.builtin.hitl import hitl_tools
from fisk_ai.tools.builtin.knowledge import knowledge_tools
from fisk_ai.tools.builtin.memory import memory_tools

if TYPE_CHECKING:
    from fisk_ai.knowledge.access import KnowledgeIndex


def every_builtin_tool_name_by_exposure() -> dict[str, bool]:
    # The tools only hold their store and index until called, so none is opened here.
    index = cast("KnowledgeIndex", object())
    tools = (
        *hitl_tools(),
        *memory_tools(UnopenedStore(StoreInfo("file"))),
        *knowledge_tools(index, top_k=5, max_injected_tokens=6000),
    )
    return {tool.name: tool.mcp_exposable for tool in tools}


def test_the_config_accepts_exactly_the_builtins_that_declare_mcp_exposure() -> None:
    exposable = {name for name, exposed in every_builtin_tool_name_by_exposure().items() if exposed}

    assert {builtin.value for builtin in McpBuiltin} == exposable
