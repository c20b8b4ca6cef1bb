"""The corpus and store the knowledge explorer's tests index."""

from __future__ import annotations

from pathlib import Path

STORE = Path("knowledge/ops")
CORPUS = {
    "docs/install.md": "# Install\n\nRun make install.\n\n## Linux\n\nUse apt to install it.\n",
    "docs/retention.md": "# Retention\n\nLogs are kept thirty days.\n\n## Audit\n\n"
    "Audit records are kept a year.\n",
    "docs/ops.md": "# Operations\n\nRestart the fleet in the evening.\n\n## Disks\n\n"
    "Clean the logs when the disk fills.\n\n## Calendar\n\nNothing happens on holidays.\n",
}
