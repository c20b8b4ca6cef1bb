"""A fake Slack on 127.0.0.1: the Web API methods the Slack channel calls over real HTTP, and
the socket-mode websocket that ``apps.connections.open`` hands out.

The fake keeps every channel's messages as a Slack user would see them (posted, edited, in
threads), records every Web API call, and lets a test act as a person: ``mention`` posts a
message mentioning the bot and delivers the ``app_mention`` envelope, ``press`` delivers the
``block_actions`` envelope of a button (or a typed answer). Tests wait on what a user would see
with ``wait_for``, which wakes on every call the bot makes, never on a clock.

Point the SDK at it with ``AsyncWebClient(base_url=fake.api_url)``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.patience import DEADLINE

APP_TOKEN = "xapp-1-test"
BOT_TOKEN = "xoxb-test"
TEAM = "T0TEAM"
BOT_USER = "UBOT"

_WAIT = DEADLINE
"""Seconds a test waits for the bot to do something before it fails."""


@dataclass
class Person:
    user_id: str
    real_name: str = ""
    display_name: str = ""
    handle: str = ""


@dataclass
class Posted:
    """A message in a channel, as it reads now."""

    channel: str
    ts: str
    user: str
    text: str
    thread_ts: str = ""
    blocks: list[dict[str, Any]] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)
    """Every text this message had before its current one, oldest first."""

    @property
    def buttons(self) -> list[dict[str, Any]]:
        return [
            element
            for block in self.blocks
            if block.get("type") == "actions"
            for element in block.get("elements", [])
            if element.get("type") == "button"
        ]

    def button(self, label: str) -> dict[str, Any]:
        for button in self.buttons:
            if button["text"]["text"] == label:
                return button
        raise AssertionError(f"no {label!r} button on {self.text!r}: {self.buttons}")


@dataclass(frozen=True)
class Call:
    method: str
    args: dict[str, Any]
    token: str


class FakeSlack:
    def __init__(self) -> None:
        self.people: dict[str, Person] = {}
        self.messages: list[Posted] = []
        self.calls: list[Call] = []
        self.acks: list[str] = []
        self.revoked: set[str] = set()
        self.missing_scopes: set[str] = set()
        self.connections = 0
        self._ts = itertools.count(1)
        self._envelopes = itertools.count(1)
        self._sockets: list[web.WebSocketResponse] = []
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/link", self._link)
        app.router.add_route("*", "/api/{method}", self._api)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        for socket in list(self._sockets):
            await socket.close()
        if self._runner is not None:
            await self._runner.cleanup()

    def person(
        self, user_id: str, real_name: str = "", display_name: str = "", handle: str = ""
    ) -> Person:
        self.people[user_id] = Person(user_id, real_name, display_name, handle or user_id.lower())
        return self.people[user_id]

    def _next_ts(self) -> str:
        return f"1700000000.{next(self._ts):06d}"

    # What a person does.

    def say(self, channel: str, user: str, text: str, *, thread_ts: str = "") -> Posted:
        """A message a person typed, which the bot is not told about."""
        posted = Posted(channel, self._next_ts(), user, text, thread_ts)
        self.messages.append(posted)
        return posted

    async def mention(self, channel: str, user: str, text: str, *, thread_ts: str = "") -> Posted:
        """A person mentions the bot; the app_mention envelope goes out."""
        posted = self.say(channel, user, f"<@{BOT_USER}> {text}", thread_ts=thread_ts)
        event: dict[str, Any] = {
            "type": "app_mention",
            "user": user,
            "text": posted.text,
            "ts": posted.ts,
            "channel": channel,
            "event_ts": posted.ts,
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        await self.deliver(
            "events_api",
            {"team_id": TEAM, "type": "event_callback", "event": event},
            retry_attempt=0,
        )
        return posted

    async def press(self, message: Posted, button: dict[str, Any], user: str) -> None:
        """A person presses ``button`` on ``message``."""
        await self._action(message, user, {**button, "action_ts": self._next_ts()})

    async def type_answer(self, message: Posted, user: str, text: str) -> None:
        """A person types ``text`` into the question's field and presses enter."""
        inputs = [block for block in message.blocks if block.get("type") == "input"]
        assert inputs, f"no field on {message.text!r}"
        element = inputs[0]["element"]
        await self._action(
            message,
            user,
            {
                "type": "plain_text_input",
                "action_id": element["action_id"],
                "block_id": inputs[0].get("block_id", ""),
                "value": text,
                "action_ts": self._next_ts(),
            },
        )

    async def _action(self, message: Posted, user: str, action: dict[str, Any]) -> None:
        thread_ts = message.thread_ts or message.ts
        await self.deliver(
            "interactive",
            {
                "type": "block_actions",
                "user": {
                    "id": user,
                    "username": self.people.get(user, Person(user)).handle,
                    "team_id": TEAM,
                },
                "team": {"id": TEAM},
                "channel": {"id": message.channel},
                "container": {
                    "type": "message",
                    "message_ts": message.ts,
                    "channel_id": message.channel,
                    "thread_ts": thread_ts,
                },
                "message": {"ts": message.ts, "thread_ts": thread_ts, "text": message.text},
                "actions": [action],
                "state": {"values": {}},
            },
        )

    async def deliver(self, kind: str, payload: dict[str, Any], **extra: Any) -> str:
        """Send one envelope to the connected bot and return its id."""
        await self.wait_for(lambda: bool(self._sockets), what="the bot to connect")
        envelope_id = f"env-{next(self._envelopes)}"
        envelope = {
            "envelope_id": envelope_id,
            "type": kind,
            "payload": payload,
            "accepts_response_payload": False,
            **extra,
        }
        await self._sockets[-1].send_str(json.dumps(envelope))
        return envelope_id

    async def disconnect_all(self) -> None:
        for socket in list(self._sockets):
            await socket.close()

    # What a test reads.

    def thread(self, channel: str, thread_ts: str) -> list[Posted]:
        return [
            m for m in self.messages if m.channel == channel and thread_ts in (m.ts, m.thread_ts)
        ]

    def bot_messages(self, channel: str, thread_ts: str) -> list[Posted]:
        return [m for m in self.thread(channel, thread_ts) if m.user == BOT_USER]

    def called(self, method: str) -> list[Call]:
        return [call for call in self.calls if call.method == method]

    async def wait_for(self, condition: Callable[[], object], *, what: str = "") -> None:
        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(condition), _WAIT)
            except TimeoutError:
                raise AssertionError(f"waited {_WAIT:g} s for {what or condition}") from None

    async def _touch(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    # The server side.

    async def _link(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        self.connections += 1
        self._sockets.append(socket)
        await socket.send_str(json.dumps({"type": "hello", "num_connections": 1}))
        await self._touch()
        try:
            async for message in socket:
                if message.type is WSMsgType.TEXT:
                    body = json.loads(message.data)
                    if "envelope_id" in body:
                        self.acks.append(body["envelope_id"])
                        await self._touch()
        finally:
            self._sockets.remove(socket)
            await self._touch()
        return socket

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args: dict[str, Any] = dict(request.query)
        if request.method == "POST":
            if request.content_type == "application/json":
                args.update(await request.json())
            else:
                args.update(await request.post())
        for key in ("blocks",):
            if isinstance(args.get(key), str):
                args[key] = json.loads(args[key])
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        self.calls.append(Call(method, args, token))
        try:
            body = self._answer(method, args, token)
        finally:
            await self._touch()
        return web.json_response(body)

    def _answer(self, method: str, args: dict[str, Any], token: str) -> dict[str, Any]:
        if token in self.revoked:
            return {"ok": False, "error": "token_revoked"}
        if method == "apps.connections.open":
            if not token.startswith("xapp-"):
                return {"ok": False, "error": "not_allowed_token_type"}
            return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/link"}
        if not token.startswith("xoxb-"):
            return {"ok": False, "error": "invalid_auth"}
        handler = getattr(self, "_" + method.replace(".", "_"), None)
        if handler is None:
            return {"ok": False, "error": "unknown_method"}
        result: dict[str, Any] = handler(args)
        return result

    def _auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://fake.slack.test/",
            "team": "Fake",
            "user": "fisk-ai",
            "team_id": TEAM,
            "user_id": BOT_USER,
            "bot_id": "BBOT",
        }

    def _find(self, channel: str, ts: str) -> Posted | None:
        return next((m for m in self.messages if m.channel == channel and m.ts == ts), None)

    def _chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        posted = Posted(
            args["channel"],
            self._next_ts(),
            BOT_USER,
            str(args.get("text", "")),
            str(args.get("thread_ts", "")),
            list(args.get("blocks") or []),
        )
        self.messages.append(posted)
        return {
            "ok": True,
            "channel": posted.channel,
            "ts": posted.ts,
            "message": {"text": posted.text},
        }

    def _chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        posted = self._find(args["channel"], args["ts"])
        if posted is None:
            return {"ok": False, "error": "message_not_found"}
        posted.edits.append(posted.text)
        posted.text = str(args.get("text", ""))
        posted.blocks = list(args.get("blocks") or [])
        return {"ok": True, "channel": posted.channel, "ts": posted.ts, "text": posted.text}

    def _chat_getPermalink(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, ts = args["channel"], args["message_ts"]
        return {
            "ok": True,
            "permalink": f"https://fake.slack.test/archives/{channel}/p{ts.replace('.', '')}",
        }

    def _users_info(self, args: dict[str, Any]) -> dict[str, Any]:
        if "users:read" in self.missing_scopes:
            return {"ok": False, "error": "missing_scope"}
        person = self.people.get(args["user"])
        if person is None:
            return {"ok": False, "error": "user_not_found"}
        return {
            "ok": True,
            "user": {
                "id": person.user_id,
                "name": person.handle,
                "profile": {"real_name": person.real_name, "display_name": person.display_name},
            },
        }

    def _conversations_replies(self, args: dict[str, Any]) -> dict[str, Any]:
        thread = self.thread(args["channel"], args["ts"])
        return {"ok": True, "messages": [self._shown(m) for m in self._window(thread, args)]}

    def _conversations_history(self, args: dict[str, Any]) -> dict[str, Any]:
        top = [m for m in self.messages if m.channel == args["channel"] and not m.thread_ts]
        # history lists newest first, as Slack does
        return {"ok": True, "messages": [self._shown(m) for m in reversed(self._window(top, args))]}

    @staticmethod
    def _window(messages: list[Posted], args: dict[str, Any]) -> list[Posted]:
        oldest = str(args.get("oldest", ""))
        latest = str(args.get("latest", ""))
        inclusive = str(args.get("inclusive", "")).lower() in {"1", "true"}
        chosen = [
            m
            for m in messages
            if (not oldest or m.ts > oldest or (inclusive and m.ts == oldest))
            and (not latest or m.ts < latest or (inclusive and m.ts == latest))
        ]
        limit = int(args.get("limit", 0) or 0)
        return chosen[-limit:] if limit else chosen

    @staticmethod
    def _shown(message: Posted) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "type": "message",
            "user": message.user,
            "text": message.text,
            "ts": message.ts,
        }
        if message.thread_ts:
            shown["thread_ts"] = message.thread_ts
        if message.user == BOT_USER:
            shown["bot_id"] = "BBOT"
        return shown
