"""The prompts queued during a turn, one line each above the chat bar."""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static

from fisk_ai.util.sanitize import single_line

QUEUED_HINT = "sent in order as turns end; Up in an empty bar edits the last"


class QueuedPrompts(Static):
    """Shown only while something is queued; each prompt on its own line, numbered."""

    prompts: reactive[tuple[str, ...]] = reactive(tuple[str, ...](), layout=True)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(markup=False, id=id)

    def watch_prompts(self, prompts: tuple[str, ...]) -> None:
        self.display = bool(prompts)
        self.border_title = f"queued: {QUEUED_HINT}" if prompts else None

    def render(self) -> str:
        width = max(10, self.content_region.width - 4 or 70)
        return "\n".join(
            f"{number}. {single_line(prompt, width)}"
            for number, prompt in enumerate(self.prompts, start=1)
        )
