"""One credential scrub for every child: an MCP stdio child, opened for a run or only listed by
discovery, never sees a provider, OTLP or Slack credential, nor a variable agent.yaml names as a
secret (the knowledge embeddings ``api_key_env``); ordinary variables and the entry's own env
reach it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fisk_ai.config.models import McpClient
from fisk_ai.tools.base import ExecDeps
from fisk_ai.tools.mcp.sessions import discover_mcp_servers, open_mcp_sessions
from tests.fakes import env_mcp_server

CREDENTIALS = {
    "ANTHROPIC_API_KEY": "sk-ant-must-not-leak",
    "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer otlp-secret",
    "SLACK_BOT_TOKEN": "xoxb-must-not-leak",
    "FISK_TEST_EMBEDDINGS_KEY": "emb-secret-value",
}
OPERATOR_SECRETS = ("FISK_TEST_EMBEDDINGS_KEY",)


@pytest.fixture
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("FISK_TEST_ORDINARY", "kept")


def env_entry(report: Path) -> McpClient:
    return McpClient.model_validate(
        {
            "name": "env",
            "alias": "env",
            "command": sys.executable,
            "args": [env_mcp_server.__file__, str(report)],
            "env": {"FISK_TEST_FROM_ENTRY": "given"},
        }
    )


@pytest.mark.usefixtures("credentials")
async def test_a_run_s_stdio_child_sees_no_credential_variable(tmp_path: Path) -> None:
    async with open_mcp_sessions(
        [env_entry(tmp_path / "names.json")], secret_env_names=OPERATOR_SECRETS
    ) as sessions:
        (tool,) = sessions.tools
        outcome = await tool.execute("{}", ExecDeps())
    names = set(json.loads(outcome.output))
    assert not names & set(CREDENTIALS)
    assert {"FISK_TEST_ORDINARY", "FISK_TEST_FROM_ENTRY", "PATH"} <= names


@pytest.mark.usefixtures("credentials")
async def test_a_discovered_stdio_child_sees_no_credential_variable(tmp_path: Path) -> None:
    report = tmp_path / "names.json"
    (server,) = await discover_mcp_servers([env_entry(report)], secret_env_names=OPERATOR_SECRETS)
    assert not server.unavailable
    names = set(json.loads(report.read_text()))
    assert not names & set(CREDENTIALS)
    assert {"FISK_TEST_ORDINARY", "FISK_TEST_FROM_ENTRY"} <= names
