"""Nothing typed is ever lost, as a property: the installed `fisk run` in a real terminal (tmux)
takes seeded random bursts of text, Enter, Ctrl-J, Backspace, Ctrl-U, Ctrl-C and bracketed paste,
typed at random moments around model replies held back and let go, tool calls, approvals,
ask_human questions, API errors, retried 529s, the end of turns and resizes.

The test keeps its own model of the chat bar: what each key does to the text is known (a
character is appended, Backspace removes the last, Ctrl-U the current line, the first Ctrl-C
the whole draft, Enter moves the text out). At the end every prompt the model says was sent must
have reached the fake Messages API, as written and in order, and nothing else may have: a
character typed is in a request, still in the bar (sent by the last Enter), or removed by a key
that says it removes.

One seed runs in the suite; FISK_FUZZ_SEEDS=1,2,3 (or FISK_FUZZ_SEEDS=20 for seeds 1 to 20)
runs more.
"""

from __future__ import annotations

import os
import random
import shlex
import shutil
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agent_runs import fisk_environment, write_config
from tests.e2e.conftest import FISK
from tests.fakes.fiskapp import write_fake_app
from tests.fakes.messages_api import FakeMessagesAPI, Turn, error, reply, text, tool_use
from tests.patience import DEADLINE
from tests.tui.tmux_pane import Pane
from tests.tui.workstation import ops_model

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

STEPS = 60
"""Keystroke bursts per seed."""
FIRST_PROMPT = "start the fuzz"
ALPHABET = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:!?'()-\u2014\u2019\u00e9"
)
"""What a burst types: letters, digits, punctuation, and the em dash, curly quote and accented
letter that Claude and operators type every day. No slash, so a burst is never a chat command."""
SIZES = ((80, 24), (160, 45), (100, 30))
QUESTION = "Proceed with the fuzz?"
MODAL_TAKES_KEYS = "keys:"
"""A question's keys line: shown once its guard is over and it takes keys."""
IDLE_WORDS = ("[awaiting input]", "[error]", "[suspended]", "[aborted]")


def seeds() -> list[int]:
    chosen = os.environ.get("FISK_FUZZ_SEEDS", "")
    if not chosen:
        return [7]
    if chosen.isdigit():
        return list(range(1, int(chosen) + 1))
    return [int(seed) for seed in chosen.split(",")]


def scripted_turns(rng: random.Random, count: int) -> list[Turn]:
    """What the fake model answers, request by request: plain answers, tool calls (one gated,
    needing an approval), ask_human questions, failures and 529s the SDK retries."""
    turns: list[Turn] = []
    while len(turns) < count:
        kind = rng.choice(["answer", "answer", "tool", "gated", "question", "error", "busy"])
        number = len(turns)
        if kind == "answer":
            turns.append(reply(text(f"answer {number} — done")))
        elif kind == "tool":
            turns.append(
                reply(tool_use(f"tu_{number}", "say", {"words": "hi"}), stop_reason="tool_use")
            )
        elif kind == "gated":
            call = tool_use(f"tu_{number}", "stream_rm", {"stream": "ORDERS"})
            turns.append(reply(call, stop_reason="tool_use"))
        elif kind == "question":
            call = tool_use(f"tu_{number}", "ask_human_confirm", {"question": QUESTION})
            turns.append(reply(call, stop_reason="tool_use"))
        elif kind == "error":
            turns.append(error(500, "the fake failed this request"))
        else:
            turns.append(error(529, "Overloaded", retry_after_ms=200))
    return turns


@dataclass
class ChatBarModel:
    """What the chat bar must hold after each key, and what Enter must have sent."""

    text: str = ""
    sent: list[str] = field(default_factory=lambda: [FIRST_PROMPT])

    def type(self, typed: str) -> None:
        self.text += typed

    def backspace(self) -> None:
        self.text = self.text[:-1]

    def kill_line(self) -> None:
        if self.text.endswith("\n"):
            # At the start of a line Ctrl-U joins it to the line above, as Backspace does.
            self.text = self.text[:-1]
        else:
            self.text = self.text[: self.text.rfind("\n") + 1]

    def enter(self) -> None:
        if self.text.strip():
            self.sent.append(self.text)
            self.text = ""


def prompts_received(requests: Sequence[Any]) -> list[str]:
    """Every distinct text the operator sent, in the order the fake API first saw it."""
    seen: list[str] = []
    for body in requests:
        for message in body.get("messages", []):
            if message.get("role") != "user":
                continue
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for block in blocks:
                if block.get("type") == "text" and block["text"] not in seen:
                    seen.append(block["text"])
    return seen


def tmux_word(text: str) -> str:
    """``text`` as one argument tmux takes as written, after a ``--``: a word ending in ";"
    would otherwise end tmux's command, the semicolon lost."""
    return text[:-1] + "\\;" if text.endswith(";") else text


class Driver:
    def __init__(self, pane: Pane, api: FakeMessagesAPI, rng: random.Random) -> None:
        self.pane = pane
        self.api = api
        self.rng = rng
        self.bar = ChatBarModel()
        self.holds: dict[int, Any] = {}
        self.log: list[str] = []
        """Every key sent, for the failure message."""
        self.released = 0

    def keys(self, *keys: str) -> None:
        self.log.extend(keys)
        self.pane.tmux("send-keys", "-t", self.pane.target, *keys)

    def literal(self, typed: str) -> None:
        self.log.append(repr(typed))
        self.pane.tmux("send-keys", "-t", self.pane.target, "-l", "--", tmux_word(typed))

    def paste(self, pasted: str) -> None:
        self.log.append(f"paste {pasted!r}")
        self.pane.tmux("set-buffer", "-b", "fuzz", "--", tmux_word(pasted))
        self.pane.tmux("paste-buffer", "-p", "-d", "-b", "fuzz", "-t", self.pane.target)

    def burst(self) -> str:
        return "".join(self.rng.choice(ALPHABET) for _ in range(self.rng.randint(1, 12)))

    def step(self) -> None:
        action = self.rng.choice(
            ["type"] * 6 + ["enter"] * 3 + ["newline", "backspace", "kill_line", "clear",
             "paste", "resize", "release", "release"]
        )  # fmt: skip
        if action == "type":
            typed = self.burst()
            self.literal(typed)
            self.bar.type(typed)
        elif action == "enter":
            self.keys("Enter")
            self.bar.enter()
        elif action == "newline":
            self.keys("C-j")
            self.bar.type("\n")
        elif action == "backspace" and self.bar.text:
            self.keys("BSpace")
            self.bar.backspace()
        elif action == "kill_line" and self.bar.text:
            self.keys("C-u")
            self.bar.kill_line()
        elif action == "clear" and self.bar.text:
            # The first Ctrl-C empties a draft, and says so; only then would it stop or leave.
            self.keys("C-c")
            self.bar.text = ""
        elif action == "paste":
            pasted = f"{self.burst()}\n{self.burst()}"
            self.paste(pasted)
            self.bar.type(pasted)
        elif action == "resize":
            width, height = self.rng.choice(SIZES)
            self.pane.tmux(
                "resize-window", "-t", self.pane.target, "-x", str(width), "-y", str(height)
            )
        elif action == "release":
            self.release_one()
        self.answer_any_question()

    def release_one(self) -> None:
        """Let the oldest held reply go: the model answers while the operator types."""
        waiting = sorted(number for number in self.holds if number <= len(self.api.requests))
        if waiting:
            self.holds.pop(waiting[0]).set()

    def answer_any_question(self) -> None:
        """Answer a question that is up, once it takes keys (its keys line shows): Once for an
        approval, Yes for a question. Keys that reach a question as it opens are the chat bar's;
        once it is up (the pane says blocked) the driver types nothing more into it."""
        while self.pane.state() == "blocked" or MODAL_TAKES_KEYS in self.pane.screen():
            if MODAL_TAKES_KEYS not in self.pane.screen():
                time.sleep(0.02)
                continue
            self.keys("y")
            # The next question, if one comes at once, shows no keys line through its guard.
            self.pane.wait_until(
                lambda: MODAL_TAKES_KEYS not in self.pane.screen(), "the question to go"
            )

    def finish(self) -> None:
        """Send what is left in the bar, let every reply go, and wait until the fake API has
        seen every prompt the model says was sent."""
        self.keys("Enter")
        self.bar.enter()
        deadline = time.monotonic() + DEADLINE * 3
        while time.monotonic() < deadline:
            for release in self.holds.values():
                release.set()
            self.answer_any_question()
            screen = self.pane.screen()
            idle = any(word in screen for word in IDLE_WORDS) and "queued:" not in screen
            if idle and len(prompts_received(self.api.requests)) >= len(self.bar.sent):
                return
            time.sleep(0.05)


@pytest.mark.parametrize("seed", seeds())
def test_every_character_typed_reaches_the_model_or_stays_in_the_chat_bar(
    seed: int, tmp_path: Path, tmux_environment: dict[str, str]
) -> None:
    rng = random.Random(seed)
    application = write_fake_app(tmp_path, ops_model(), name="ops")
    write_config(
        tmp_path,
        application=application,
        extra=(
            "identity: fuzz-agent\nharness:\n  human_in_the_loop:\n    enabled: true\n"
            # Random text can look like a credential; the guard would rightly redact it.
            '  pii:\n    mode: "off"\n'
        ),
    )
    turns = scripted_turns(rng, 400)
    with FakeMessagesAPI(turns) as api:
        environment = {**fisk_environment(tmp_path, api), **tmux_environment}
        pane = Pane(f"fisk-{uuid.uuid4().hex[:8]}", environment)
        driver = Driver(pane, api, rng)
        driver.holds = {number: api.hold(number) for number in range(1, 401) if rng.random() < 0.5}
        command = f"{shlex.quote(str(FISK))} run {shlex.quote(FIRST_PROMPT)}; sleep 600"
        pane.tmux(
            "-f", "/dev/null", "new-session", "-d", "-s", "run", "-x", "100", "-y", "30",
            "-c", str(tmp_path), command,
        )  # fmt: skip
        try:
            pane.wait_until(lambda: "fuzz-agent" in pane.screen(), "the workstation")
            for _ in range(STEPS):
                driver.step()
            driver.finish()
            received = prompts_received(api.requests)
            screen = pane.screen()
        finally:
            for release in driver.holds.values():
                release.set()
            pane.kill_server()
    assert received == driver.bar.sent, (
        f"seed {seed}; the keys: {driver.log}\nthe screen at the end:\n{screen}"
    )
