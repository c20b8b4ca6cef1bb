"""A crash campaign: `fisk run` SIGKILLed again and again through one conversation, resumed each
time until the conversation completes.

The model (a fake that answers by the conversation's position, so a request resent after a
crash gets the same answer) asks for one tool call per turn, ``STEPS`` in a row, then answers.
The campaign picks kill points among three kinds and kills the run there, each found by an
event rather than by waiting on time:

- ``tool``: while the step's command blocks (its pid arrives through a fifo);
- ``journaled``: as soon as the step's tool result is in the journal (inotify on the state
  directory, then the journal's content is read);
- ``model``: while the fake holds the model request that carries the step's result (step 0 is
  the first request, before any tool ran).

Every run of a command appends its argv to a side file. After each kill, the results journaled
so far and the runs so far are noted; a call whose result was journaled must never run again.
Nothing may be left behind: every child of a killed run ends, no ``fisk-broker-*`` directory
stays in the runs' temporary folder, and no process carrying that folder outlives the campaign.

``FISK_CRASH_CAMPAIGN=N`` sets the number of kills (4 by default), ``FISK_CRASH_CAMPAIGN_SEED``
the seed that picks the kill points. The counts are printed (``-s`` shows them).
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import random
import signal
import sys
import threading
from collections import Counter
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from fisk_ai.broker.server import PRIVATE_DIR_PREFIX, locate_server_binary
from tests.e2e.agent_runs import fisk_environment, write_config
from tests.e2e.conftest import FISK
from tests.fakes.fiskapp import (
    application,
    arg,
    command,
    kill_quietly,
    open_pid_fifo,
    read_pid,
    wait_for_exit,
)
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.patience import DEADLINE

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="waiting on a pid needs pidfd_open"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux only"),
    pytest.mark.skipif(locate_server_binary() is None, reason="no nats-server binary"),
]

KILLS = int(os.environ.get("FISK_CRASH_CAMPAIGN", "4"))
SEED = int(os.environ.get("FISK_CRASH_CAMPAIGN_SEED", "16"))
STEPS = 4
MAX_KILLS_PER_CONVERSATION = 6
PROMPT = "drain and check nodes n1 to n4"
ANSWER = "Nodes n1 to n4 are drained and checked."
KINDS = ("tool", "journaled", "model")

T = TypeVar("T")

# One kill point: its kind and the step it belongs to.
Point = tuple[str, int]


def call_id(step: int) -> str:
    return f"tu_{step}"


def node(step: int) -> str:
    return f"n{step}"


def command_of(step: int) -> str:
    return "drain" if step % 2 else "check"


def turn(position: int) -> dict[str, Any]:
    """The model's answer to a request made after ``position`` turns of its own."""
    if position < STEPS:
        step = position + 1
        use = tool_use(call_id(step), command_of(step), {"node": node(step)})
        return reply(use, stop_reason="tool_use")
    return reply(text(ANSWER))


class ConversationAPI(FakeMessagesAPI):
    """The fake Messages API answering each request by its position in the conversation (the
    number of assistant messages it carries), so a request resent by a resume gets the answer
    the killed run would have had. ``hold(position)`` keeps the next such request until the
    test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self._held: dict[int, tuple[threading.Event, threading.Event]] = {}
        server = self._server
        report = server.handle_error

        def handle_error(request: Any, client_address: Any) -> None:
            # A held answer written to a run killed meanwhile: expected, not worth a traceback.
            if not isinstance(sys.exc_info()[1], ConnectionError):
                report(request, client_address)

        server.handle_error = handle_error  # type: ignore[method-assign]

    def hold_at(self, position: int) -> tuple[threading.Event, threading.Event]:
        """(arrived, release) for the next request at ``position``."""
        events = (threading.Event(), threading.Event())
        with self._lock:
            self._held[position] = events
        return events

    def _answer(
        self, path: str, headers: dict[str, str], body: Any
    ) -> tuple[int, dict[str, Any], int]:
        if not isinstance(body, dict):
            # A request cut short by a kill while it was being sent.
            return 400, {"type": "error", "error": {"type": "invalid_request_error"}}, 0
        position = sum(1 for message in body["messages"] if message["role"] == "assistant")
        with self._lock:
            self.requests.append(body)
            number = len(self.requests)
            held = self._held.pop(position, None)
        if held is not None:
            arrived, release = held
            arrived.set()
            release.wait()
        answer = turn(position)
        message = {
            "id": f"msg_fake_{number}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "content": answer["content"],
            "stop_reason": answer["stop_reason"],
            "stop_sequence": None,
            "usage": answer["usage"],
        }
        return 200, message, number


_TOOL = """#!{python}
import json, os, signal, sys

HOME = {home!r}
MODEL = json.loads({model!r})
argv = sys.argv[1:]
if argv == ["--fisk-introspect"]:
    sys.stdout.write(json.dumps(MODEL) + "\\n")
    sys.exit(0)
with open(os.path.join(HOME, "runs"), "a") as runs:
    runs.write(json.dumps(argv) + "\\n")
try:
    os.unlink(os.path.join(HOME, "block-" + argv[-1]))
except FileNotFoundError:
    sys.stdout.write(argv[0] + " " + argv[-1] + ": done\\n")
    sys.exit(0)
with open(os.path.join(HOME, "tool.pid"), "w") as fifo:
    fifo.write(str(os.getpid()))
while True:
    signal.pause()
"""


def write_tool(home: Path) -> Path:
    """The fleet application: ``drain NODE`` and ``check NODE`` log every run; a run whose node
    has a ``block-NODE`` marker takes the marker, sends its pid to the fifo and blocks."""
    model = application(
        "fleet",
        commands=[
            command("drain", "Drain a node", args=[arg("node", "Node", required=True)]),
            command("check", "Check a node", args=[arg("node", "Node", required=True)]),
        ],
    )
    path = home / "fleet"
    path.write_text(_TOOL.format(python=sys.executable, home=str(home), model=json.dumps(model)))
    path.chmod(0o755)
    return path


def runs_by_node(home: Path) -> Counter[str]:
    log = home / "runs"
    lines = log.read_text().splitlines() if log.exists() else []
    return Counter(json.loads(line)[-1] for line in lines if line)


def journaled_results(journal: Path) -> list[str]:
    """The tool_use ids of the tool_result records in ``journal``, in order (a torn last line is
    not a record yet)."""
    ids = []
    for line in journal.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("tool_result"), dict):
            ids.append(record["tool_result"]["tool_use_id"])
    return ids


class DirectoryWatch:
    """inotify on a directory: wakes whenever a file in it is created or written."""

    _IN_MODIFY, _IN_CLOSE_WRITE, _IN_MOVED_TO, _IN_CREATE = 0x2, 0x8, 0x80, 0x100

    def __init__(self, directory: Path) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self._fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        mask = self._IN_MODIFY | self._IN_CLOSE_WRITE | self._IN_MOVED_TO | self._IN_CREATE
        if libc.inotify_add_watch(self._fd, os.fsencode(directory), mask) < 0:
            os.close(self._fd)
            raise OSError(ctypes.get_errno(), "inotify_add_watch")

    async def until(self, holds: Any) -> None:
        """Return once ``holds()`` is true, looking again after every change."""
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()

        def readable() -> None:
            try:
                while os.read(self._fd, 65536):
                    pass
            except BlockingIOError:
                pass
            changed.set()

        loop.add_reader(self._fd, readable)
        try:
            while not holds():
                await changed.wait()
                changed.clear()
        finally:
            loop.remove_reader(self._fd)

    def close(self) -> None:
        os.close(self._fd)


def children_of(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        return [int(word) for word in children.read_text().split()]
    except OSError:
        return []


def processes_carrying(marker: str) -> list[int]:
    """Live processes whose environment holds ``marker`` (every process a run started)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@dataclass
class Tally:
    runs: int = 0
    kills: int = 0
    resumes: int = 0
    executions: int = 0
    repeated_calls: int = 0
    repeated_journaled_calls: int = 0
    kinds: Counter[str] = field(default_factory=Counter)

    def line(self) -> str:
        kinds = ", ".join(f"{kind} {self.kinds[kind]}" for kind in KINDS)
        return (
            f"crash campaign: {self.runs} runs, {self.kills} kills ({kinds}), "
            f"{self.resumes} resumes, {self.executions} tool executions, "
            f"{self.repeated_calls} repeated calls (in flight at a kill), "
            f"{self.repeated_journaled_calls} repeated journaled calls"
        )


def plan(kills: int, rng: random.Random) -> list[list[Point]]:
    """Kill points for each conversation, in the order a run reaches them."""
    points: list[Point] = [("model", 0)]
    for step in range(1, STEPS + 1):
        points += [("tool", step), ("journaled", step), ("model", step)]
    conversations = []
    remaining = kills
    while remaining > 0:
        count = min(remaining, MAX_KILLS_PER_CONVERSATION)
        chosen = rng.sample(points, count)
        while count >= len(KINDS) and len({kind for kind, _ in chosen}) < len(KINDS):
            chosen = rng.sample(points, count)
        conversations.append(sorted(chosen, key=points.index))
        remaining -= count
    return conversations


async def first_or_exit(waiting: Awaitable[T], process: asyncio.subprocess.Process) -> T:
    """``waiting``'s result; fails at once should the run end first, or after DEADLINE seconds."""
    wanted = asyncio.ensure_future(waiting)
    exited = asyncio.ensure_future(process.wait())
    done, _ = await asyncio.wait({wanted, exited}, timeout=DEADLINE, return_when="FIRST_COMPLETED")
    if wanted in done:
        exited.cancel()
        return wanted.result()
    wanted.cancel()
    if exited in done:
        assert process.stderr is not None
        stderr = (await process.stderr.read()).decode()
        raise AssertionError(f"fisk ended ({process.returncode}) before the kill point:\n{stderr}")
    raise AssertionError(f"the kill point was not reached within {DEADLINE} s")


@dataclass
class Conversation:
    home: Path
    config: Path
    env: dict[str, str]
    api: ConversationAPI
    watch: DirectoryWatch
    tally: Tally
    session: str = ""
    # tool_use id -> how often its command had run when its result was first seen journaled.
    runs_when_journaled: dict[str, int] = field(default_factory=dict)

    @property
    def sessions(self) -> Path:
        return self.home / "sessions"

    @property
    def journal(self) -> Path:
        return self.sessions / f"{self.session}.json"

    async def start(self) -> asyncio.subprocess.Process:
        target = ["--resume", self.session] if self.session else [PROMPT]
        self.tally.runs += 1
        self.tally.resumes += bool(self.session)
        return await asyncio.create_subprocess_exec(
            str(FISK),
            "run",
            "--no-tui",
            "--state-dir",
            str(self.sessions),
            "--config",
            str(self.config),
            *target,
            cwd=self.home,
            env=self.env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )

    def results(self) -> list[str]:
        journals = list(self.sessions.glob("*.json"))
        if not self.session:
            if not journals:
                return []
            (journal,) = journals
            self.session = journal.stem
        return journaled_results(self.journal) if self.journal.exists() else []

    async def run_to(self, point: Point) -> None:
        """Start a run (or a resume) and SIGKILL it at ``point``; then check what it left."""
        kind, step = point
        fifo = -1
        arrived = release = None
        if kind == "tool":
            (self.home / f"block-{node(step)}").touch()
            fifo = open_pid_fifo(self.home / "tool.pid")
        elif kind == "model":
            arrived, release = self.api.hold_at(step)
        process = await self.start()
        tool_pid = 0
        children: list[int] = []
        try:
            if kind == "tool":
                tool_pid = await first_or_exit(read_pid(fifo, within=DEADLINE), process)
            elif kind == "journaled":
                await first_or_exit(
                    self.watch.until(lambda: call_id(step) in self.results()), process
                )
            else:
                assert arrived is not None
                await first_or_exit(asyncio.to_thread(arrived.wait, DEADLINE), process)
            children = children_of(process.pid)
            process.kill()
            await process.communicate()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            if release is not None:
                release.set()
            if kind == "tool":
                (self.home / "tool.pid").unlink(missing_ok=True)
                (self.home / f"block-{node(step)}").unlink(missing_ok=True)
        assert process.returncode == -signal.SIGKILL
        self.tally.kills += 1
        self.tally.kinds[kind] += 1
        for pid in {*children, *([tool_pid] if tool_pid else [])}:
            if not await wait_for_exit(pid, within=DEADLINE):
                kill_quietly(pid)
                raise AssertionError(f"{pid}, a child of the killed run, outlived it")
        self.note_journaled()

    def note_journaled(self) -> None:
        runs = runs_by_node(self.home)
        for tool_use_id in self.results():
            self.runs_when_journaled.setdefault(tool_use_id, runs[node(int(tool_use_id[3:]))])

    async def complete(self) -> None:
        process = await self.start()
        stdout, stderr = await asyncio.wait_for(process.communicate(), DEADLINE)
        assert process.returncode == 0, stderr.decode()
        assert stdout.decode() == ANSWER + "\n", stderr.decode()


async def run_campaign(home: Path, kills: int, seed: int) -> Tally:
    tally = Tally()
    temporary = home / "tmp"
    temporary.mkdir()
    api = ConversationAPI()
    with api:
        for number, points in enumerate(plan(kills, random.Random(seed)), start=1):
            conversation_home = home / f"conversation-{number}"
            conversation_home.mkdir()
            (conversation_home / "sessions").mkdir(mode=0o700)
            config = write_config(conversation_home, application=write_tool(conversation_home))
            env = fisk_environment(conversation_home, api, {"TMPDIR": str(temporary)})
            watch = DirectoryWatch(conversation_home / "sessions")
            try:
                conversation = Conversation(conversation_home, config, env, api, watch, tally)
                for point in points:
                    await conversation.run_to(point)
                await conversation.complete()
            finally:
                watch.close()
            check_conversation(conversation, tally)
    leftovers = [
        entry.name for entry in temporary.iterdir() if entry.name.startswith(PRIVATE_DIR_PREFIX)
    ]
    assert leftovers == [], f"broker directories left behind: {leftovers}"
    survivors = processes_carrying(str(temporary))
    for pid in survivors:
        kill_quietly(pid)
    assert survivors == [], f"processes of the campaign's runs outlived it: {survivors}"
    return tally


def check_conversation(conversation: Conversation, tally: Tally) -> None:
    results = journaled_results(conversation.journal)
    assert sorted(results) == sorted(call_id(step) for step in range(1, STEPS + 1)), results
    runs = runs_by_node(conversation.home)
    tally.executions += sum(runs.values())
    tally.repeated_calls += sum(count - 1 for count in runs.values())
    for tool_use_id, seen in conversation.runs_when_journaled.items():
        tally.repeated_journaled_calls += runs[node(int(tool_use_id[3:]))] - seen


def test_plan_varies_the_kill_points() -> None:
    conversations = plan(13, random.Random(SEED))
    assert [len(points) for points in conversations] == [6, 6, 1]
    for points in conversations[:2]:
        assert {kind for kind, _ in points} == set(KINDS)
        assert len(set(points)) == len(points)


async def test_every_killed_conversation_resumes_to_the_end_repeating_no_journaled_call(
    tmp_path: Path,
) -> None:
    tally = await run_campaign(tmp_path, KILLS, SEED)
    print(tally.line())
    assert tally.kills == KILLS
    assert tally.repeated_journaled_calls == 0, tally.line()
    # Only a call in flight at a kill may run again, so never more repeats than kills.
    assert tally.repeated_calls <= tally.kills, tally.line()
