"""The Anthropic provider. The only module that imports the anthropic SDK, and only lazily."""

from __future__ import annotations

from typing import Any

from fisk_ai.errors import FiskError
from fisk_ai.llm import registry

NAME = "anthropic"

CREDENTIAL_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_WEBHOOK_SIGNING_KEY",
    "ANTHROPIC_CUSTOM_HEADERS",
)


def _create(**_options: Any) -> Any:
    raise FiskError("this build of fisk-ai cannot call the Anthropic API yet")


registry.register(NAME, _create, CREDENTIAL_ENV)
