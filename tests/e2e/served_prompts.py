"""`fisk serve` with the prompts channel, as an operator starts it beside a broker and a fake
model."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from fisk_ai.a2a.nats import NatsTransport
from fisk_ai.a2a.prompts_client import PromptsClient
from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from tests.fakes.messages_api import FakeMessagesAPI
from tests.patience import DEADLINE

SERVED_PROMPTS_MARKS = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        locate_server_binary() is None, reason="no nats-server binary on this machine"
    ),
]
"""What a test of the served prompts channel needs: the installed fisk and a nats-server."""
IDENTITY = "ops-agent"
MODEL = "claude-test-1"
WAIT = DEADLINE
REQUEST_TIMEOUT = timedelta(seconds=WAIT)


@dataclass(frozen=True)
class Setup:
    broker: EmbeddedBroker
    api: FakeMessagesAPI
    config: Path
    work_dir: Path
    state_dir: Path
    hold_pid: Path
    environment: dict[str, str]


def agent_of(peer: NatsTransport) -> PromptsClient:
    """The served agent, as the peer reaches it."""
    return PromptsClient(peer, IDENTITY, request_timeout=REQUEST_TIMEOUT)
