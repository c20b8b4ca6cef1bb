"""The cowsay example run by the installed fisk, with telemetry settings of the test's choosing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.patience import DEADLINE

REPO = Path(__file__).resolve().parents[2]
COWSAY = REPO / "examples" / "cowsay"
FISK = Path(sys.executable).parent / "fisk"
CLEAN = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def cowsay_config(tmp_path: Path, telemetry: str = "") -> Path:
    text = (COWSAY / "agent.yaml").read_text()
    text = text.replace("./cowsay.py", str(COWSAY / "cowsay.py"))
    config = tmp_path / "agent.yaml"
    config.write_text(text + telemetry)
    return config


def fisk(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in CLEAN and not name.startswith(("FISK_TELEMETRY", "OTEL_SDK"))
    }
    environment.update({"XDG_STATE_HOME": str(tmp_path / "state"), **env})
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


def joke(tmp_path: Path, config: Path, *flags: str, **env: str) -> subprocess.CompletedProcess[str]:
    return fisk(
        tmp_path,
        "run",
        "--no-tui",
        "--replay",
        str(COWSAY / "joke.cassette"),
        "--config",
        str(config),
        *flags,
        "tell me a joke",
        **env,
    )
