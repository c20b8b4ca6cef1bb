"""Which tag puts a tool behind the operator's approval.

``ai:confirm`` always gates; ``harness.confirm_tags`` adds more tags that gate exactly like it,
matched exactly rather than as patterns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fisk_ai.tools.base import Confirmable
from fisk_ai.tools.tags import CONFIRM


def confirm_trigger(tags: Sequence[str], confirm_tags: Sequence[str]) -> str | None:
    """The tag named in the approval prompt, or None when the tool is not gated.

    ``ai:confirm`` wins when present; otherwise the first of the tool's own tags, in the tool's
    order, that the operator listed, so the prompt names the same tag on every run.
    """
    if CONFIRM in tags:
        return CONFIRM
    listed = set(confirm_tags)
    for tag in tags:
        if tag in listed:
            return tag
    return None


def unmatched_confirm_tags(confirm_tags: Sequence[str], tools: Iterable[Confirmable]) -> list[str]:
    """The ``confirm_tags`` entries no loaded tool carries, in the order they were configured.

    Each deserves a startup warning: a typo there would silently leave a command ungated.
    """
    carried = {tag for tool in tools for tag in tool.tags}
    return [tag for tag in dict.fromkeys(confirm_tags) if tag not in carried]
