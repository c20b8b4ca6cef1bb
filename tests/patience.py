"""How long a test waits for something that should happen before it calls the wait a hang.

Every wait in the suite ends on an event, a file or a line, so on a working machine it ends as
soon as the thing happens and this bound is never reached: it only turns a hang into a failure.
The bound is generous because a busy machine (a load of 10 on 2 cores) runs a `fisk` subprocess
several times slower than a quiet one; ``FISK_TEST_SLOWDOWN=N`` multiplies it on a machine slower
still (docs/testing.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import timedelta

SLOWDOWN_VARIABLE = "FISK_TEST_SLOWDOWN"


def slowdown(environ: Mapping[str, str] = os.environ) -> float:
    """The factor ``FISK_TEST_SLOWDOWN`` sets (1 when unset); a value that is not a positive
    number is refused, since a guard silently left at its default would hide the typo."""
    text = environ.get(SLOWDOWN_VARIABLE, "").strip()
    if not text:
        return 1.0
    try:
        factor = float(text)
    except ValueError:
        factor = 0.0
    if not factor > 0:
        raise ValueError(f"{SLOWDOWN_VARIABLE} must be a positive number, not {text!r}")
    return factor


# Seconds before a wait for something that should happen is called a hang.
DEADLINE = 120.0 * slowdown()
DEADLINE_DELTA = timedelta(seconds=DEADLINE)
