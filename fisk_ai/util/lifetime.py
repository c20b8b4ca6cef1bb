"""Children that die with the process that started them.

A process killed outright (kill -9, a crash, the OOM killer) runs no cleanup, so whatever it
started would outlive it. On Linux a child can ask the kernel, before it execs, for a signal
when its parent dies; ``die_with_this_process`` builds that request as a ``preexec_fn``.
Elsewhere the request does not exist and it returns None.

The signal comes when the thread that forked the child exits. asyncio forks on its event loop's
thread, which lives as long as the loop, so for children started from asyncio that is the
process's life.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable

__all__ = ["die_with_this_process"]

_PR_SET_PDEATHSIG = 1


def die_with_this_process(sig: signal.Signals) -> Callable[[], None] | None:
    """A ``preexec_fn`` that asks for ``sig`` when this process dies, and exits at once if it
    already has; None where the kernel has no such request."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()

    def arrange() -> None:
        # Runs in the forked child, where only this may happen: no imports, no logging.
        prctl(_PR_SET_PDEATHSIG, sig)
        if os.getppid() != parent:
            # The parent died before the request took; the signal will never come.
            os._exit(1)

    return arrange
