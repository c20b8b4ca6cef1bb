"""Serving an agent's tools to other agents: the card, and one tool call per tool.request.

No agent loop runs here. A peer reads the card on the discovery subject and sends a tool.request
on the tool subject; the call runs the tool and answers with a reply set: an ack (sequence 1), an
``event.status`` keepalive every ``keepalive_interval`` while the tool runs, then the tool.reply
carrying the output and the command that ran. A call that cannot run (an unknown tool, every slot
busy, a draining server) gets a refusing ack and a tool.reply with ``is_error`` and a ``code``,
since an ack closes nothing and a caller holding only a refusal would wait to its deadline.

A message that is not a valid request for the endpoint it arrived on (malformed, oversized, of
another protocol) is answered with the NATS service error headers and code 400, and the server
carries on.

The keepalive's protocol id is not fixed by the specification. It is ``event.status`` with the
phase ``executing-tool``, an event every caller already knows how to pass over.

Each call, refusals included, is an ``execute_tool`` server span continuing the caller's trace,
ended once its reply went out (docs/telemetry.md).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

from fisk_ai.a2a.codec import DEFAULT_MAX_MESSAGE_SIZE, decode, encode
from fisk_ai.a2a.errors import A2AError, InvalidMessage
from fisk_ai.a2a.messages import (
    Ack,
    DiscoveryReply,
    DiscoveryRequest,
    EventStatus,
    ExecResult,
    Identity,
    StatusBody,
    ToolBehavior,
    ToolDescriptor,
    ToolReply,
    ToolRequest,
    reply_header,
)
from fisk_ai.a2a.nats import ServiceEndpoint, ServiceHandle, ServiceHost
from fisk_ai.a2a.prompts_client import KEEPALIVE_INTERVAL
from fisk_ai.a2a.transport import (
    Delivery,
    Subscription,
    Transport,
    discovery_subject,
    tool_subject,
)
from fisk_ai.a2a.vocabulary import PROTOCOL_NAMESPACE, Direction, ErrorCode, ProtocolId
from fisk_ai.agent.events import StatusPhase
from fisk_ai.serve.replies import ReplySet, answer_inbox, refuse_delivery
from fisk_ai.serve.tasks import RunningTasks
from fisk_ai.telemetry import DISABLED, TOOL_FAILED, ServedCall, ServedToolOutcome, Telemetry
from fisk_ai.tools.base import BehaviorDescriber, Confirmable, ExecDeps, Outcome, Tool
from fisk_ai.tools.gating import confirm_trigger
from fisk_ai.tools.names import CANNOT_REPORT_GATING, unusable_name
from fisk_ai.tools.selection import ToolFilter, is_selected

__all__ = [
    "SERVED_PROTOCOLS",
    "TOOL_TIMEOUT_SETTING",
    "ServedSelection",
    "ToolsOptions",
    "ToolsServer",
    "select_served_tools",
    "unavailable_tool_text",
]

SERVED_PROTOCOLS = (PROTOCOL_NAMESPACE,)
TOOL_TIMEOUT_SETTING = "expose.agent.a2a.tool_timeout"

_RequestT = TypeVar("_RequestT", DiscoveryRequest, ToolRequest)

_log = logging.getLogger(__name__)


def unavailable_tool_text(name: str) -> str:
    """What a call to a tool that is not on the card is answered with."""
    return f"tool {json.dumps(name, ensure_ascii=False)} is not available"


@dataclass(frozen=True)
class ServedSelection:
    """Which tools go on the card, and why the others do not.

    ``withheld`` are tools that declare no a2a exposure (built-in, remote and MCP tools),
    ``gated`` maps a confirm-gated tool to the tag that gates it, and ``unservable`` maps a tool
    the card cannot carry to the reason.
    """

    exposed: tuple[Tool, ...]
    withheld: tuple[str, ...] = ()
    gated: tuple[tuple[str, str], ...] = ()
    unservable: tuple[tuple[str, str], ...] = ()


def select_served_tools(
    tools: Iterable[Tool],
    *,
    include: ToolFilter | None = None,
    exclude: ToolFilter | None = None,
    confirm_tags: Sequence[str] = (),
) -> ServedSelection:
    """The tools served over a2a out of a run's ``tools`` (already narrowed by the top-level
    include and exclude): those that declare a2a exposure, narrowed by expose.agent.tools
    (``include`` and ``exclude``), less the confirm-gated ones, since no operator stands behind
    a served call to approve it, and less any that cannot report whether it is gated."""
    exposed: list[Tool] = []
    withheld: list[str] = []
    gated: list[tuple[str, str]] = []
    unservable: list[tuple[str, str]] = []
    for tool in tools:
        if not tool.a2a_exposable:
            withheld.append(tool.name)
            continue
        if not isinstance(tool, Confirmable):
            unservable.append((tool.name, CANNOT_REPORT_GATING))
            continue
        if not is_selected(tool.name, tool.tags, include=include, exclude=exclude):
            continue
        trigger = confirm_trigger(tool.tags, confirm_tags)
        if trigger is not None:
            gated.append((tool.name, trigger))
        elif (bad_name := unusable_name(tool.name)) is not None:
            unservable.append((tool.name, bad_name))
        elif not tool.description.strip():
            unservable.append((tool.name, "it has no description"))
        else:
            exposed.append(tool)
    return ServedSelection(
        exposed=tuple(exposed),
        withheld=tuple(withheld),
        gated=tuple(gated),
        unservable=tuple(unservable),
    )


def _descriptor(tool: Tool) -> ToolDescriptor:
    behavior: ToolBehavior | None = None
    if isinstance(tool, BehaviorDescriber):
        known = tool.behavior()
        writes = known.destructive or known.additive
        if known.read_only or writes or known.idempotent:
            behavior = ToolBehavior(
                read_only=True if known.read_only else (False if writes else None),
                destructive=True if known.destructive else (False if known.read_only else None),
                idempotent=True if known.idempotent else None,
            )
    return ToolDescriptor(
        name=tool.name,
        description=tool.model_description,
        input_schema=dict(tool.input_schema),
        behavior=behavior,
    )


@dataclass(frozen=True)
class ToolsOptions:
    """How a tools server serves: as which agent, how many calls at once, for how long each.

    ``version`` and ``description`` go on the card; ``work_dir`` is where command tools run
    (this directory when None); ``tool_timeout`` ends a call that runs longer (None: never).

    ``model`` (the model a prompt is answered with, empty for an agent answering none),
    ``telemetry`` and ``telemetry_content`` (read off the resolved telemetry handle: traces are
    exported, and they carry the conversation) go on the card too. Without ``calls`` only
    discovery is answered: a prompts-only agent's card, listing no tools.
    """

    identity: str
    version: str
    max_concurrent: int
    tool_timeout: timedelta | None
    description: str = ""
    work_dir: Path | None = None
    keepalive_interval: timedelta = KEEPALIVE_INTERVAL
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    model: str = ""
    telemetry: bool = False
    telemetry_content: bool = False
    calls: bool = True


@dataclass(frozen=True)
class _Ending:
    """How one served call ended, for its span: ``failed`` when the caller was told it failed,
    ``exit_code`` when a command ran."""

    outcome: ServedToolOutcome
    failed: bool = True
    exit_code: int | None = None


class ToolsServer:
    """Serves ``tools`` on a transport as ``options`` say: discovery and tool calls.

    ``start`` registers the endpoints (a NATS micro service when the transport can host one,
    queue subscriptions otherwise), ``drain`` takes them out of the queue group so the agent
    answers no more calls, and ``close`` also abandons the calls still running. Each call is a
    span on ``telemetry``.
    """

    def __init__(
        self,
        transport: Transport,
        tools: Sequence[Tool],
        options: ToolsOptions,
        *,
        telemetry: Telemetry = DISABLED,
    ) -> None:
        if options.max_concurrent < 1:
            raise ValueError("max_concurrent must be at least 1")
        if tools and not options.calls:
            raise ValueError("a server answering discovery only serves no tools")
        self._transport = transport
        self._options = options
        self._telemetry = telemetry
        self._identity = Identity(name=options.identity)
        self._tools = {tool.name: tool for tool in tools}
        self._descriptors = tuple(_descriptor(tool) for tool in tools)
        self._busy = 0
        self._calls = RunningTasks()
        self._draining = False
        self._service: ServiceHandle | None = None
        self._subscriptions: list[Subscription] = []

    @property
    def identity(self) -> str:
        return self._identity.name

    @property
    def discovery_subject(self) -> str:
        return discovery_subject(self._identity.name)

    @property
    def tool_subject(self) -> str:
        return tool_subject(self._identity.name)

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    @property
    def calls_running(self) -> int:
        return self._busy

    async def start(self) -> None:
        endpoints = [ServiceEndpoint("discovery", self.discovery_subject, self._on_discovery)]
        if self._options.calls:
            endpoints.append(ServiceEndpoint("tool", self.tool_subject, self._on_tool))
        if isinstance(self._transport, ServiceHost):
            self._service = await self._transport.serve_service(self._identity.name, endpoints)
            return
        queue = self._identity.name
        self._subscriptions = [
            await self._transport.subscribe(endpoint.subject, endpoint.handler, queue=queue)
            for endpoint in endpoints
        ]

    async def drain(self) -> None:
        """Stop answering: the endpoints leave the queue group. Calls already running are not
        waited for; they answer if the connection is still there when they finish."""
        self._draining = True
        if self._service is not None:
            await self._service.stop()
        for subscription in self._subscriptions:
            await subscription.unsubscribe()
        self._subscriptions = []

    async def wait_idle(self) -> None:
        """Return once no call is running."""
        await self._calls.wait_idle()

    async def close(self) -> None:
        """Drain, then abandon the calls still running."""
        await self.drain()
        await self._calls.cancel_all()

    async def _on_discovery(self, delivery: Delivery) -> None:
        if not delivery.reply:
            return
        message = await self._read(delivery, DiscoveryRequest, ProtocolId.DISCOVERY_REQUEST)
        if message is None:
            return
        options = self._options
        card = DiscoveryReply(
            **reply_header(message, sender=self._identity),
            name=options.identity,
            version=options.version or "dev",
            description=options.description,
            model=options.model,
            protocols=SERVED_PROTOCOLS,
            tools=self._descriptors,
            telemetry=options.telemetry,
            telemetry_content=options.telemetry_content,
        )
        try:
            data = encode(card, max_size=options.max_message_size)
        except A2AError as error:
            _log.error("the card cannot be sent: %s", error)
            await refuse_delivery(self._transport, delivery, error)
            return
        await answer_inbox(self._transport, delivery.reply, data)

    async def _on_tool(self, delivery: Delivery) -> None:
        if not delivery.reply:
            _log.debug("a tool request on %s came with nowhere to reply; ignored", delivery.subject)
            return
        request = await self._read(delivery, ToolRequest, ProtocolId.TOOL_REQUEST)
        if request is None:
            return
        replies = ReplySet(
            self._transport,
            request,
            delivery.reply,
            self._identity,
            max_size=self._options.max_message_size,
        )
        # The handler returns at once so this subscription can take the next call; the call
        # is admitted or refused on its own task, inside its span.
        self._calls.start(self._answer(request, replies), name=f"a2a tool call {request.name}")

    async def _answer(self, request: ToolRequest, replies: ReplySet) -> None:
        tool = self._tools.get(request.name)
        # Neither transport vouches for who is calling: a subscriber gets the message and its
        # reply inbox, nothing about the connection that published it. The caller is the
        # empty, unverified one, and the sender only what the message claims.
        call = ServedCall(
            self._identity.name,
            request.name,
            known=tool is not None,
            request=request.request,
            sender=request.sender.name,
            traceparent=request.traceparent or "",
        )
        with self._telemetry.served_tool(call) as span:
            ending = await self._admit(tool, request, replies)
            span.served(ending.outcome)
            span.exit_code(ending.exit_code)
            if ending.failed:
                span.fail(TOOL_FAILED)

    async def _admit(self, tool: Tool | None, request: ToolRequest, replies: ReplySet) -> _Ending:
        if self._draining:
            await _refuse(
                replies,
                ErrorCode.DRAINING,
                f"agent {self._identity.name} is draining and takes no new calls; retry",
            )
            return _Ending(ServedToolOutcome.DRAINING)
        if tool is None:
            await _refuse(replies, ErrorCode.REJECTED, unavailable_tool_text(request.name))
            return _Ending(ServedToolOutcome.UNKNOWN_TOOL)
        limit = self._options.max_concurrent
        if self._busy >= limit:
            await _refuse(
                replies,
                ErrorCode.CAPACITY,
                f"agent {self._identity.name} is running as many tool calls as it may at once "
                f"({limit} at most); retry, and the next free member of its queue group takes it",
            )
            return _Ending(ServedToolOutcome.CAPACITY)
        self._busy += 1
        if not await replies.send(lambda header: Ack(**header, accepted=True)):
            self._busy -= 1
            return _Ending(ServedToolOutcome.ERROR)
        return await self._run(tool, request, replies)

    async def _run(self, tool: Tool, request: ToolRequest, replies: ReplySet) -> _Ending:
        stop_keepalive = asyncio.Event()
        keepalive = asyncio.get_running_loop().create_task(
            self._keep_alive(replies, stop_keepalive), name="a2a tool keepalive"
        )
        try:
            outcome = await self._execute(tool, request)
        finally:
            stop_keepalive.set()
            await keepalive
            self._busy -= 1
        if outcome.deferral is not None:
            deferred = f'tool "{tool.name}" deferred its answer, which a served call cannot carry'
            await replies.send(
                lambda header: ToolReply(
                    **header, is_error=True, code=ErrorCode.DEFERRED, output=deferred
                )
            )
            return _Ending(ServedToolOutcome.ERROR)
        executed = None if outcome.exec is None else ExecResult.from_record(outcome.exec)
        await replies.send(
            lambda header: ToolReply(
                **header, is_error=outcome.is_error, output=outcome.output, exec=executed
            )
        )
        return _Ending(
            ServedToolOutcome.ERROR if outcome.is_error else ServedToolOutcome.EXECUTED,
            failed=outcome.is_error,
            exit_code=None if outcome.exec is None else outcome.exec.exit_code,
        )

    async def _execute(self, tool: Tool, request: ToolRequest) -> Outcome:
        deps = ExecDeps(
            work_dir=self._options.work_dir,
            timeout=self._options.tool_timeout,
            timeout_setting=TOOL_TIMEOUT_SETTING,
        )
        try:
            return await tool.execute(json.dumps(request.input, ensure_ascii=False), deps)
        except Exception as error:
            _log.exception("tool %s failed", tool.name)
            return Outcome(f'tool "{tool.name}" failed: {error}', is_error=True)

    async def _keep_alive(self, replies: ReplySet, stop: asyncio.Event) -> None:
        interval = self._options.keepalive_interval.total_seconds()
        while True:
            try:
                async with asyncio.timeout(interval):
                    await stop.wait()
                return
            except TimeoutError:
                await replies.send(
                    lambda header: EventStatus(
                        **header, block=StatusBody(phase=StatusPhase.EXECUTING_TOOL)
                    )
                )

    async def _read(
        self, delivery: Delivery, cls: type[_RequestT], protocol: ProtocolId
    ) -> _RequestT | None:
        try:
            message = decode(
                delivery.data,
                direction=Direction.TO_AGENT,
                max_size=self._options.max_message_size,
            )
        except A2AError as error:
            await refuse_delivery(self._transport, delivery, error)
            return None
        if not isinstance(message, cls):
            await refuse_delivery(
                self._transport,
                delivery,
                InvalidMessage(
                    f"{delivery.subject} takes {protocol} messages, not {message.protocol}"
                ),
            )
            return None
        return message


async def _refuse(replies: ReplySet, code: ErrorCode, text: str) -> None:
    await replies.refuse(
        text, lambda header: ToolReply(**header, is_error=True, code=code, output=text)
    )
