"""Which tool definitions a model call sends in full and which it hides behind tool search.

The threshold rule itself is the provider layer's (``plan_tool_search``); this module sorts a
run's tools into the two groups it takes. The application's, peers', MCP servers' and custom tools
are deferrable; built-ins never are, since the model must always see how to ask the operator or
read its memory. A tool tagged ``ai:no_defer`` keeps itself loaded in its own ``definition``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from fisk_ai.llm.anthropic import TOOL_SEARCH_THRESHOLD, plan_tool_search, tool_search_off
from fisk_ai.llm.types import ToolDef
from fisk_ai.tools.base import Kind, Tool

__all__ = ["TOOL_SEARCH_THRESHOLD", "DeferralPlan", "plan_definitions"]


@dataclass(frozen=True)
class DeferralPlan:
    """The definitions for one request, deferrable tools first, then the built-ins.

    ``tool_search`` is whether any definition is deferred (the request then needs the search
    tool); ``sent_directly`` is whether the set reached the threshold but every tool is sent in
    full, because the provider or the model has no tool search or ``llm.no_tool_search`` turned
    it off; ``responsible_setting`` then names the key that did (``llm.provider``,
    ``llm.model`` or ``llm.no_tool_search``), and is empty otherwise.
    """

    definitions: tuple[ToolDef, ...]
    tool_search: bool
    sent_directly: bool
    responsible_setting: str = ""


def plan_definitions(
    tools: Iterable[Tool], *, supported: bool, disabled: bool, model: str
) -> DeferralPlan:
    """Plan the definitions of ``tools`` for ``model`` on a provider that does (``supported``)
    or does not offer tool search, with ``disabled`` set by ``llm.no_tool_search``."""
    everything = list(tools)
    deferrable = [tool.definition(True) for tool in everything if tool.kind is not Kind.BUILTIN]
    builtins = [tool.definition(False) for tool in everything if tool.kind is Kind.BUILTIN]
    definitions, warning = plan_tool_search(
        deferrable, builtins, supported=supported, disabled=disabled, model=model
    )
    off = tool_search_off(supported=supported, disabled=disabled, model=model)
    return DeferralPlan(
        definitions=definitions,
        tool_search=any(definition.defer_loading for definition in definitions),
        sent_directly=warning is not None,
        responsible_setting=off.setting if warning is not None and off is not None else "",
    )
