"""The system prompt as the model receives it: blocks in a fixed order.

The order is the operator's system_prompt, the note on reaching the operator when the ask_human_*
tools are offered, the memory and knowledge notes, the resume reminder on a resumed run, and the
memory index last. The fingerprint covers only the blocks before the reminder: the reminder is
added because the run resumed, and the index changes whenever a memory is written, so neither may
make an unchanged configuration look changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["RESUME_REMINDER", "SystemPrompt", "hitl_note"]

RESUME_REMINDER = (
    "This session was suspended and has now resumed. Tool results earlier in the conversation "
    "may be stale; re-verify current state before taking any state-changing action."
)


def hitl_note(tool_names: Sequence[str]) -> str:
    """Why the model must use the ask_human_* tools rather than write a question as prose."""
    return (
        "Nobody reads your messages while you work and nobody can reply to them: a question "
        "written as ordinary text reaches no one and ends the run. To get an answer or a decision "
        f"from the operator, call one of these tools: {', '.join(tool_names)}. Use them whenever "
        "you need the operator to confirm an action, choose between options, supply a value, or "
        "decide whether to continue."
    )


@dataclass(frozen=True)
class SystemPrompt:
    """The parts of a run's system prompt. Empty parts are left out rather than sent empty.

    ``memory_note``, ``knowledge_note`` and ``memory_index`` are filled in by the memory and
    knowledge features; a run without them leaves them empty.
    """

    system_prompt: str = ""
    hitl_tools: tuple[str, ...] = ()
    memory_note: str = ""
    knowledge_note: str = ""
    memory_index: str = ""

    def fingerprinted(self) -> tuple[str, ...]:
        """The blocks the run's fingerprint is computed over."""
        notes = (
            self.system_prompt,
            hitl_note(self.hitl_tools) if self.hitl_tools else "",
            self.memory_note,
            self.knowledge_note,
        )
        return tuple(block for block in notes if block)

    def blocks(self, *, resumed: bool) -> tuple[str, ...]:
        """The blocks sent with every model call of the run."""
        tail = (RESUME_REMINDER if resumed else "", self.memory_index)
        return self.fingerprinted() + tuple(block for block in tail if block)
