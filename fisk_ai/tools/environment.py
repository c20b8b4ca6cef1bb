"""The environment every subprocess fisk-ai starts on the model's behalf receives.

Introspection, command tools and MCP stdio children all go through ``tool_environment`` so the
credential scrub cannot differ between them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from fisk_ai.llm.registry import credential_env_names
from fisk_ai.telemetry.credentials import OTLP_CREDENTIAL_ENV_NAMES

LLMFORMAT = "LLMFORMAT"

SLACK_CREDENTIAL_ENV_NAMES = frozenset({"SLACK_APP_TOKEN", "SLACK_BOT_TOKEN"})
"""The Slack channel's tokens, which fisk itself reads from the environment: a tool has no use
for them, and an introspection call or a command must never see them."""


def tool_environment(
    base: Mapping[str, str] | None = None, extra_secret_names: Iterable[str] = ()
) -> dict[str, str]:
    """``base`` (the process environment by default) without any credential variable, plus
    ``LLMFORMAT=1``.

    Removed: every registered provider's credential variables, whichever provider is active;
    every OTLP credential variable, whether or not telemetry is on; the Slack channel's tokens,
    whether or not Slack is served; and ``extra_secret_names``
    (operator-named variables such as the knowledge embeddings key). The scrub is by name only.
    """
    source = os.environ if base is None else base
    removed = (
        credential_env_names()
        | OTLP_CREDENTIAL_ENV_NAMES
        | SLACK_CREDENTIAL_ENV_NAMES
        | set(extra_secret_names)
    )
    environment = {name: value for name, value in source.items() if name not in removed}
    environment[LLMFORMAT] = "1"
    return environment
