"""Shared resources a host builds once for its runs: the model provider."""

from __future__ import annotations

from dataclasses import dataclass

from fisk_ai import config
from fisk_ai.errors import FiskError
from fisk_ai.llm import registry
from fisk_ai.llm.types import Provider

HTTP_DEBUG_FILE = "http-debug.log"


@dataclass(frozen=True)
class ProviderOptions:
    """How to reach the model, from flags and the environment.

    ``replay`` answers from a cassette instead of ``llm.provider``; ``record`` writes every
    exchange of the chosen provider to a cassette.
    """

    api_key: str = ""
    base_url: str = ""
    http_debug: bool = False
    trace: str = ""
    record: str = ""
    replay: str = ""


def provider_name(cfg: config.Config, options: ProviderOptions) -> str:
    return "replay" if options.replay else cfg.llm.provider


def build_provider(cfg: config.Config, options: ProviderOptions) -> Provider:
    """The provider a run calls, failing now with the flag or variable to set."""
    name = provider_name(cfg, options)
    registration = registry.lookup(name)
    if name == "anthropic":
        from fisk_ai.llm.anthropic import prewarm, validate_base_url

        if not options.api_key:
            raise FiskError(
                "the Anthropic API needs a key; set ANTHROPIC_API_KEY or pass --api-key "
                "(or answer from a cassette with --replay FILE)"
            )
        base_url = validate_base_url(options.base_url) if options.base_url else None
        # The SDK costs about a second to import; start it now so it overlaps the rest of startup.
        prewarm()
        provider: Provider = registration.factory(
            api_key=options.api_key,
            base_url=base_url,
            http_debug_path=HTTP_DEBUG_FILE if options.http_debug else None,
            trace_path=options.trace or None,
        )
    else:
        provider = registration.factory(path=options.replay or None)
    if options.record:
        from fisk_ai.llm.replay import RecordingProvider

        provider = RecordingProvider(provider, options.record)
    return provider
