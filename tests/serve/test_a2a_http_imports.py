"""The a2a-sdk is loaded only when the A2A HTTP endpoint starts."""

from __future__ import annotations

import subprocess
import sys

from tests.patience import DEADLINE


def test_the_serve_worker_and_fisk_info_load_no_a2a_sdk() -> None:
    probe = (
        "import sys\n"
        "import fisk_ai.serve.worker, fisk_ai.serve.banner, fisk_ai.cli.info, fisk_ai.lineui.info\n"
        "print(sorted(name for name in sys.modules if name == 'a2a' or name.startswith('a2a.')))\n"
    )

    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=True,
    )

    assert done.stdout.strip() == "[]"
