"""Fixtures for running the installed `fisk` command as a subprocess, and for serving the
prompts channel with it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from fisk_ai.a2a.nats import NatsTransport
from fisk_ai.broker.server import EmbeddedBroker
from tests.e2e.served_prompts import IDENTITY, MODEL, Setup
from tests.fakes.fiskapp import (
    application,
    blocks_first_run,
    command,
    write_fake_app,
)
from tests.fakes.messages_api import FakeMessagesAPI
from tests.patience import DEADLINE

FISK = Path(sys.executable).parent / "fisk"
E2E = Path(__file__).resolve().parent

RunFisk = Callable[..., subprocess.CompletedProcess[str]]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test in this folder e2e, so ``-m "not e2e"`` leaves them all out.

    Collection hooks in a conftest see the whole session's items, not only this folder's.
    """
    for item in items:
        if item.path.resolve().is_relative_to(E2E):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture
def run_fisk(tmp_path: Path) -> RunFisk:
    """Run `fisk ARGS...` from ``tmp_path`` with stdin closed; output captured (a pipe)."""

    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        environment = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
        environment.pop("NO_COLOR", None)
        environment.pop("VERBOSE", None)
        environment.update(env or {})
        return subprocess.run(
            [str(FISK), *args],
            cwd=tmp_path,
            env=environment,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            check=False,
        )

    return run


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[Setup]:
    """`fisk serve` of a small fleet's agent on the prompts channel, beside a broker and a fake
    model; tests/e2e/test_serve_tools.py has a setup of its own."""
    # agent_runs reads FISK from this module, so it is imported once this module is whole.
    from tests.e2e.agent_runs import fisk_environment

    hold_pid = tmp_path / "hold.pid"
    model = application(
        "ops",
        commands=[
            command("status", "Show fleet status", tags=["ai:read_only"]),
            command(
                "hold",
                "Hold the fleet still",
                action=blocks_first_run(hold_pid, tmp_path / "hold.marker"),
            ),
        ],
    )
    app = write_fake_app(tmp_path, model, name="ops")
    work_dir = tmp_path / "work"
    work_dir.mkdir()
    config = tmp_path / "prompts.yaml"
    config.write_text(
        f"identity: {IDENTITY}\n"
        f"application_path: {app}\n"
        "nats_context: test\n"
        "system_prompt: You look after a small fleet.\n"
        "llm:\n"
        f"  model: {MODEL}\n"
        "expose:\n"
        "  agent:\n"
        "    a2a:\n"
        "      serve_tools: true\n"
        "      max_concurrent_tools: 2\n"
        "      prompts:\n"
        "        workers: 1\n"
    )
    async with EmbeddedBroker() as broker:
        contexts = tmp_path / "xdg" / "nats" / "context"
        contexts.mkdir(parents=True)
        (contexts / "test.json").write_text(json.dumps({"url": broker.url, "token": broker.token}))
        with FakeMessagesAPI() as api:
            environment = fisk_environment(
                tmp_path, api, extra={"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
            )
            yield Setup(
                broker=broker,
                api=api,
                config=config,
                work_dir=work_dir,
                state_dir=tmp_path / "sessions",
                hold_pid=hold_pid,
                environment=environment,
            )


@pytest.fixture
async def peer(setup: Setup) -> AsyncIterator[NatsTransport]:
    transport = NatsTransport(await setup.broker.connect())
    yield transport
    await transport.close()
    await transport.client.close()
