"""The Choria asyncjobs wire: the task store, the work queue and its ``WORKERS`` consumer, the
task document and its states, the lifecycle events.

Storage is bound, never created: a missing stream or consumer fails with the command that makes
it. A stored task is kept as the dict it was read as, and only ``state``, ``tried``, ``tries``,
``last_err`` and ``result`` are changed, so ``created``, ``deadline`` and ``payload`` keep the
exact strings a Go client wrote (nanoseconds included) and its signature stays valid.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from nats.js.errors import APIError, NotFoundError

from fisk_ai.errors import BoundedInputError, FiskError
from fisk_ai.telemetry import current_traceparent
from fisk_ai.util.bounded import loads_json
from fisk_ai.util.ids import new_ksuid

if TYPE_CHECKING:
    from nats.aio.client import Client as NatsClient
    from nats.js.client import JetStreamContext

__all__ = [
    "EVENT_TYPE",
    "MAX_TASK_BYTES",
    "TASKS_STREAM",
    "TRACEPARENT_HEADER",
    "WORKERS",
    "QueueSettings",
    "StoredTask",
    "TaskRefused",
    "TaskUnreadable",
    "bind_queue",
    "check_queue_name",
    "count_of",
    "decode_payload",
    "enqueue",
    "event_subject",
    "load_task",
    "parse_time",
    "publish_event",
    "queue_stream",
    "queue_subject",
    "save_task",
    "task_subject",
    "timestamp",
]

TASKS_STREAM = "CHORIA_AJ_TASKS"
WORKERS = "WORKERS"
EVENT_TYPE = "io.choria.asyncjobs.v1.task_state"
EXPECTED_LAST_SUBJECT_SEQUENCE = "Nats-Expected-Last-Subject-Sequence"
# The W3C header name, as an OpenTelemetry NATS propagator carries it.
TRACEPARENT_HEADER = "traceparent"
FINISHED_STATES = frozenset({"complete", "completed", "expired", "terminated", "unreachable"})
MAX_TASK_BYTES = 8 * 1024 * 1024
"""Bytes a stored task document may hold: a payload at any sensible max_payload, base64 grown,
plus the answer written back beside it."""
# Go reads a task's counts into an int: 64 bits.
_MAX_COUNT = 2**63 - 1
# The names asyncjobs accepts for a queue (its IsValidName).
_QUEUE_NAME = re.compile(r"[a-zA-Z0-9_:-]+")


def check_queue_name(queue: str, *, where: str) -> str:
    """``queue`` if asyncjobs can name a queue so; a FiskError naming ``where`` it was set
    otherwise, before any stream name is built from it."""
    if not _QUEUE_NAME.fullmatch(queue):
        raise FiskError(
            f"{where} {queue!r} is not a queue name asyncjobs accepts; use letters, digits, "
            "'_', ':' and '-'"
        )
    return queue


def queue_stream(queue: str) -> str:
    return f"CHORIA_AJ_Q_{queue}"


def queue_subject(queue: str, task_id: str) -> str:
    return f"CHORIA_AJ.Q.{queue}.{task_id}"


def task_subject(task_id: str) -> str:
    return f"CHORIA_AJ.T.{task_id}"


def event_subject(task_id: str) -> str:
    return f"CHORIA_AJ.E.task_state.{task_id}"


@dataclass(frozen=True)
class QueueSettings:
    """What the queue's ``WORKERS`` consumer says, read back at startup: how long a job may run
    before it is redelivered, how often it is tried (-1: without limit), and how many run at
    once across every worker."""

    run_time: timedelta
    tries: int
    concurrency: int


async def bind_queue(js: JetStreamContext, queue: str) -> QueueSettings:
    """Check the task store, the queue stream and its consumer exist, and read the consumer's
    settings. Raises a FiskError naming what to create, and with which command."""
    where = f'connecting to queue "{queue}"'
    try:
        await js.stream_info(TASKS_STREAM)
    except NotFoundError:
        raise FiskError(
            f"building the jobs endpoint: {where}: storage not ready: stream {TASKS_STREAM} does "
            "not exist, create it with 'ajc tasks initialize'"
        ) from None
    stream = queue_stream(queue)
    try:
        await js.stream_info(stream)
    except NotFoundError:
        raise FiskError(
            f"building the jobs endpoint: {where}: queue not found: stream {stream} does not "
            f"exist, create it with 'ajc queue add {queue}' or set expose.agent.jobs.queue to a "
            "queue that exists"
        ) from None
    try:
        info = await js.consumer_info(stream, WORKERS)
    except NotFoundError:
        raise FiskError(
            f"building the jobs endpoint: {where}: storage not ready: consumer {WORKERS} on "
            f"stream {stream} does not exist, create the queue with 'ajc queue add {queue}'"
        ) from None
    config = info.config
    ack_wait = float(config.ack_wait or 0)
    return QueueSettings(
        run_time=timedelta(seconds=ack_wait) if ack_wait > 0 else timedelta(seconds=30),
        tries=int(config.max_deliver) if config.max_deliver else -1,
        concurrency=int(config.max_ack_pending or 0),
    )


@dataclass
class StoredTask:
    """A task document as stored, with the stream sequence a conditional save checks."""

    document: dict[str, Any]
    seq: int

    @property
    def task_id(self) -> str:
        return str(self.document.get("id", ""))

    @property
    def state(self) -> str:
        return str(self.document.get("state", ""))


class TaskRefused(Exception):
    """A task the worker cannot run (its payload, or a field it reads); the reason is stored as
    the task's last_err and the task is terminated, not retried."""


class TaskUnreadable(FiskError):
    """A stored task document that cannot be read as one: not JSON, nested or sized past the
    bounded loader's caps, a number out of range, or not an object. No worker can run it, and
    none can record that on a document it cannot read."""


async def load_task(js: JetStreamContext, task_id: str) -> StoredTask | None:
    """The task ``task_id`` as last stored; None when the store has no such task. TaskUnreadable
    when the stored document is not one."""
    try:
        message = await js.get_last_msg(TASKS_STREAM, task_subject(task_id))
    except NotFoundError:
        return None
    what = f"the document of task {task_id}"
    try:
        document = loads_json(message.data or b"", what=what, max_bytes=MAX_TASK_BYTES)
    except BoundedInputError as bad:
        raise TaskUnreadable(str(bad)) from None
    if not isinstance(document, dict):
        raise TaskUnreadable(f"{what} is not a JSON object")
    return StoredTask(document, int(message.seq or 0))


def count_of(document: dict[str, Any], key: str) -> int:
    """The count a task document holds under ``key`` (0 when absent), as Go reads it into an
    int; TaskRefused when it holds anything else."""
    value = document.get(key, 0)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_COUNT:
        shown = json.dumps(value)
        shown = shown if len(shown) <= 24 else shown[:20] + "..."
        raise TaskRefused(f"the task's {key} is {shown}, which is not a count")
    return value


async def save_task(js: JetStreamContext, task: StoredTask) -> None:
    """Store ``task`` only if nobody stored it since it was read; its seq then moves on."""
    ack = await js.publish(
        task_subject(task.task_id),
        json.dumps(task.document, separators=(",", ":")).encode(),
        headers={EXPECTED_LAST_SUBJECT_SEQUENCE: str(task.seq)},
    )
    task.seq = int(ack.seq)


async def publish_event(nc: NatsClient, task: StoredTask) -> None:
    """The task_state lifecycle event ``ajc tasks watch`` shows; core NATS, not stored."""
    document = task.document
    created = parse_time(str(document.get("created", "")))
    age = int((datetime.now(UTC) - created).total_seconds() * 1e9) if created else 0
    event: dict[str, Any] = {
        "event_id": new_ksuid(),
        "type": EVENT_TYPE,
        "timestamp": timestamp(),
        "task_id": task.task_id,
        "state": task.state,
        "tries": _count_or_zero(document, "tries"),
        "queue": document.get("queue", ""),
        "task_type": document.get("type", ""),
        "task_age": age,
    }
    if document.get("last_err"):
        event["last_error"] = document["last_err"]
    await nc.publish(event_subject(task.task_id), json.dumps(event).encode())


def _count_or_zero(document: dict[str, Any], key: str) -> int:
    try:
        return count_of(document, key)
    except TaskRefused:
        return 0


def decode_payload(document: dict[str, Any], max_payload: int) -> bytes:
    """The request bytes a task carries. The payload is base64 in JSON; its bytes are bounded
    by ``max_payload`` before anything else reads them, they are read with the bounded loader,
    and a JSON string literal (what ``ajc tasks add TYPE PAYLOAD`` stores) is unwrapped once."""
    raw = document.get("payload")
    if not isinstance(raw, str) or not raw:
        raise TaskRefused("the task has no payload; send an io.choria.fisk-ai.v1 request")
    try:
        data = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise TaskRefused("the task payload is not valid base64") from None
    if len(data) > max_payload:
        raise TaskRefused(
            f"the payload is {len(data)} bytes, over the {max_payload}-byte "
            "expose.agent.jobs.max_payload"
        )
    try:
        inner = loads_json(data, what="the task payload", max_bytes=max_payload)
    except BoundedInputError as bad:
        raise TaskRefused(f"{bad}; send an io.choria.fisk-ai.v1 request") from None
    if isinstance(inner, str):
        return inner.encode()
    return data


def timestamp(moment: datetime | None = None) -> str:
    """RFC3339 with nanoseconds in UTC, as Go writes a time."""
    moment = moment or datetime.now(UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "000Z"


def parse_time(text: str) -> datetime | None:
    """A Go RFC3339Nano time, to the microsecond; None when absent or unreadable."""
    if not text or text.startswith("0001-01-01"):
        return None
    body = text.replace("Z", "+00:00")
    if "." in body:
        head, _, rest = body.partition(".")
        digits = "".join(ch for ch in rest if ch.isdigit())
        zone = rest[len(digits) :]
        body = f"{head}.{digits[:6].ljust(6, '0')}{zone}"
    try:
        parsed = datetime.fromisoformat(body)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


async def enqueue(
    nc: NatsClient,
    queue: str,
    task_type: str,
    payload: bytes,
    *,
    task_id: str = "",
    max_tries: int = 10,
    traceparent: str = "",
) -> str:
    """Enqueue a task as an asyncjobs Go client does: the task stored first (a duplicate id
    refused), its event, then the work item, deduplicated on the id. ``payload`` is the bytes
    a Go ``NewTask`` marshals; returns the task id. The work item's headers carry
    ``traceparent`` (else the current span's), so the worker's run continues that trace."""
    js = nc.jetstream()
    task_id = task_id or new_ksuid()
    document: dict[str, Any] = {
        "id": task_id,
        "type": task_type,
        "queue": queue,
        "payload": base64.b64encode(payload).decode(),
        "max_tries": max_tries,
        "state": "new",
        "created": timestamp(),
        "tries": 0,
    }
    task = StoredTask(document, 0)
    try:
        await save_task(js, task)
    except APIError as error:
        if error.err_code == 10071:
            raise FiskError(f"task {task_id} already exists; submit it under another id") from None
        raise
    await publish_event(nc, task)
    item = json.dumps({"kind": 0, "job": task_id}).encode()
    headers = {"Nats-Msg-Id": task_id}
    traceparent = traceparent or current_traceparent()
    if traceparent:
        headers[TRACEPARENT_HEADER] = traceparent
    try:
        await js.publish(queue_subject(queue, task_id), item, headers=headers)
    except Exception as error:
        task.document["state"] = "queue_error"
        task.document["last_err"] = str(error) or type(error).__name__
        await save_task(js, task)
        raise FiskError(
            f'task {task_id} was stored but not queued on "{queue}" ({error}); check the queue '
            f"exists with 'ajc queue add {queue}'"
        ) from None
    return task_id
