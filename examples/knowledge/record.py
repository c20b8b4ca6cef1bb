"""Record ask.cassette again, after an edit of the snapshot in corpus/ changed the passage it
cites.

The model is the tests' scripted stand-in for the Messages API, not a live one: it searches the
docs, then answers citing the passage. Run from the root of the repository, with the package
and the tests importable (the development virtualenv); it works in a temporary copy of the
example, so nothing in the repository is written but the cassette.

    python examples/knowledge/record.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use  # noqa: E402

HERE = Path(__file__).resolve().parent
FISK = Path(sys.executable).parent / "fisk"
QUESTION = "what may a memory key contain?"
QUERY = "memory key letters digits slashes"
ANSWER = (
    "Letters, digits and `.` `_` `=` `-`, at most 200 characters: no slashes, no spaces, no "
    "leading or trailing dot and no `..`, so a key is both a safe file name and a legal NATS KV "
    "key (examples/knowledge/corpus/memory.md#1)."
)


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        shutil.copytree(HERE / "corpus", work / "examples" / "knowledge" / "corpus")
        config = HERE / "agent.yaml"
        environment = {**os.environ, "XDG_STATE_HOME": str(work / "state")}
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "FISK_AI_CASSETTE"):
            environment.pop(name, None)
        subprocess.run(
            [str(FISK), "knowledge", "--config", str(config), "index"],
            cwd=work,
            env=environment,
            check=True,
        )
        turns = [
            reply(
                tool_use("toolu_01", "knowledge_search", {"query": QUERY}), stop_reason="tool_use"
            ),
            reply(text(ANSWER)),
        ]
        cassette = work / "ask.cassette"
        with FakeMessagesAPI(turns) as api:
            environment["ANTHROPIC_BASE_URL"] = api.base_url
            environment["ANTHROPIC_API_KEY"] = "sk-fake-recording"
            subprocess.run(
                [
                    str(FISK),
                    "run",
                    "--no-tui",
                    "--record",
                    str(cassette),
                    "--config",
                    str(config),
                    QUESTION,
                ],
                cwd=work,
                env=environment,
                check=True,
            )
        shutil.copyfile(cassette, HERE / "ask.cassette")
    print(f"recorded {HERE / 'ask.cassette'}")


if __name__ == "__main__":
    main()
