"""A local fake of the Anthropic Messages API, answering from a script of canned turns.

In a test::

    with FakeMessagesAPI() as api:
        api.script([reply(text("hello")), reply(tool_use("tu_1", "say", {"m": "hi"}),
                                                 stop_reason="tool_use")])
        provider = AnthropicProvider("key", base_url=api.base_url, max_retries=0)
        ...
        api.requests       # the decoded JSON body of every request, in order
        api.headers        # the headers of every request (names lowercased)

Each ``POST /v1/messages`` takes the next turn. A reply turn becomes a complete message (the
request's model echoed, ``request-id: req_fake_N``); an ``error(status, ...)`` turn becomes an API
error body with ``x-should-retry: false`` so the SDK does not retry it.

A request with ``"stream": true`` gets the reply as the API streams it: server-sent events over
a chunked body (message_start, a ping, content_block_start/delta/stop per block with text,
thinking and signature deltas and tool input as input_json_delta pieces, message_delta with the
stop reason and usage, message_stop). ``reply(..., chunk=N)`` sets the size of each text,
thinking or tool input piece; ``cut_after=N`` drops the connection after N events, mid-answer;
``error_after=(N, error_type)`` sends an ``error`` event after N events and ends there.
``pause(request_number, after=N)`` holds that stream after N events until the returned event is
set; ``events_sent(request_number)`` counts the events a stream has written so far.

``request_arrived(request_number)`` is an event set once that request has arrived.

Tests that share one fake (and the server pointed at it) take a ``window()`` each: it scripts
that test's turns and numbers its requests from 1; its ``close()`` lets go of what the test held
or paused, drops the turns it left, and then asserts that its requests took exactly its own
turns, so a failing test leaves nothing behind for the next.

A request past the end of the script gets a 400 saying the script ran out. A request without
``Authorization: Bearer`` or ``x-api-key`` gets a 401, and so does a wrong key when the fake was
given ``api_key``.

From another process (the end-to-end tests point ``ANTHROPIC_BASE_URL`` at it)::

    python -m tests.fakes.messages_api --script turns.json --log requests.jsonl --port-file port

``--script`` is a JSON array of turns as the helpers below build them; ``--log`` receives one JSON
line per request (``{"path", "headers", "body"}``); ``--port-file`` gets the port once the server
listens (written atomically), and the port is also printed as one line on stdout, so a parent
can wait by reading it. It serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from tests.patience import DEADLINE

Turn = dict[str, Any]

DEFAULT_CHUNK = 16
"""Characters of text, thinking or tool input per delta of a streamed reply."""

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str, signature: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": signature}


def tool_use(block_id: str, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": block_id, "name": name, "input": dict(arguments)}


def usage(
    input_tokens: int = 10,
    output_tokens: int = 5,
    cache_read: int = 0,
    cache_create: int = 0,
    thinking_tokens: int | None = None,
) -> dict[str, Any]:
    counts: dict[str, Any] = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_input_tokens": cache_read,
        "cache_creation_input_tokens": cache_create,
    }
    if thinking_tokens is not None:
        counts["output_tokens_details"] = {"thinking_tokens": thinking_tokens}
    return counts


def reply(
    *content: Mapping[str, Any],
    stop_reason: str = "end_turn",
    usage_counts: Mapping[str, Any] | None = None,
    chunk: int = DEFAULT_CHUNK,
    cut_after: int | None = None,
    error_after: tuple[int, str] | None = None,
    chunk_delay: float = 0.0,
) -> Turn:
    """A successful turn: these content blocks, this stop reason, these token counts. The
    other arguments shape its stream, when it is asked for one (``chunk_delay`` paces it: the
    seconds between two events, for benchmarks)."""
    turn: Turn = {
        "content": [dict(block) for block in content],
        "stop_reason": stop_reason,
        "usage": dict(usage_counts) if usage_counts is not None else usage(),
        "chunk": chunk,
    }
    if cut_after is not None:
        turn["cut_after"] = cut_after
    if error_after is not None:
        turn["error_after"] = list(error_after)
    if chunk_delay:
        turn["chunk_delay"] = chunk_delay
    return turn


def stream_events(message: Mapping[str, Any], chunk: int = DEFAULT_CHUNK) -> list[tuple[str, Any]]:
    """The server-sent events, as (event name, data) pairs, that stream ``message``."""
    chunk = max(1, chunk)
    counts = dict(message.get("usage") or {})
    opening = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**counts, "output_tokens": 1},
    }
    events: list[tuple[str, Any]] = [
        ("message_start", {"type": "message_start", "message": opening}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(message.get("content") or []):
        start, deltas = _block_events(block, chunk)
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        events.extend(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message.get("stop_reason"), "stop_sequence": None},
                "usage": counts,
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _pieces(value: str, size: int) -> list[str]:
    return [value[start : start + size] for start in range(0, len(value), size)]


def _block_events(block: Mapping[str, Any], chunk: int) -> tuple[dict[str, Any], list[Any]]:
    """A block's content_block_start body and its deltas, as the API splits them."""
    kind = block.get("type")
    if kind == "text":
        pieces = _pieces(str(block.get("text") or ""), chunk)
        return {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in pieces]
    if kind == "thinking":
        pieces = _pieces(str(block.get("thinking") or ""), chunk)
        deltas: list[Any] = [{"type": "thinking_delta", "thinking": p} for p in pieces]
        deltas.append({"type": "signature_delta", "signature": block.get("signature") or ""})
        return {"type": "thinking", "thinking": "", "signature": ""}, deltas
    if kind in ("tool_use", "server_tool_use"):
        arguments = json.dumps(block.get("input") or {})
        start = {**block, "input": {}}
        return start, [
            {"type": "input_json_delta", "partial_json": p} for p in _pieces(arguments, chunk)
        ]
    # Server-side results and redacted thinking arrive whole in their start event.
    return dict(block), []


def error(
    status: int, message: str, error_type: str | None = None, *, retry_after_ms: int | None = None
) -> Turn:
    """A failed turn: the API's error body with this status. Given ``retry_after_ms``, the
    answer tells the SDK to retry (``x-should-retry: true``) after that long (``retry-after-ms``);
    otherwise it tells the SDK not to."""
    turn: Turn = {
        "status": status,
        "error": {"type": error_type or _ERROR_TYPES.get(status, "api_error"), "message": message},
    }
    if retry_after_ms is not None:
        turn["retry_after_ms"] = retry_after_ms
    return turn


class FakeMessagesAPI:
    """A threaded HTTP server on 127.0.0.1 at a free port; a context manager."""

    def __init__(self, turns: Sequence[Turn] = (), *, api_key: str | None = None) -> None:
        self._lock = threading.Lock()
        self._turns: list[Turn] = list(turns)
        self._served = 0
        self._api_key = api_key
        self._log: IO[str] | None = None
        self.requests: list[Any] = []
        self.headers: list[dict[str, str]] = []
        self._holds: dict[int, threading.Event] = {}
        self._retry_after_ms: dict[int, int] = {}
        """The requests answered with a retryable error, by number: how long to wait."""
        self._streams: dict[int, Turn] = {}
        """The requests answered with a stream, by number: the turn that shapes it."""
        self._pauses: dict[int, tuple[int, threading.Event]] = {}
        self._sent: dict[int, int] = {}
        self._first_text: dict[int, float] = {}
        self._arrival_events: dict[int, threading.Event] = {}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        # Each stream event is a small write of its own, sent at once as the API's are: left to
        # Nagle's algorithm, one waits out the reader's delayed ack of the last, some 40 ms.
        # Accepted sockets inherit the option from the listening one.
        self._server.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # A short poll keeps stop() quick: shutdown waits for the serving loop's next look.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def script(self, turns: Sequence[Turn]) -> None:
        """Queue more turns after whatever is still unanswered."""
        with self._lock:
            self._turns.extend(turns)

    def hold(self, request_number: int) -> threading.Event:
        """Keep the answer to request ``request_number`` (counting from 1) until the returned
        event is set; the request is logged in ``requests`` as soon as it arrives."""
        release = threading.Event()
        with self._lock:
            self._holds[request_number] = release
        return release

    def request_arrived(self, request_number: int) -> threading.Event:
        """An event set once request ``request_number`` (counting from 1) has arrived."""
        with self._lock:
            arrival = self._arrival_events.setdefault(request_number, threading.Event())
            if len(self.requests) >= request_number:
                arrival.set()
        return arrival

    @property
    def unanswered(self) -> int:
        """How many scripted turns no request has taken yet."""
        with self._lock:
            return len(self._turns) - self._served

    def discard_unanswered(self) -> int:
        """Drop the scripted turns no request has taken yet; how many there were."""
        with self._lock:
            dropped = len(self._turns) - self._served
            del self._turns[self._served :]
            return dropped

    def window(self) -> ScriptWindow:
        """One test's share of a fake that the tests of a module use in turn."""
        return ScriptWindow(self)

    def pause(self, request_number: int, *, after: int) -> threading.Event:
        """Hold the stream answering request ``request_number`` once it has written ``after``
        events, until the returned event is set."""
        release = threading.Event()
        with self._lock:
            self._pauses[request_number] = (after, release)
        return release

    def events_sent(self, request_number: int) -> int:
        """How many events the stream answering request ``request_number`` has written."""
        with self._lock:
            return self._sent.get(request_number, 0)

    def first_text_at(self, request_number: int) -> float | None:
        """When (``time.monotonic``) the stream answering request ``request_number`` wrote its
        first piece of text, for benchmarks timing what a reader makes of it."""
        with self._lock:
            return self._first_text.get(request_number)

    def log_to(self, path: Path) -> None:
        self._log = path.open("a", encoding="utf-8")

    def start(self) -> FakeMessagesAPI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        if self._log is not None:
            self._log.close()

    def __enter__(self) -> FakeMessagesAPI:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _answer(
        self, path: str, headers: dict[str, str], body: Any
    ) -> tuple[int, dict[str, Any], int]:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            number = len(self.requests)
            arrival = self._arrival_events.get(number)
            if arrival is not None:
                arrival.set()
            if self._log is not None:
                self._log.write(json.dumps({"path": path, "headers": headers, "body": body}) + "\n")
                self._log.flush()
            refusal = self._credential_problem(headers)
            if refusal is not None:
                return 401, _error_body(error(401, refusal)), number
            if path.split("?", maxsplit=1)[0] != "/v1/messages":
                return (
                    404,
                    _error_body(error(404, f"the fake serves only /v1/messages, not {path}")),
                    number,
                )
            if self._served >= len(self._turns):
                ran_out = f"the fake's script ran out after {len(self._turns)} turns"
                return 400, _error_body(error(400, ran_out)), number
            turn = self._turns[self._served]
            self._served += 1
            held = self._holds.get(number)
        if held is not None:
            held.wait()
        if "status" in turn:
            if "retry_after_ms" in turn:
                self._retry_after_ms[number] = int(turn["retry_after_ms"])
            return int(turn["status"]), _error_body(turn), number
        model = body.get("model", "") if isinstance(body, dict) else ""
        # A turn whose content is no list stands for an endpoint that is not the Messages API,
        # which answers with JSON whatever the request asked for.
        if (
            isinstance(body, dict)
            and body.get("stream") is True
            and isinstance(turn.get("content"), list)
        ):
            with self._lock:
                self._streams[number] = turn
        message = {
            "id": f"msg_fake_{number}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": turn["content"],
            "stop_reason": turn["stop_reason"],
            "stop_sequence": None,
            "usage": turn["usage"],
        }
        return 200, message, number

    def _credential_problem(self, headers: Mapping[str, str]) -> str | None:
        authorization = headers.get("authorization", "")
        key = authorization.removeprefix("Bearer ") if authorization.startswith("Bearer ") else ""
        key = key or headers.get("x-api-key", "")
        if not key:
            return "no API key: send Authorization: Bearer or x-api-key"
        if self._api_key is not None and key != self._api_key:
            return "invalid x-api-key"
        return None


class ScriptWindow:
    """A test's view of a fake shared by several tests in turn: the turns it scripts, and the
    requests that arrived since it opened, numbered from 1 as if the fake were its own.

    ``close`` lets go of every request and stream the test held, drops the turns it left, and
    then asserts that its requests took exactly its own turns: the test that left work fails,
    and the next starts on a clean fake.
    """

    def __init__(self, api: FakeMessagesAPI) -> None:
        self.api = api
        self.scripted = 0
        self._held: list[threading.Event] = []
        with api._lock:
            self._before = len(api.requests)

    @property
    def requests(self) -> list[Any]:
        with self.api._lock:
            return self.api.requests[self._before :]

    def script(self, turns: Sequence[Turn]) -> None:
        self.scripted += len(turns)
        self.api.script(turns)

    def hold(self, request_number: int) -> threading.Event:
        release = self.api.hold(self._before + request_number)
        self._held.append(release)
        return release

    def pause(self, request_number: int, *, after: int) -> threading.Event:
        release = self.api.pause(self._before + request_number, after=after)
        self._held.append(release)
        return release

    def request_arrived(self, request_number: int) -> threading.Event:
        return self.api.request_arrived(self._before + request_number)

    async def until_arrived(self, request_number: int) -> None:
        """Return once request ``request_number`` has reached the fake."""
        arrival = self.request_arrived(request_number)
        if not await asyncio.to_thread(arrival.wait, DEADLINE):
            raise AssertionError(f"request {request_number} never reached the model")

    def close(self) -> None:
        for release in self._held:
            release.set()
        left = self.api.discard_unanswered()
        assert left == 0, f"{left} scripted turns never asked for"
        assert len(self.requests) == self.scripted, (
            f"{len(self.requests)} requests for {self.scripted} scripted turns"
        )


def _error_body(turn: Turn) -> dict[str, Any]:
    return {"type": "error", "error": turn["error"]}


def _handler_for(api: FakeMessagesAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            try:
                body: Any = json.loads(raw or b"null")
            except ValueError:
                body = raw.decode("utf-8", "replace")
            headers = {name.lower(): value for name, value in self.headers.items()}
            status, answer, number = api._answer(self.path, headers, body)
            streamed = api._streams.get(number)
            if status == 200 and streamed is not None:
                self._stream(answer, streamed, number)
                return
            payload = json.dumps(answer).encode("utf-8")
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.send_header("request-id", f"req_fake_{number}")
            retry_after_ms = api._retry_after_ms.get(number)
            if retry_after_ms is not None:
                self.send_header("x-should-retry", "true")
                self.send_header("retry-after-ms", str(retry_after_ms))
            elif status != 200:
                self.send_header("x-should-retry", "false")
            self.end_headers()
            self.wfile.write(payload)

        def _stream(self, message: Mapping[str, Any], turn: Turn, number: int) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("transfer-encoding", "chunked")
            self.send_header("cache-control", "no-cache")
            self.send_header("request-id", f"req_fake_{number}")
            self.end_headers()
            events = stream_events(message, int(turn.get("chunk") or DEFAULT_CHUNK))
            try:
                self._write_events(events, turn, number)
            except ConnectionError:
                # The reader left part way (a timeout or a cancel): nobody to write to.
                self.close_connection = True

        def _write_events(self, events: list[tuple[str, Any]], turn: Turn, number: int) -> None:
            cut_after = turn.get("cut_after")
            error_after = turn.get("error_after")
            delay = float(turn.get("chunk_delay") or 0.0)
            pacer = threading.Event()
            for written, (name, data) in enumerate(events):
                pause = api._pauses.get(number)
                if pause is not None and written == pause[0]:
                    pause[1].wait()
                if cut_after is not None and written == cut_after:
                    # No closing chunk: the reader sees the body end part way.
                    self.close_connection = True
                    return
                if error_after is not None and written == error_after[0]:
                    failure = {"type": error_after[1], "message": f"fake {error_after[1]}"}
                    self._event("error", {"type": "error", "error": failure})
                    break
                self._event(name, data)
                with api._lock:
                    api._sent[number] = written + 1
                    if data.get("delta", {}).get("type") == "text_delta":
                        api._first_text.setdefault(number, time.monotonic())
                if delay:
                    pacer.wait(delay)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _event(self, name: str, data: Any) -> None:
            frame = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
            self.wfile.write(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
            self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return Handler


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a scripted fake Anthropic Messages API.")
    parser.add_argument("--script", type=Path, required=True, help="JSON array of turns")
    parser.add_argument("--log", type=Path, help="append one JSON line per request here")
    parser.add_argument("--port-file", type=Path, help="write the listening port here")
    parser.add_argument("--api-key", help="refuse any other key with a 401")
    options = parser.parse_args(argv)
    turns = json.loads(options.script.read_text(encoding="utf-8"))
    api = FakeMessagesAPI(turns, api_key=options.api_key)
    if options.log is not None:
        api.log_to(options.log)
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    with api:
        if options.port_file is not None:
            partial = options.port_file.with_name(options.port_file.name + ".tmp")
            partial.write_text(str(api.port), encoding="utf-8")
            partial.replace(options.port_file)
        print(api.port, flush=True)
        stopping.wait()


if __name__ == "__main__":
    main()
