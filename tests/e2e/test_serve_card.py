"""What `fisk serve` says it runs, checked against what the process started: a prompts-only
agent answers discovery with a card listing no tools, carrying its model and the telemetry its
started handle exports; the banner's Telemetry row says the same, so a switch that turned the
configuration's export off is not shown as enabled."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.broker.server import locate_server_binary
from tests.e2e.a2a_wire import (
    BANNER_END,
    IDENTITY,
    MODEL,
    WAIT,
    Site,
    upstream_schema_errors,
    wire_site,
)
from tests.e2e.conftest import FISK

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        locate_server_binary() is None, reason="no nats-server binary on this machine"
    ),
]

TELEMETRY = "telemetry:\n  enabled: true\n  endpoint: http://127.0.0.1:9\n"
"""Export on, to a loopback port nobody listens on (OTLP over HTTP is connectionless)."""


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    async with wire_site(tmp_path) as made:
        yield made


@contextlib.asynccontextmanager
async def serving(
    config: Path, environment: Mapping[str, str], stderr: Path, end: str = BANNER_END
) -> AsyncIterator[list[str]]:
    """`fisk serve`, yielding its banner's lines once its last line ``end`` is out; killed on
    the way out."""
    with stderr.open("wb") as errors:
        process = await asyncio.create_subprocess_exec(
            str(FISK),
            "serve",
            "--config",
            str(config),
            cwd=config.parent,
            env=dict(environment),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
        )
    banner: list[str] = []
    try:
        assert process.stdout is not None
        async with asyncio.timeout(WAIT):
            while True:
                line = await process.stdout.readline()
                assert line, "fisk serve ended before its banner; see " + str(stderr)
                banner.append(line.decode().rstrip("\n"))
                if banner[-1].strip() == end:
                    break
        yield banner
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def card(site: Site) -> dict[str, Any]:
    async with site.peer() as peer:
        reply = await peer.ask(
            f"choria.fisk-ai.discovery.{IDENTITY}", peer.message("discovery.request", request="d1")
        )
    assert reply.protocol == "io.choria.fisk-ai.v1.discovery.reply", reply.body
    assert upstream_schema_errors(reply.document) == []
    return reply.document


def row(banner: list[str], label: str) -> str:
    [line] = [line for line in banner if line.strip().startswith(f"{label}:")]
    return line.split(":", 1)[1].strip()


async def test_a_prompts_only_agent_answers_discovery_with_a_card_listing_no_tools(
    site: Site,
) -> None:
    async with serving(site.config(), site.environment, site.home / "w.stderr") as banner:
        document = await card(site)
        async with site.peer() as peer:
            # Only discovery is served: nobody answers on the tool subject.
            with pytest.raises(Exception, match=r"[Nn]o responders"):
                await peer.client.request(f"choria.fisk-ai.tool.{IDENTITY}", b"{}", timeout=2)
    assert row(banner, "Endpoints") == "a2a/prompts"
    assert "Serving tools over a2a:" not in banner
    assert document["name"] == IDENTITY
    assert document.get("tools", []) == []
    assert document["model"] == MODEL
    assert document.get("telemetry", False) is False
    assert document.get("telemetry_content", False) is False
    assert row(banner, "Telemetry") == "disabled"


async def test_the_card_and_the_banner_say_telemetry_is_exported_when_it_is(site: Site) -> None:
    config = site.config()
    config.write_text(config.read_text() + TELEMETRY)
    async with serving(config, site.environment, site.home / "on.stderr") as banner:
        document = await card(site)
    assert row(banner, "Telemetry") == "enabled"
    assert document["telemetry"] is True
    assert document.get("telemetry_content", False) is False


async def test_a_switch_that_turned_export_off_is_not_shown_as_enabled(site: Site) -> None:
    config = site.config()
    config.write_text(config.read_text() + TELEMETRY)
    environment = {**site.environment, "FISK_TELEMETRY_DISABLED": "1"}
    async with serving(config, environment, site.home / "off.stderr") as banner:
        document = await card(site)
    assert row(banner, "Telemetry") == "disabled"
    assert document.get("telemetry", False) is False


async def test_a_tools_only_agent_starts_no_telemetry_and_says_so(site: Site) -> None:
    config = site.home / "tools.yaml"
    config.write_text(
        f"identity: {IDENTITY}\n"
        f"application_path: {site.application}\n"
        "nats_context: test\n"
        "expose:\n  agent:\n    a2a:\n      serve_tools: true\n" + TELEMETRY
    )
    environment = site.environment
    async with serving(
        config, environment, site.home / "tools.stderr", end="stream_hold"
    ) as banner:
        document = await card(site)
    assert row(banner, "Endpoints") == "a2a"
    assert row(banner, "Telemetry") == "disabled"
    assert "model" not in document or document["model"] == ""
    assert [tool["name"] for tool in document["tools"]] == ["stream_ls", "stream_hold"]
