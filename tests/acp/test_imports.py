"""`fisk acp` is headless and pays for the protocol package only when it serves: parsing its
command line imports neither the ACP SDK nor Textual, and serving imports no Textual."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO_ROOT


def modules_loaded_by(script: str) -> set[str]:
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import json, sys\n{script}\nprint(json.dumps(sorted(sys.modules)))",
        ],
        cwd=REPO_ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return set(json.loads(probe.stdout.splitlines()[-1]))


def test_parsing_the_command_line_imports_neither_the_sdk_nor_textual() -> None:
    loaded = modules_loaded_by(
        "from fisk_ai.cli.main import build_parser\nbuild_parser('acp').parse_args(['acp'])"
    )
    assert "fisk_ai.cli.acp" in loaded
    assert {name for name in loaded if name.split(".")[0] in {"acp", "textual"}} == set()


def test_serving_imports_no_textual() -> None:
    loaded = modules_loaded_by(
        "import fisk_ai.acp.stdio, fisk_ai.acp.sessions, acp.agent.connection"
    )
    assert "acp" in loaded
    assert {name for name in loaded if name.split(".")[0] == "textual"} == set()
