"""`fisk mcp`: the agent's selected commands served to MCP clients, with no model in the loop.

It is its own endpoint, not a serve channel: its own listener, its own concurrency limit
(``expose.agent.mcp.max_concurrent_tools``, calls past it wait for a slot), its own timeout
(``tool_timeout``) and its own confirm policy. Human approval is MCP elicitation, and anything
that is not an explicit approval fails closed. ``confirm_over_mcp`` decides what happens when the
client cannot be asked: ``auto`` and ``always`` refuse the gated command, ``never`` never asks
and runs every gated command, delegating approval to the client. (The Go original's ``auto``
runs it ungated; refusing is a deliberate difference, since a gate that opens for any client
that does not declare elicitation is no gate.)

A call's arguments are checked against the tool's schema before anybody is asked, so nobody
approves a call that cannot run, and the log says ``running`` only for a call that runs.

Only tools that declare MCP exposure are served: the wrapped application's commands. Built-in,
remote and imported MCP tools declare none, so a third party's tool is never re-advertised under
this agent's identity. A tool that asks a person something is refused (there is no prompter
here), and a deferred answer is refused as a call the surface cannot carry.

Nothing here imports the ``mcp`` SDK until a server is built.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from fisk_ai.config import ConfirmOverMcp
from fisk_ai.telemetry import DISABLED, TOOL_FAILED, Telemetry
from fisk_ai.tools.base import (
    AsksOperator,
    BehaviorDescriber,
    Confirmable,
    ExecDeps,
    Kind,
    Outcome,
    ShowsCommand,
    Tool,
)
from fisk_ai.tools.gating import confirm_trigger
from fisk_ai.tools.names import CANNOT_REPORT_GATING, unusable_name
from fisk_ai.tools.prepared import PreparedCall, prepare_call
from fisk_ai.tools.selection import ToolFilter, is_selected

if TYPE_CHECKING:
    from pathlib import Path

    import mcp_types
    from mcp.server import Server
    from mcp.server.context import ServerRequestContext

__all__ = [
    "ELICIT_TIMEOUT",
    "TOOL_TIMEOUT_SETTING",
    "McpSelection",
    "ServeOptions",
    "ToolCalls",
    "build_server",
    "confirm_summary",
    "select_mcp_tools",
    "tool_annotations",
]

TOOL_TIMEOUT_SETTING = "expose.agent.mcp.tool_timeout"
# A person deciding may take longer than a command runs, so the wait is its own and longer.
ELICIT_TIMEOUT = timedelta(minutes=2)
APPROVE_KEY = "approve"
APPROVE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        APPROVE_KEY: {
            "type": "boolean",
            "title": "Approve",
            "description": "Run the command",
        }
    },
    "required": [APPROVE_KEY],
}


@dataclass(frozen=True)
class McpSelection:
    """Which tools are served, and why the others are not. ``gated`` maps each served tool
    that needs approval to the tag that gates it."""

    exposed: tuple[Tool, ...]
    gated: tuple[tuple[str, str], ...] = ()
    withheld: tuple[str, ...] = ()
    unservable: tuple[tuple[str, str], ...] = ()


def select_mcp_tools(
    tools: Iterable[Tool],
    *,
    include: ToolFilter | None = None,
    exclude: ToolFilter | None = None,
    confirm_tags: Sequence[str] = (),
    builtins: frozenset[str] = frozenset(),
) -> McpSelection:
    """The tools served over MCP out of a run's ``tools``: those that declare MCP exposure,
    narrowed by expose.agent.tools, and of the built-in tools only those ``builtins`` (the
    operator's expose.agent.mcp.builtins) names. A tool that cannot report whether it is gated
    is refused, since "needs no gate" and "cannot say" must not look the same."""
    exposed: list[Tool] = []
    gated: list[tuple[str, str]] = []
    withheld: list[str] = []
    unservable: list[tuple[str, str]] = []
    for tool in tools:
        if not tool.mcp_exposable or (tool.kind is Kind.BUILTIN and tool.name not in builtins):
            withheld.append(tool.name)
            continue
        if not isinstance(tool, Confirmable):
            unservable.append((tool.name, CANNOT_REPORT_GATING))
            continue
        if not is_selected(tool.name, tool.tags, include=include, exclude=exclude):
            continue
        if (bad_name := unusable_name(tool.name)) is not None:
            unservable.append((tool.name, bad_name))
            continue
        if isinstance(tool, AsksOperator) and tool.asks_operator:
            unservable.append((tool.name, "it asks a person, and fisk mcp has nobody to ask"))
            continue
        trigger = confirm_trigger(tool.tags, confirm_tags)
        if trigger is not None:
            gated.append((tool.name, trigger))
        exposed.append(tool)
    return McpSelection(tuple(exposed), tuple(gated), tuple(withheld), tuple(unservable))


def confirm_summary(mode: ConfirmOverMcp) -> str:
    """How gated tools are handled under ``mode``, in a phrase for the banner."""
    if mode is ConfirmOverMcp.ALWAYS:
        return (
            "clients that support elicitation are asked to approve each call, clients that do "
            "not are refused (confirm_over_mcp: always)"
        )
    if mode is ConfirmOverMcp.NEVER:
        return "they run without asking; approval is the client's (confirm_over_mcp: never)"
    return (
        "clients that support elicitation are asked to approve each call, clients that do not "
        "are refused (confirm_over_mcp: auto; the Go fisk-ai runs them ungated there, write "
        "never to hand approval to the client)"
    )


def tool_annotations(tool: Tool) -> mcp_types.ToolAnnotations:
    """The MCP annotations a tool's behavior tags stand for: ai:read_only is a read-only hint,
    ai:destructive a destructive hint, ai:additive a write that destroys nothing, ai:idempotent
    an idempotent hint. A hint the tags do not settle is left unset, so the client keeps the
    protocol's conservative default; approval is not an annotation (it is enforced here).

    The only built-ins ever served are the knowledge tools, lookups in the operator's own
    index: read-only, idempotent and closed-world, the hints the Go fisk-ai sends for them."""
    import mcp_types

    title = tool.command_line if isinstance(tool, ShowsCommand) else tool.name
    if tool.kind is Kind.BUILTIN:
        return mcp_types.ToolAnnotations(
            title=title, read_only_hint=True, idempotent_hint=True, open_world_hint=False
        )
    hints: dict[str, bool] = {}
    if isinstance(tool, BehaviorDescriber):
        behavior = tool.behavior()
        if behavior.read_only:
            hints["read_only_hint"] = True
        if behavior.destructive:
            hints["destructive_hint"] = True
        elif behavior.additive:
            hints["destructive_hint"] = False
        if behavior.idempotent:
            hints["idempotent_hint"] = True
    return mcp_types.ToolAnnotations(title=title, **hints)


@dataclass(frozen=True)
class ServeOptions:
    """How ``fisk mcp`` serves: its name and version for clients, the instructions, the limits
    and the confirm policy."""

    name: str
    version: str
    instructions: str = ""
    max_concurrent: int = 2
    tool_timeout: timedelta = timedelta(seconds=30)
    confirm: ConfirmOverMcp = ConfirmOverMcp.AUTO
    confirm_tags: tuple[str, ...] = ()
    work_dir: Path | None = None
    elicit_timeout: timedelta = ELICIT_TIMEOUT


@dataclass
class ToolCalls:
    """Runs served tool calls under one concurrency limit shared by every client."""

    tools: Sequence[Tool]
    options: ServeOptions
    log: Callable[[str], None] = lambda _: None
    telemetry: Telemetry = DISABLED
    """Each served call is a server span of its own trace."""
    _by_name: dict[str, Tool] = field(init=False)
    _slots: asyncio.Semaphore = field(init=False)

    def __post_init__(self) -> None:
        self._by_name = {tool.name: tool for tool in self.tools}
        self._slots = asyncio.Semaphore(self.options.max_concurrent)

    def gate_of(self, tool: Tool) -> str | None:
        tags = tool.tags if isinstance(tool, Confirmable) else ()
        return confirm_trigger(tags, self.options.confirm_tags)

    async def list_tools(self) -> list[mcp_types.Tool]:
        import mcp_types

        return [
            mcp_types.Tool(
                name=tool.name,
                description=tool.model_description,
                input_schema=dict(tool.input_schema) or {"type": "object"},
                annotations=tool_annotations(tool),
            )
            for tool in self.tools
        ]

    async def call(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        import mcp_types

        sent = (params.meta or {}).get("traceparent")
        traceparent = sent if isinstance(sent, str) else ""
        with self.telemetry.mcp_tool_call(
            params.name, served=True, traceparent=traceparent
        ) as span:
            result = await self._call(ctx, params)
            if isinstance(result, mcp_types.CallToolResult) and result.is_error:
                span.fail(TOOL_FAILED)
            return result

    async def _call(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        tool = self._by_name.get(params.name)
        if tool is None:
            return _result(f"tool {json.dumps(params.name)} is not available", is_error=True)
        prepared = prepare_call(tool, json.dumps(params.arguments or {}, ensure_ascii=False))
        if prepared.problem is not None:
            self.log(f"refused {tool.name}: {prepared.problem}")
            return _result(f"{prepared.problem}; the call was not run", is_error=True)
        shown = prepared.display if isinstance(tool, ShowsCommand) else tool.name
        trigger = self.gate_of(tool)
        if trigger is not None and self.options.confirm is not ConfirmOverMcp.NEVER:
            decision = await self._approval(ctx, params, shown, trigger)
            if not isinstance(decision, bool):
                return decision
            if not decision:
                self.log(f"declined {shown} (gated by {trigger})")
                return _result(
                    f"the caller did not approve {shown}; the command was not run and this "
                    "decision is final",
                    is_error=True,
                )
        if self._slots.locked():
            self.log(
                f"waiting for a slot: {shown} (max_concurrent_tools "
                f"{self.options.max_concurrent} calls are running)"
            )
        async with self._slots:
            self.log(f"running {shown}")
            outcome = await self._execute(prepared)
        if outcome.deferral is not None:
            return _result(
                f"{tool.name} answered that it will finish later, which MCP cannot carry",
                is_error=True,
            )
        return _result(outcome.model_content, is_error=outcome.is_error)

    async def _execute(self, prepared: PreparedCall) -> Outcome:
        tool = prepared.tool
        limit = self.options.tool_timeout
        deps = ExecDeps(
            work_dir=self.options.work_dir, timeout=limit, timeout_setting=TOOL_TIMEOUT_SETTING
        )
        try:
            # The command's own limit stops its process group; this one bounds any other kind.
            async with asyncio.timeout(limit.total_seconds() + 5):
                return await prepared.execute(deps)
        except TimeoutError:
            return Outcome(
                f"{tool.name} did not finish within {limit.total_seconds():g}s "
                f"({TOOL_TIMEOUT_SETTING}) and was stopped",
                is_error=True,
            )

    async def _approval(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: mcp_types.CallToolRequestParams,
        shown: str,
        trigger: str,
    ) -> bool | mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        """True or False for the caller's answer; a result to send instead when the caller
        must be asked on the next round (2026-07-28 protocol) or cannot be asked."""
        import mcp_types
        from mcp_types.version import is_version_at_least

        question = f"Allow {self.options.name} to run: {shown}? (gated by {trigger})"
        modern = is_version_at_least(ctx.protocol_version, "2026-07-28")
        if modern and params.input_responses and APPROVE_KEY in params.input_responses:
            return _approved(params.input_responses[APPROVE_KEY])
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            # Under auto as under always: nobody can be asked, so the gate stays shut.
            setting = self.options.confirm.value
            self.log(f"refused {shown}: the client cannot be asked (confirm_over_mcp: {setting})")
            return _result(
                f"{shown} needs approval (gated by {trigger}) and this client cannot be "
                "asked through elicitation; the command was not run",
                is_error=True,
            )
        if modern:
            return mcp_types.InputRequiredResult(
                input_requests={
                    APPROVE_KEY: mcp_types.ElicitRequest(
                        params=mcp_types.ElicitRequestFormParams(
                            message=question, requested_schema=APPROVE_SCHEMA
                        )
                    )
                }
            )
        try:
            async with asyncio.timeout(self.options.elicit_timeout.total_seconds()):
                answer = await ctx.session.elicit_form(question, APPROVE_SCHEMA, ctx.request_id)
        except Exception:
            # An error, a dismissal or no answer in time is not an approval.
            return False
        return _approved(answer)


def _approved(answer: object) -> bool:
    import mcp_types

    return (
        isinstance(answer, mcp_types.ElicitResult)
        and answer.action == "accept"
        and isinstance(answer.content, dict)
        and answer.content.get(APPROVE_KEY) is True
    )


def _result(text: str, *, is_error: bool = False) -> mcp_types.CallToolResult:
    import mcp_types

    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=text)], is_error=is_error
    )


def build_server(calls: ToolCalls) -> Server[Any]:
    """The SDK's low-level server over ``calls``: tools/list and tools/call only."""
    from mcp.server import Server

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        import mcp_types

        return mcp_types.ListToolsResult(tools=await calls.list_tools())

    def input_schema(name: str) -> dict[str, Any] | None:
        for tool in calls.tools:
            if tool.name == name:
                return dict(tool.input_schema)
        return None

    options = calls.options
    return Server(
        options.name,
        version=options.version,
        instructions=options.instructions or None,
        on_list_tools=list_tools,
        on_call_tool=calls.call,
        get_tool_input_schema=input_schema,
    )
