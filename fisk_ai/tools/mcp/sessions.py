"""Sessions with the MCP servers agent.yaml lists under ``mcp_clients``.

Each server gets one session, owned by a task of its own: the SDK's client is entered and left
on that task (its cancel scopes demand it), while any run's task may call through it. Servers
are connected one after another in configuration order; ``timeout`` bounds the start (spawning
or reaching the server and the handshake) and, again, listing its tools. A strict open (a run,
``fisk serve``) fails on the first server that cannot be started, reached or listed, naming it,
and closes every session already opened; ``fisk info`` discovers leniently and reports each
server's state instead.

The client advertises nothing beyond the handshake's defaults: no roots, no sampling handler (a
foreign server cannot spend this agent's model budget) and no elicitation handler.

Every message that leaves this module about a server goes through that server's ``Redactor``:
what its references resolved to (eight characters or more) becomes REDACTED, and every URL in
the text loses its userinfo, query values and fragment.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import importlib
import logging
import os
import re
import select
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TextIO, cast

from fisk_ai import config, telemetry
from fisk_ai.config.references import resolve_references
from fisk_ai.errors import FiskError
from fisk_ai.tools.base import Outcome
from fisk_ai.tools.environment import tool_environment
from fisk_ai.tools.mcp.importing import (
    FILTERED_OUT,
    McpTool,
    Redactor,
    ServerListing,
    import_listing,
    imported_result,
    mcp_source_label,
    printable_command,
)
from fisk_ai.tools.selection import ToolFilter
from fisk_ai.tools.toolset import ToolSource
from fisk_ai.util.redact import redact_url
from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from mcp import Client
    from mcp_types import RequestParamsMeta

__all__ = [
    "McpServerError",
    "McpSessions",
    "McpTransport",
    "ServerReport",
    "discover_mcp_servers",
    "open_mcp_sessions",
    "resolve_entry",
    "server_endpoint",
]

_log = logging.getLogger(__name__)
_CLIENT_NAME = "fisk-ai"
MCP_CALL_FAILED = telemetry.ErrorClass("mcp_call_failed")


class McpServerError(FiskError):
    """An MCP server could not be started, reached, initialized or listed."""


class McpTransport(enum.Enum):
    """How an mcp_clients entry is reached."""

    STDIO = "stdio"
    STREAMABLE_HTTP = "streamable HTTP"


@dataclass(frozen=True)
class ResolvedEntry:
    """An entry with its references resolved, ready to connect, and the redactor for every
    message about it."""

    entry: config.McpClient
    env: Mapping[str, str]
    headers: Mapping[str, str]
    url: str
    redact: Redactor

    @property
    def transport(self) -> McpTransport:
        return McpTransport.STDIO if self.entry.command else McpTransport.STREAMABLE_HTTP


def transport_of(entry: config.McpClient) -> McpTransport:
    return McpTransport.STDIO if entry.command else McpTransport.STREAMABLE_HTTP


def server_endpoint(entry: config.McpClient) -> str:
    """Where an entry is reached, fit to print: the URL as written (a reference names its
    variable) with its credential parts taken out, or the command line with each URL argument
    redacted."""
    if entry.command:
        return printable_command(entry.command, entry.args)
    return redact_url(entry.url)


def resolve_entry(
    entry: config.McpClient, environ: Mapping[str, str] | None = None
) -> ResolvedEntry:
    """Resolve the ${VAR} references of ``entry``; an unset variable is an error naming the
    variable and the server."""
    source = os.environ if environ is None else environ
    name = entry.name
    try:
        env = {
            key: resolve_references(value, source, where=f'MCP server "{name}" env {key}')
            for key, value in entry.env.items()
        }
        headers = {
            key: resolve_references(value, source, where=f'MCP server "{name}" header {key}')
            for key, value in entry.headers.items()
        }
        url = (
            resolve_references(entry.url, source, where=f'MCP server "{name}" url')
            if entry.url
            else ""
        )
    except FiskError as exc:
        raise McpServerError(f'cannot connect to MCP server "{name}": {exc}') from None
    # Only what a reference resolved to is secret; the literal text around it is the file's.
    secrets = [
        value
        for written, resolved in (
            *((entry.env[key], env[key]) for key in env),
            *((entry.headers[key], headers[key]) for key in headers),
            (entry.url, url),
        )
        if "${" in written
        for value in _resolved_parts(written, resolved, source)
    ]
    return ResolvedEntry(entry, env, headers, url, Redactor.of(secrets))


def _resolved_parts(written: str, resolved: str, environ: Mapping[str, str]) -> list[str]:
    from fisk_ai.config.references import referenced_names

    return [environ[name] for name in referenced_names(written) if name in environ]


def _filters(entry: config.McpClient) -> tuple[ToolFilter, ToolFilter]:
    # A listing carries no tags, so only the name patterns can select.
    return ToolFilter(tools=tuple(entry.include.tools)), ToolFilter(
        tools=tuple(entry.exclude.tools)
    )


class McpConnection:
    """One server's session, its current listing, and the way back after it dies."""

    def __init__(
        self,
        resolved: ResolvedEntry,
        *,
        on_change: Callable[[McpConnection], None],
        warn: Callable[[str], None],
        secret_env_names: Iterable[str] = (),
    ) -> None:
        self.resolved = resolved
        self.secret_env_names = tuple(secret_env_names)
        self.entry = resolved.entry
        self.listing = ServerListing(self.entry.name, self.entry.alias, (), 0)
        self.answer_seconds = 0.0
        self._on_change = on_change
        self._warn = warn
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        # Set when a start is given up on, so its stdio child is killed rather than waited out.
        self._abandoned = False
        self._stop = asyncio.Event()
        self._broken = False
        self._reconnecting = asyncio.Lock()
        self._background: set[asyncio.Task[None]] = set()
        self._taken: Callable[[McpConnection], set[str]] = lambda _: set()
        self._screen = ListingScreen()
        self._relisting = asyncio.Lock()
        # How many list changes the server had announced when the current listing was asked.
        self._listed_through = 0
        self._reported: set[tuple[str, str]] = set()
        # The protocol era: negotiated on the first connect, remembered for every reconnect.
        self._mode = "auto"

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def timeout(self) -> float:
        return self.entry.timeout.total_seconds()

    def _fail(self, what: str, failure: BaseException | str) -> McpServerError:
        reason = failure if isinstance(failure, str) else _reason(failure)
        hint = ""
        if self.resolved.transport is McpTransport.STREAMABLE_HTTP and self.entry.url.rstrip(
            "/"
        ).endswith("/sse"):
            hint = (
                "; the url looks like an endpoint of the older HTTP+SSE transport, which is not "
                "supported: point url at the server's streamable HTTP endpoint"
            )
        text = f'MCP server "{self.name}" ({server_endpoint(self.entry)}) {what}: {reason}{hint}'
        return McpServerError(self.resolved.redact(text))

    async def connect(self, taken: Callable[[McpConnection], set[str]]) -> None:
        """Start or reach the server, hand-shake and list its tools, each step within the
        entry's timeout."""
        self._taken = taken
        # The SDK loads before the clock starts: on a busy machine its import alone takes
        # seconds, and the timeout is the server's to spend, not this process's.
        await asyncio.to_thread(importlib.import_module, "mcp")
        started = time.monotonic()
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._abandoned = False
        self._owner = asyncio.create_task(self._own(ready), name=f"mcp session {self.name}")
        try:
            self._client = await asyncio.wait_for(asyncio.shield(ready), self.timeout)
        except TimeoutError:
            # A server that has not answered within the timeout gets no grace to answer now.
            ready.cancel()
            await self.close(abandon=True)
            raise self._fail(
                "did not start and answer the handshake",
                f"no answer within {self.entry.timeout.total_seconds():g}s (mcp_clients timeout)",
            ) from None
        except McpServerError:
            await self.close()
            raise
        self.answer_seconds = time.monotonic() - started
        self._broken = False
        try:
            await self.relist(strict=True)
        except BaseException:
            await self.close()
            raise

    async def _own(self, ready: asyncio.Future[Client]) -> None:
        from mcp import Client
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        resolved = self.resolved
        try:
            async with contextlib.AsyncExitStack() as stack:
                target: Any
                if resolved.transport is McpTransport.STDIO:
                    from fisk_ai.tools.mcp.stdio import stdio_child

                    # The child gets this process's environment less every credential
                    # variable (the operator-named ones too), with the entry's env on top: a
                    # child without PATH or HOME could not run the servers operators wire up.
                    scrubbed = tool_environment(extra_secret_names=self.secret_env_names)
                    environment = scrubbed | dict(resolved.env)
                    environment.pop("LLMFORMAT", None)
                    errors = stack.enter_context(_child_stderr(self.name))
                    child = stdio_child(
                        self.entry.command,
                        self.entry.args,
                        environment,
                        errors,
                        abandoned=lambda: self._abandoned,
                    )
                    target = _screened(child, self._screen)
                else:
                    from mcp.client.streamable_http import streamable_http_client
                    from mcp.shared._httpx_utils import create_mcp_http_client

                    http = await stack.enter_async_context(
                        create_mcp_http_client(headers=dict(resolved.headers) or None)
                    )
                    target = _screened(
                        streamable_http_client(resolved.url, http_client=http), self._screen
                    )
                client = await stack.enter_async_context(
                    Client(target, mode=self._mode, message_handler=self._on_message, cache=None)
                )
                if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
                    # A reconnect hand-shakes at once rather than probing a server that has
                    # already said it cannot read the probe.
                    self._mode = "legacy"
                listen = asyncio.create_task(self._listen(client))
                ready.set_result(client)
                try:
                    await self._stop.wait()
                finally:
                    listen.cancel()
                    with contextlib.suppress(BaseException):
                        await listen
        except asyncio.CancelledError:
            if not ready.done():
                ready.set_exception(self._fail("did not start", "the start was abandoned"))
            raise
        except BaseException as failure:
            if not ready.done():
                ready.set_exception(self._fail("could not be started or initialized", failure))
            else:
                self._broken = True
                _log.debug(
                    "MCP session %s ended: %s", self.name, self.resolved.redact(str(failure))
                )
        finally:
            self._client = None
            self._broken = True

    async def _listen(self, client: Client) -> None:
        """On the 2026-07-28 protocol a list change arrives on a subscription stream; older
        sessions deliver it to the message handler instead."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return
        with contextlib.suppress(Exception):
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    self._relist_soon()

    async def _on_message(self, message: Any) -> None:
        import mcp_types

        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._relist_soon()

    def _relist_soon(self) -> None:
        task = asyncio.get_running_loop().create_task(self._relist_quietly())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _relist_quietly(self) -> None:
        # Always lists: a change announced on the 2026-07-28 subscription of a streamable HTTP
        # session never passes the screen, so the count cannot say it was already followed.
        try:
            async with self._relisting:
                await self.relist(strict=False)
        except McpServerError as exc:
            self._warn(str(exc))

    async def _catch_up(self, announced: int) -> None:
        """Re-list unless a listing asked after the ``announced``-th list change already ran:
        a call and the background both catch up after one announcement, and list once."""
        async with self._relisting:
            if self._listed_through >= announced:
                return
            await self.relist(strict=False)

    async def relist(self, *, strict: bool) -> None:
        """List the server's tools again, apply the entry's filters and publish the survivors.
        Outside the start (``strict`` false), a name another source holds is left out and
        reported rather than failing the run. Every tool left out for a reason other than the
        entry's filters is reported once, in the run, with the reason."""
        client = self._client
        if client is None:
            raise self._fail("could not be listed", "the session is closed")
        self._listed_through = self._screen.announcements
        self._screen.refused.clear()
        try:
            descriptors = await asyncio.wait_for(_list_all(client), self.timeout)
        except TimeoutError:
            raise self._fail(
                "did not list its tools",
                f"no answer within {self.entry.timeout.total_seconds():g}s (mcp_clients timeout)",
            ) from None
        except Exception as failure:
            raise self._fail("could not list its tools", failure) from None
        include, exclude = _filters(self.entry)
        listing = import_listing(
            self.name,
            self.entry.alias,
            descriptors,
            self.call,
            include=include,
            exclude=exclude,
            taken=() if strict else self._taken(self),
        )
        if self._screen.refused:
            listing = replace(
                listing,
                advertised=listing.advertised + len(self._screen.refused),
                skipped=(*self._screen.refused, *listing.skipped),
            )
        for tool, reason in listing.skipped:
            if reason == FILTERED_OUT or (tool, reason) in self._reported:
                continue
            self._reported.add((tool, reason))
            verb = "lists" if strict else "now lists"
            what = f'the tool "{tool}"' if tool else "a tool"
            self._warn(
                self.resolved.redact(
                    f'MCP server "{self.name}" {verb} {what}, left out since {reason}'
                )
            )
        self.listing = listing
        self._on_change(self)

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        """Call ``tool`` on the server; a dead session is reconnected first, and a server that
        cannot be reached answers with an error naming it."""
        with telemetry.current().mcp_tool_call(tool, server=self.name) as span:
            outcome = await self._call(tool, arguments)
            if outcome.is_error:
                span.fail(MCP_CALL_FAILED)
            return outcome

    async def _call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        client = self._client
        if client is None or self._broken:
            try:
                await self.reconnect()
            except McpServerError as exc:
                return Outcome(str(exc), is_error=True)
            client = self._client
            assert client is not None
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        announced = self._screen.announcements
        try:
            result = await client.call_tool(tool, dict(arguments), meta=request_trace_meta())
            if self._screen.announcements != announced:
                # The server changed its list while answering (it added a tool the model is
                # about to use): the next request must carry the new set.
                await self._caught_up_quietly(self._screen.announcements)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._broken = True
                return Outcome(str(self._fail(f"closed the session during {tool}", exc)), True)
            return Outcome(str(self._fail(f"refused the call to {tool}", exc)), is_error=True)
        except (OSError, EOFError) as exc:
            self._broken = True
            return Outcome(str(self._fail(f"failed during {tool}", exc)), is_error=True)
        except Exception as exc:
            # The anyio stream errors of a dead child land here; the next call reconnects.
            self._broken = True
            return Outcome(str(self._fail(f"failed during {tool}", exc)), is_error=True)
        return _outcome(result)

    async def _caught_up_quietly(self, announced: int) -> None:
        try:
            await self._catch_up(announced)
        except McpServerError as exc:
            self._warn(str(exc))

    async def reconnect(self) -> None:
        async with self._reconnecting:
            if self._client is not None and not self._broken:
                return
            await self.close()
            _log.info("reconnecting MCP server %s", self.name)
            await self.connect(self._taken)

    async def close(self, *, abandon: bool = False) -> None:
        """End the session; a stdio child is stopped and reaped (its whole process group).
        ``abandon`` cancels a start still under way instead of waiting for it to end."""
        self._stop.set()
        owner, self._owner = self._owner, None
        for task in list(self._background):
            task.cancel()
        if owner is not None:
            if abandon:
                self._abandoned = True
                owner.cancel()
            elif not owner.done():
                try:
                    await asyncio.wait_for(asyncio.shield(owner), self.timeout + 5)
                except (TimeoutError, Exception):
                    owner.cancel()
            with contextlib.suppress(BaseException):
                await owner
        self._client = None


_LIST_TOOLS = "tools/list"
_LIST_CHANGED = "notifications/tools/list_changed"


class ListingScreen:
    """Sits between a session's transport and the SDK. The SDK validates a tools/list page
    whole, so one descriptor it refuses (a schema root that is not an object, no name) would
    lose every tool of the server: the screen takes each such descriptor out of the answer
    before the SDK reads it, and keeps its name and the reason for the listing's report. It
    also counts the list changes the server announces, as they arrive, so a call can tell that
    the server changed its list while answering it."""

    def __init__(self) -> None:
        self.announcements = 0
        self.refused: list[tuple[str, str]] = []
        self._listings: set[Any] = set()

    def sent(self, item: Any) -> None:
        import mcp_types

        message = getattr(item, "message", None)
        if isinstance(message, mcp_types.JSONRPCRequest) and message.method == _LIST_TOOLS:
            self._listings.add(message.id)

    def received(self, item: Any) -> Any:
        import mcp_types

        message = getattr(item, "message", None)
        if isinstance(message, mcp_types.JSONRPCNotification):
            if message.method == _LIST_CHANGED:
                self.announcements += 1
        elif isinstance(message, mcp_types.JSONRPCResponse) and message.id in self._listings:
            self._listings.discard(message.id)
            tools = message.result.get("tools")
            if isinstance(tools, list):
                message.result["tools"] = [tool for tool in tools if self._acceptable(tool)]
        elif isinstance(message, mcp_types.JSONRPCError):
            self._listings.discard(message.id)
        return item

    def _acceptable(self, descriptor: Any) -> bool:
        import mcp_types
        from pydantic import ValidationError

        name = descriptor.get("name") if isinstance(descriptor, dict) else None
        shown = name if isinstance(name, str) else ""
        reason = _refusal(descriptor)
        if reason is None:
            try:
                mcp_types.Tool.model_validate(descriptor)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(part) for part in first["loc"])
                reason = f"its descriptor is not valid MCP ({where}: {first['msg']})"
        if reason is None:
            return True
        self.refused.append((shown, reason))
        return False


def _refusal(descriptor: Any) -> str | None:
    if not isinstance(descriptor, dict):
        return "its descriptor is not a JSON object"
    if not isinstance(descriptor.get("name"), str) or not descriptor["name"]:
        return "it has no name"
    schema = descriptor.get("inputSchema")
    if not isinstance(schema, dict):
        return "its input schema is not a JSON object"
    if schema.get("type") != "object":
        return "its input schema's root type is not object"
    return None


class _ScreenedRead:
    def __init__(self, inner: Any, screen: ListingScreen) -> None:
        self._inner = inner
        self._screen = screen

    async def receive(self) -> Any:
        return self._screen.received(await self._inner.receive())

    def __aiter__(self) -> _ScreenedRead:
        return self

    async def __anext__(self) -> Any:
        return self._screen.received(await self._inner.__anext__())

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _ScreenedRead:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *failure: Any) -> bool | None:
        return cast("bool | None", await self._inner.__aexit__(*failure))

    def __getattr__(self, name: str) -> Any:
        # The SDK reads the sender's context off the stream (``last_context``) when present.
        return getattr(self._inner, name)


class _ScreenedWrite:
    def __init__(self, inner: Any, screen: ListingScreen) -> None:
        self._inner = inner
        self._screen = screen

    async def send(self, item: Any) -> None:
        self._screen.sent(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _ScreenedWrite:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *failure: Any) -> bool | None:
        return cast("bool | None", await self._inner.__aexit__(*failure))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@contextlib.asynccontextmanager
async def _screened(
    transport: contextlib.AbstractAsyncContextManager[Any], screen: ListingScreen
) -> AsyncIterator[tuple[_ScreenedRead, _ScreenedWrite]]:
    async with transport as (read, write):
        yield _ScreenedRead(read, screen), _ScreenedWrite(write, screen)


async def _list_all(client: Client) -> list[Any]:
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(100):
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _reason(failure: BaseException) -> str:
    # The SDK raises exception groups from its task groups; the first leaf is the story.
    while isinstance(failure, BaseExceptionGroup) and failure.exceptions:
        failure = failure.exceptions[0]
    text = str(failure).strip()
    return text or type(failure).__name__


def _outcome(result: Any) -> Outcome:
    return imported_result(
        result.content, result.structured_content, is_error=bool(result.is_error)
    )


@dataclass
class McpSessions:
    """The sessions of every mcp_clients entry, in configuration order, and the tools they
    currently offer. ``generation`` moves whenever a server's listing changes, so a run's tool
    set is rebuilt only then."""

    connections: list[McpConnection] = field(default_factory=list)
    generation: int = 0
    reserved: frozenset[str] = frozenset()
    _moved: asyncio.Condition = field(default_factory=asyncio.Condition, repr=False)
    _announcing: set[asyncio.Task[None]] = field(default_factory=set, repr=False)

    def sources(self) -> tuple[ToolSource, ...]:
        return tuple(
            ToolSource(mcp_source_label(connection.name), connection.listing.tools)
            for connection in self.connections
        )

    @property
    def tools(self) -> tuple[McpTool, ...]:
        return tuple(tool for connection in self.connections for tool in connection.listing.tools)

    def reserve(self, names: Sequence[str]) -> None:
        """The names the run's other sources hold, which a re-listed tool may not take."""
        self.reserved = frozenset(names)

    def taken_by_others(self, connection: McpConnection) -> set[str]:
        names = set(self.reserved)
        for other in self.connections:
            if other is not connection:
                names.update(tool.name for tool in other.listing.tools)
        return names

    def changed(self, _: McpConnection) -> None:
        self.generation += 1
        task = asyncio.get_running_loop().create_task(self._announce())
        self._announcing.add(task)
        task.add_done_callback(self._announcing.discard)

    async def _announce(self) -> None:
        async with self._moved:
            self._moved.notify_all()

    async def wait_past(self, generation: int) -> int:
        """Wait until the listings moved past ``generation``; the generation then."""
        async with self._moved:
            await self._moved.wait_for(lambda: self.generation > generation)
        return self.generation

    async def aclose(self) -> None:
        # Reverse order, like an exit stack: the last server started is the first stopped.
        for connection in reversed(self.connections):
            await connection.close()


@contextlib.contextmanager
def _child_stderr(server: str) -> Iterator[TextIO]:
    """Where a stdio server's standard error goes: a pipe whose lines become log warnings,
    stripped of control sequences, rather than the terminal itself, where a child's writes
    would draw over the workstation and could carry escape sequences to the operator's screen.
    A burst of validation errors (a Python server's log of a request it cannot read, such as
    the 2026-07-28 protocol's probe to a server built on the SDK 1.x) becomes one line.
    """
    read_end, write_end = os.pipe()
    writer = os.fdopen(write_end, "w")
    folding = ErrorBurst(server)

    def relay() -> None:
        pending = b""
        with contextlib.closing(os.fdopen(read_end, "rb", buffering=0)) as reader:
            while True:
                # A burst with nothing after it is told once the child has been quiet a while.
                if folding.open and not select.select([reader], [], [], BURST_QUIET_SECONDS)[0]:
                    folding.close()
                    continue
                chunk = reader.read(65536)
                if not chunk:
                    break
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    folding.line(line.decode("utf-8", errors="replace"))
            if pending:
                folding.line(pending.decode("utf-8", errors="replace"))
            folding.close()

    relaying = threading.Thread(target=relay, name=f"mcp {server} stderr", daemon=True)
    relaying.start()
    try:
        yield writer
    finally:
        writer.close()
        # The child is reaped before this runs, so its copy of the pipe is closed too.
        relaying.join(timeout=2)


BURST_QUIET_SECONDS = 0.5
_BURST_HEADER = re.compile(r"\d+ validation errors? for \w+")
_BURST_LOCATION = re.compile(r"[A-Za-z_][\w.\[\]-]*")
_PROBE = "server/discover"


class ErrorBurst:
    """Folds a pydantic validation report a server writes on stderr into one warning, and
    passes every other line through as a warning of its own."""

    def __init__(self, server: str) -> None:
        self._server = server
        self._header = ""
        self._lines = 0
        self._probe = False

    @property
    def open(self) -> bool:
        return bool(self._header)

    def line(self, text: str) -> None:
        if self._header and (text[:1].isspace() or _BURST_LOCATION.fullmatch(text)):
            self._lines += 1
            self._probe = self._probe or _PROBE in text
            return
        self.close()
        if _BURST_HEADER.search(text):
            self._header = single_line(text)
            return
        if text.strip():
            _log.warning("MCP server %s: %s", self._server, single_line(text))

    def close(self) -> None:
        if not self._header:
            return
        if self._probe:
            _log.warning(
                "MCP server %s: answered the 2026-07-28 protocol's probe with a report of %d "
                "lines (%s), as a server built on the Python SDK 1.x does; it speaks the "
                "handshake era",
                self._server,
                self._lines + 1,
                self._header,
            )
        else:
            _log.warning(
                "MCP server %s: %s (%d more lines left out)",
                self._server,
                self._header,
                self._lines,
            )
        self._header, self._lines, self._probe = "", 0, False


def _stderr_warn(text: str) -> None:
    print(f"warning: {text}", file=sys.stderr)


@contextlib.asynccontextmanager
async def open_mcp_sessions(
    entries: Sequence[config.McpClient],
    *,
    warn: Callable[[str], None] = _stderr_warn,
    environ: Mapping[str, str] | None = None,
    secret_env_names: Iterable[str] = (),
) -> AsyncIterator[McpSessions]:
    """Connect every entry in order and keep the sessions until the block ends; the first
    server that cannot be started, reached, initialized or listed fails the whole open, naming
    it, after every session already opened is closed. Children are reaped on every way out.
    ``secret_env_names`` are the variables agent.yaml names as secrets
    (``operator_secret_env_names``), kept from stdio children with every other credential."""
    sessions = McpSessions()
    try:
        for entry in entries:
            resolved = resolve_entry(entry, environ)
            connection = McpConnection(
                resolved,
                on_change=sessions.changed,
                warn=warn,
                secret_env_names=secret_env_names,
            )
            sessions.connections.append(connection)
            await connection.connect(sessions.taken_by_others)
        yield sessions
    finally:
        await asyncio.shield(sessions.aclose())


@dataclass(frozen=True)
class ServerReport:
    """One entry as ``fisk info`` reports it."""

    entry: config.McpClient
    listing: ServerListing | None = None
    answer_seconds: float = 0.0
    unavailable: str = ""

    @property
    def endpoint(self) -> str:
        return server_endpoint(self.entry)

    @property
    def transport(self) -> McpTransport:
        return transport_of(self.entry)


async def discover_mcp_servers(
    entries: Sequence[config.McpClient],
    environ: Mapping[str, str] | None = None,
    secret_env_names: Iterable[str] = (),
) -> tuple[ServerReport, ...]:
    """Connect each entry alone, read its listing and close it; a server that is down is
    reported with the reason rather than failing. Stdio children are scrubbed as a run's are,
    ``secret_env_names`` included."""
    reports: list[ServerReport] = []
    for entry in entries:
        try:
            resolved = resolve_entry(entry, environ)
            connection = McpConnection(
                resolved,
                on_change=lambda _: None,
                warn=lambda _: None,
                secret_env_names=secret_env_names,
            )
            try:
                await connection.connect(lambda _: set())
            finally:
                await connection.close()
        except McpServerError as exc:
            reports.append(ServerReport(entry, unavailable=str(exc)))
            continue
        reports.append(ServerReport(entry, connection.listing, connection.answer_seconds))
    return tuple(reports)


def request_trace_meta() -> RequestParamsMeta | None:
    """The request's ``_meta`` carrying the current span's W3C traceparent, as MCP servers that
    trace read it; None when nothing is traced."""
    traceparent = telemetry.current_traceparent()
    if not traceparent:
        return None
    # The SDK types _meta by the keys it knows; the specification lets a request carry others.
    return cast("RequestParamsMeta", {"traceparent": traceparent})
