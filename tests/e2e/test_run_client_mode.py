"""`fisk run --nats-context`: the terminal as a pure client of an agent `fisk serve` runs.

The worker calls the model and writes the journal; the client shows the answer and the summary,
and continues the conversation with the token it was handed.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import pytest

from fisk_ai.broker.server import locate_server_binary
from tests.e2e.a2a_wire import IDENTITY, Site, Worker, wire_site
from tests.e2e.conftest import FISK
from tests.fakes.messages_api import error, reply, text
from tests.patience import DEADLINE

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        locate_server_binary() is None, reason="no nats-server binary on this machine"
    ),
]

ANSWER = "there are three streams"


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    async with wire_site(tmp_path) as made:
        yield made


@pytest.fixture
async def worker(site: Site) -> AsyncIterator[Worker]:
    async with site.worker(site.config()) as started:
        yield started


async def client(
    site: Site, *args: str, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`fisk run --no-tui ARGS...` to the end, output captured."""
    process = await asyncio.create_subprocess_exec(
        str(FISK),
        "run",
        "--no-tui",
        *args,
        cwd=site.home,
        env=dict(env or site.environment),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    async with asyncio.timeout(DEADLINE):
        stdout, stderr = await process.communicate()
    assert process.returncode is not None
    return subprocess.CompletedProcess(
        [str(FISK), "run", *args], process.returncode, stdout.decode(), stderr.decode()
    )


def summary_fields(stderr: str) -> dict[str, str]:
    line = next(line for line in stderr.splitlines() if line.startswith("Run summary:"))
    return dict(field.split("=", 1) for field in line.removeprefix("Run summary: ").split())


async def test_the_answer_comes_from_the_remote_agent(site: Site, worker: Worker) -> None:
    site.api.script([reply(text(ANSWER))])

    ran = await client(
        site, "--nats-context", "test", "--identity", IDENTITY, "how many streams are there"
    )

    assert ran.returncode == 0, ran.stderr + worker.errors()
    assert ran.stdout.strip() == ANSWER
    fields = summary_fields(ran.stderr)
    assert fields["llm_calls"] == "1"
    # The model is the worker's to name; the client does not guess it.
    assert "model" not in fields
    # The worker made the model call, with the client's prompt.
    assert len(site.api.requests) == 1
    assert "how many streams are there" in str(site.api.requests[0]["messages"])


async def test_resume_takes_the_conversation_token(site: Site, worker: Worker) -> None:
    site.api.script([error(400, "the request was refused"), reply(text(ANSWER))])
    first = await client(site, "--nats-context", "test", "--identity", IDENTITY, "count them")
    assert first.returncode == 1, first.stderr + worker.errors()
    token = summary_fields(first.stderr)["session"]

    resumed = await client(
        site, "--nats-context", "test", "--identity", IDENTITY, "--resume", token
    )

    assert resumed.returncode == 0, resumed.stderr + worker.errors()
    assert resumed.stdout.strip() == ANSWER
    # The failed turn was sent again, in the conversation the token names.
    assert len(site.api.requests) == 2
    assert "count them" in str(site.api.requests[1]["messages"])


async def test_a_resume_of_an_answered_turn_is_refused_with_no_model_call(
    site: Site, worker: Worker
) -> None:
    site.api.script([reply(text(ANSWER))])
    first = await client(site, "--nats-context", "test", "--identity", IDENTITY, "count them")
    assert first.returncode == 0, first.stderr + worker.errors()
    token = summary_fields(first.stderr)["session"]

    resumed = await client(
        site, "--nats-context", "test", "--identity", IDENTITY, "--resume", token
    )

    assert resumed.returncode == 1
    assert resumed.stdout == ""
    assert "last turn is over" in resumed.stderr
    assert len(site.api.requests) == 1


async def test_the_identity_comes_from_the_configuration(site: Site, worker: Worker) -> None:
    site.api.script([reply(text(ANSWER))])
    config = site.home / "client.yaml"
    config.write_text(f"identity: {IDENTITY}\n")

    ran = await client(site, "--config", str(config), "--nats-context", "test", "count them")

    assert ran.returncode == 0, ran.stderr + worker.errors()
    assert ran.stdout.strip() == ANSWER


async def test_a_configuration_without_identity_is_refused_naming_it(site: Site) -> None:
    config = site.home / "client.yaml"
    config.write_text("system_prompt: unused here\n")

    ran = await client(site, "--config", str(config), "--nats-context", "test", "count them")

    assert ran.returncode == 1
    assert ran.stdout == ""
    assert len(ran.stderr.splitlines()) == 1
    assert "set identity in" in ran.stderr
    assert "--identity" in ran.stderr


@pytest.mark.parametrize(
    "flag",
    [
        ("--api-key", "sk-typed"),
        ("--base-url", "http://127.0.0.1:1"),
        ("--state-dir", "elsewhere"),
        ("--trace", "trace.log"),
        ("--http-debug",),
        ("--verbose",),
    ],
    ids=lambda flag: flag[0],
)
async def test_a_typed_worker_flag_is_refused_naming_it(site: Site, flag: tuple[str, ...]) -> None:
    ran = await client(site, "--nats-context", "test", "--identity", IDENTITY, *flag, "count them")

    assert ran.returncode == 1
    assert ran.stdout == ""
    # --verbose is typed here too, and still asks for the traceback above the sentence.
    last_line = ran.stderr.splitlines()[-1]
    assert re.fullmatch(
        rf"fisk: error: {re.escape(flag[0])} describes work the remote agent does, .*; "
        rf"drop {re.escape(flag[0])}",
        last_line,
    )


async def test_the_same_settings_from_the_environment_are_ignored(
    site: Site, worker: Worker
) -> None:
    site.api.script([reply(text(ANSWER))])
    environment = {**site.environment, "HTTP_DEBUG": "1", "VERBOSE": "1"}

    ran = await client(
        site, "--nats-context", "test", "--identity", IDENTITY, "count them", env=environment
    )

    assert ran.returncode == 0, ran.stderr + worker.errors()
    assert ran.stdout.strip() == ANSWER
    assert not (site.home / "http-debug.log").exists()
