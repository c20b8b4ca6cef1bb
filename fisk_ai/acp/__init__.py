"""`fisk acp`: the agent over the Agent Client Protocol, for editors and front ends (Zed, Toad).

The agent is hosted exactly as `fisk run` hosts it (the embedded broker, the prompts channel at
one worker, elicitation on) and every ACP session is an a2a conversation with it: this package
only translates. ``updates`` turns loop events into session updates, ``questions`` puts the
run's questions to the client as permission requests, ``sessions`` keeps the ACP sessions and
``stdio`` serves them on standard input and output. The SDK (``agent-client-protocol``) is
imported by these modules alone, and they are imported only by `fisk acp`.
"""

from __future__ import annotations

__all__: list[str] = []
