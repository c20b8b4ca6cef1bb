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
error body with ``x-should-retry: false`` so the SDK does not retry it. A request past the end of
the script gets a 400 saying the script ran out. A request without ``Authorization: Bearer`` or
``x-api-key`` gets a 401, and so does a wrong key when the fake was given ``api_key``.

From another process (the end-to-end tests point ``ANTHROPIC_BASE_URL`` at it)::

    python -m tests.fakes.messages_api --script turns.json --log requests.jsonl --port-file port

``--script`` is a JSON array of turns as the helpers below build them; ``--log`` receives one JSON
line per request (``{"path", "headers", "body"}``); ``--port-file`` gets the port once the server
listens (written atomically), and the port is also printed as one line on stdout, so a parent
can wait by reading it. It serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import IO, Any

Turn = dict[str, Any]

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
) -> Turn:
    """A successful turn: these content blocks, this stop reason, these token counts."""
    return {
        "content": [dict(block) for block in content],
        "stop_reason": stop_reason,
        "usage": dict(usage_counts) if usage_counts is not None else usage(),
    }


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
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
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
