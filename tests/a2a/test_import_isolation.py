"""A client of an agent loads no engine: the a2a client and the conversation import neither
the loop, the runner, a session backend nor the Anthropic provider."""

from __future__ import annotations

import json
import subprocess
import sys

ENGINE = (
    "fisk_ai.agent.loop",
    "fisk_ai.agent.runner",
    "fisk_ai.sessions.file",
    "fisk_ai.sessions.jetstream",
    "fisk_ai.llm.anthropic",
)


def test_the_client_and_the_conversation_load_no_engine() -> None:
    script = (
        "import json, sys\n"
        "import fisk_ai.a2a.client, fisk_ai.a2a.conversation\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", script], check=True, capture_output=True, text=True
        ).stdout
    )

    assert "fisk_ai.a2a.conversation" in loaded
    assert [module for module in ENGINE if module in loaded] == []
