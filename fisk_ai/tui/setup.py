"""What the workstation knows about a run before any event arrives: the run screen, the side
panel and the host share it, so it sits below all three."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ToolRow:
    name: str
    source: str
    gated: bool
    deferred: bool = False
    """Sent behind tool search: the model finds it by searching rather than seeing it."""


@dataclass(frozen=True)
class RunSetup:
    """What the screen shows about the run before any event arrives. ``prompt`` starts a new
    conversation; ``resume`` continues a stored one instead."""

    identity: str = ""
    model: str = ""
    prompt: str = ""
    resume: str = ""
    force: bool = False
    tools: tuple[ToolRow, ...] = ()
    max_tokens: int = 0
    bell: bool = True
    version: str = ""
    warnings: tuple[str, ...] = ()
    tool_output: bool = False
    """--tool-output: command output starts expanded rather than folded."""
    thinking: bool = False
    """--thinking: the model's reasoning is shown; otherwise it is folded away until ``z``."""
    resume_flags: str = ""
    """The flags a resume needs to reach this conversation again (``--config``,
    ``--state-dir``, a remote agent's context and identity), for the resume hint."""
    telemetry: str = ""
    """The startup card's telemetry row: ``off``, ``off (--no-telemetry)``, ``on, to URL``;
    no row when empty."""
    phase: str = ""
    """What startup is doing while the agent is being hosted; empty once it is hosted, and
    the first turn waits for that."""
