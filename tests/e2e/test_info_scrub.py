"""`fisk info` lists each MCP server by starting it; that discovery child is scrubbed as a run's
children are: no provider credential and not the variable agent.yaml names as the knowledge
embeddings key."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e.conftest import RunFisk
from tests.fakes import env_mcp_server


def test_the_discovery_child_never_sees_the_embeddings_key(
    tmp_path: Path, run_fisk: RunFisk
) -> None:
    report = tmp_path / "names.json"
    config = tmp_path / "agent.yaml"
    config.write_text(
        "mcp_clients:\n"
        "  - name: env\n"
        "    alias: env\n"
        f"    command: {sys.executable}\n"
        f"    args: [{env_mcp_server.__file__}, {report}]\n"
        "harness:\n"
        "  knowledge:\n"
        "    enabled: true\n"
        "    embeddings:\n"
        "      base_url: http://127.0.0.1:9/v1\n"
        "      model: fake-embeddings\n"
        "      api_key_env: FISK_TEST_EMBEDDINGS_KEY\n"
    )
    result = run_fisk(
        "info",
        "--config",
        str(config),
        env={"FISK_TEST_EMBEDDINGS_KEY": "emb-secret", "ANTHROPIC_API_KEY": "sk-ant-x"},
    )
    assert result.returncode == 0, result.stderr
    names = set(json.loads(report.read_text()))
    assert "FISK_TEST_EMBEDDINGS_KEY" not in names
    assert "ANTHROPIC_API_KEY" not in names
    assert "PATH" in names
