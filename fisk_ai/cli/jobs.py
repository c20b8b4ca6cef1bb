"""`fisk jobs`: submit a prompt to a queued-jobs worker and read tasks back, writing and
reading the same Choria asyncjobs wire a Go client (``ajc``) does."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from fisk_ai.cli.flags import add_common_flags

if TYPE_CHECKING:
    from nats.aio.client import Client as NatsClient


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "jobs",
        help="submit prompts to a queued-jobs worker and read the answers",
        description="Enqueue a prompt as a Choria asyncjobs task, list tasks, and show one "
        "with its state and answer.",
    )
    parser.add_argument("--context", metavar="NAME", help="the NATS context (default: selected)")
    parser.add_argument("--queue", default="FISK_AI", help="the work queue (default: FISK_AI)")
    parser.add_argument(
        "--type", default="fisk-ai:run", help="the task type (default: fisk-ai:run)"
    )
    add_common_flags(parser)
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    submit = actions.add_parser("submit", help="enqueue a prompt")
    submit.add_argument("prompt", metavar="PROMPT")
    submit.add_argument(
        "--sender", default="fisk-jobs", help="the sender name (default: fisk-jobs)"
    )
    submit.add_argument("--id", default="", help="the task id (default: a new KSUID)")
    actions.add_parser("ls", help="list the tasks and their states")
    show = actions.add_parser("show", help="show a task's state and answer")
    show.add_argument("task_id", metavar="ID")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    import nats

    from fisk_ai.broker.context import connect_options, load_context
    from fisk_ai.errors import FiskError
    from fisk_ai.serve.jobs.wire import check_queue_name
    from fisk_ai.util.natsx import describe_nats_failure

    check_queue_name(args.queue, where="--queue")
    context = load_context(args.context)
    where = f'NATS at {context.redacted_url} (NATS context "{context.name}")'
    try:
        # Two attempts at each server (nats-py's least that is not "forever"): a command that
        # cannot connect says so now, not after the 60 reconnect attempts nats-py makes and
        # reports by default.
        client = await nats.connect(
            **connect_options(context),
            name="fisk jobs",
            allow_reconnect=False,
            max_reconnect_attempts=1,
            reconnect_time_wait=RETRY_WAIT,
            connect_timeout=CONNECT_TIMEOUT,
            error_cb=_quiet,
        )
    except Exception as error:
        raise FiskError(
            f"cannot connect to {where}: {_connect_failure(error)}; check --context and the "
            "context's url"
        ) from None
    try:
        if args.action == "submit":
            return await _submit(client, args)
        if args.action == "ls":
            return await _list(client)
        return await _show(client, args.task_id)
    except (nats.errors.Error, TimeoutError) as error:
        raise FiskError(
            f"{where} failed the request ({describe_nats_failure(error)}); check that the server "
            "is up and has JetStream enabled"
        ) from None
    finally:
        await client.close()


CONNECT_TIMEOUT = 2
"""Seconds one connection attempt to a server may take."""
RETRY_WAIT = 0.5
"""Seconds between the two attempts at one server."""


def _connect_failure(error: BaseException) -> str:
    from nats.errors import NoServersError

    if isinstance(error, TimeoutError):
        return f"no server answered within {CONNECT_TIMEOUT} s"
    if isinstance(error, NoServersError):
        return "no server accepted a connection"
    return str(error).removeprefix("nats: ").strip() or type(error).__name__


async def _quiet(error: Exception) -> None:
    # nats-py reports every failed attempt here; without a callback it logs a traceback.
    del error


async def _submit(client: NatsClient, args: argparse.Namespace) -> int:
    import json
    from datetime import UTC, datetime

    from fisk_ai.serve.jobs.wire import enqueue
    from fisk_ai.telemetry import environment_traceparent
    from fisk_ai.util.ids import new_ksuid

    request_id = new_ksuid()
    request = {
        "protocol": "io.choria.fisk-ai.v1.request.prompt",
        "id": request_id,
        "request": request_id,
        "conversation": request_id,
        "sequence": 0,
        "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "sender": {"name": args.sender},
        "prompt": args.prompt,
    }
    task_id = await enqueue(
        client,
        args.queue,
        args.type,
        json.dumps(request).encode(),
        task_id=args.id,
        # A submit started inside a trace (TRACEPARENT, as CI tools set it) queues the job in it.
        traceparent=environment_traceparent(),
    )
    print(f"Enqueued task {task_id}")
    return 0


async def _list(client: NatsClient) -> int:
    from nats.js.errors import NotFoundError

    from fisk_ai.errors import FiskError
    from fisk_ai.serve.jobs.wire import TASKS_STREAM, TaskUnreadable, load_task
    from fisk_ai.util.sanitize import single_line

    js = client.jetstream()
    try:
        info = await js.stream_info(TASKS_STREAM, subjects_filter="CHORIA_AJ.T.*")
    except NotFoundError:
        raise FiskError(
            f"stream {TASKS_STREAM} does not exist, create it with 'ajc tasks initialize'"
        ) from None
    subjects = sorted((info.state.subjects or {}).keys())
    for subject in subjects:
        task_id = subject.removeprefix("CHORIA_AJ.T.")
        try:
            task = await load_task(js, task_id)
        except TaskUnreadable as unreadable:
            print(f"warning: {unreadable}", file=sys.stderr)
            continue
        if task is not None:
            document = task.document
            created = single_line(str(document.get("created", "")))
            print(f"{single_line(task.task_id)}  {single_line(task.state):<10}  {created}")
    return 0


async def _show(client: NatsClient, task_id: str) -> int:
    from fisk_ai.errors import FiskError
    from fisk_ai.serve.jobs.wire import load_task

    task = await load_task(client.jetstream(), task_id)
    if task is None:
        raise FiskError(f"no task {task_id}; list the tasks with fisk jobs ls")
    document = task.document
    print(f"Task {task.task_id}")
    print(f"  State: {task.state}")
    print(f"  Tries: {document.get('tries', 0)}")
    if document.get("last_err"):
        print(f"  Last Error: {document['last_err']}")
    result = document.get("result")
    payload = result.get("payload") if isinstance(result, dict) else None
    if isinstance(payload, dict):
        print(f"  Stop Reason: {payload.get('stop_reason', '')}")
        answer = payload.get("text") or payload.get("error") or ""
        sys.stdout.write(f"\n{answer}\n")
    return 0
