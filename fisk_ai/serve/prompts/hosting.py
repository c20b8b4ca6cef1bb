"""The prompts channel as `fisk serve` hosts it, over the resources the worker composed once
(``fisk_ai/serve/composition.py``) and shares with its other channels."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fisk_ai.a2a.transport import Transport
    from fisk_ai.agent.resources import Resources
    from fisk_ai.config import Config
    from fisk_ai.serve.prompts.intake import PromptsChannel

__all__ = ["prompts_channel"]

_log = logging.getLogger(__name__)


def prompts_channel(
    cfg: Config, transport: Transport, resources: Resources, *, gates: int
) -> PromptsChannel:
    """The prompts channel of ``cfg`` over ``resources``, for a Server the caller builds."""
    from fisk_ai.serve.prompts.intake import PromptsChannel
    from fisk_ai.serve.prompts.options import PromptsOptions

    a2a = cfg.expose.agent.a2a
    assert a2a is not None and a2a.prompts is not None, "SERVE validation admits nothing else"
    if gates and not a2a.prompts.elicit:
        _log.info(
            "gated tools are refused in answered prompts (%d of them), since nobody is asked "
            "without expose.agent.a2a.prompts.elicit",
            gates,
        )
    return PromptsChannel(
        transport,
        resources,
        PromptsOptions(
            identity=cfg.identity,
            workers=a2a.prompts.workers,
            request_timeout=a2a.request_timeout,
            elicit=a2a.prompts.elicit,
        ),
    )
