"""The fuzz suite's settings: a small, repeatable number of examples per property in CI, more
on request (``FISK_FUZZ_EXAMPLES=5000``). Every property here says the same thing of one reader:
whatever the input, one clear error (a ``FiskError``, or the reader's documented error) or
success, never a traceback."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

EXAMPLES = int(os.environ.get("FISK_FUZZ_EXAMPLES", "60"))

settings.register_profile(
    "fisk-fuzz",
    max_examples=EXAMPLES,
    deadline=None,
    # CI repeats the same inputs; a larger run asked for by count explores afresh.
    derandomize="FISK_FUZZ_EXAMPLES" not in os.environ,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile("fisk-fuzz")
