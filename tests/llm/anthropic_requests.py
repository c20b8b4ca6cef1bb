"""A model request as the loop sends it to the Anthropic provider."""

from typing import Any

from fisk_ai.llm.types import Request, user_text
from tests.llm.conftest import MODEL


def make_request(**changes: Any) -> Request:
    fields: dict[str, Any] = {
        "model": MODEL,
        "system": ("You run NATS commands.", "Memory index: none."),
        "messages": (user_text("list the streams"),),
    }
    fields.update(changes)
    return Request(**fields)
