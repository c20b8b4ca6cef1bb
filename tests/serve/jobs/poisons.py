"""Tasks no worker can run, one of each kind of poison."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

from tests.serve.jobs.queue_setup import QUEUE, REQUEST

DEEP = 100_000
"""Levels of nesting, far past what a recursive JSON reader survives."""

POISON_ID = "poison-1"


def document_text(*, tries: str = "0", payload: bytes | None = None, extra: str = "") -> bytes:
    """A task document as raw text, so a test can write what json.dumps never would."""
    encoded = base64.b64encode(payload if payload is not None else json.dumps(REQUEST).encode())
    return (
        f'{{"id":"{POISON_ID}","type":"fisk-ai:run","queue":"{QUEUE}",'
        f'"payload":"{encoded.decode()}","max_tries":10,"state":"new",'
        f'"created":"2026-08-15T11:30:00.000000000Z","tries":{tries}{extra}}}'
    ).encode()


@dataclass(frozen=True)
class Poison:
    item: bytes
    """The work item, as it lands on the queue."""
    document: bytes | None = None
    """The task document stored under the item's id, or None for no task at all."""
    answered: str = ""
    """What the task's last_err says once it is answered; empty when nothing can be stored on
    it and the item is terminated on the queue instead."""


ITEM = json.dumps({"kind": 0, "job": POISON_ID}).encode()
POISONS = {
    "an item that is not JSON": Poison(b"{not json"),
    "a deeply nested item": Poison(b"[" * DEEP + b"]" * DEEP),
    "an item naming no task": Poison(b'{"kind":0,"job":{"id":"x"}}'),
    "a task document that is not JSON": Poison(ITEM, b'{"id":"poison-1", not json'),
    "a deeply nested task document": Poison(
        ITEM, document_text(extra=',"x":' + "[" * DEEP + "]" * DEEP)
    ),
    "tries: 1e999": Poison(ITEM, document_text(tries="1e999")),
    "a deep payload": Poison(
        ITEM,
        document_text(payload=b"[" * DEEP + b"]" * DEEP),
        answered="the task payload nests deeper than 100 levels",
    ),
    "tries that are not a count": Poison(
        ITEM, document_text(tries='"many"'), answered='the task\'s tries is "many"'
    ),
}
