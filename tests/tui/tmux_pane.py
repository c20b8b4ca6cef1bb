"""A pane of an isolated tmux server: keys in, the screen and the pane's @fisk_state read back."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

from tests.patience import DEADLINE

DONE_CHANNEL = "fisk-run-done"


@dataclass(frozen=True)
class Pane:
    label: str
    environment: dict[str, str]
    target: str = "run"

    def tmux(self, *arguments: str, timeout: float = 10) -> str:
        completed = subprocess.run(
            ["tmux", "-L", self.label, *arguments],
            env=self.environment,
            capture_output=True,
            text=True,
            check=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        return completed.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.target)

    def kill_server(self) -> None:
        """End the isolated tmux server and what runs in it; quiet if it is already gone."""
        subprocess.run(
            ["tmux", "-L", self.label, "kill-server"],
            env=self.environment,
            capture_output=True,
            check=False,
            timeout=DEADLINE,
        )

    def state(self) -> str:
        shown = subprocess.run(
            [
                "tmux",
                "-L",
                self.label,
                "show-options",
                "-w",
                "-v",
                "-t",
                self.target,
                "@fisk_state",
            ],
            env=self.environment,
            capture_output=True,
            text=True,
            check=False,
            timeout=DEADLINE,
        )
        return shown.stdout.strip()

    def wait_until(self, condition: Callable[[], bool], what: str) -> None:
        """Poll the pane until ``condition`` holds; the run is another process."""
        deadline = time.monotonic() + DEADLINE
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the screen:\n{self.screen()}")
            time.sleep(0.05)
