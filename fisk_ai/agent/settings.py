"""The settings of a run: everything the loop needs to know, resolved from agent.yaml and the
flags. Kept apart from the loop and the runner so that whoever only configures or describes a
run loads no engine."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from fisk_ai.config.models import PiiMode
from fisk_ai.llm.types import ThinkingMode

if TYPE_CHECKING:
    from fisk_ai import config

__all__ = ["AgentSettings", "settings_from_config"]


@dataclass(frozen=True)
class AgentSettings:
    """Everything the loop needs to know about a run, resolved from agent.yaml and the flags.

    ``max_tokens`` caps the whole conversation (tokens processed); ``max_iterations`` caps each
    turn. A ``tool_timeout`` of None means tools run without a deadline.
    """

    model: str
    system_prompt: str = ""
    max_tokens: int = 500_000
    max_iterations: int = 50
    max_output_tokens: int = 0
    call_timeout: timedelta | None = timedelta(seconds=120)
    thinking: ThinkingMode = ThinkingMode.UNSET
    reasoning_effort: str = ""
    prompt_cache: bool = True
    no_tool_search: bool = False
    confirm_tags: tuple[str, ...] = ()
    tool_timeout: timedelta | None = timedelta(minutes=5)
    work_dir: Path | None = None
    interactive: bool = False
    verbose: bool = False
    identity: str = ""
    pii_mode: PiiMode = PiiMode.REDACT


def settings_from_config(
    cfg: config.Config,
    *,
    interactive: bool = False,
    verbose: bool = False,
    work_dir: Path | None = None,
) -> AgentSettings:
    """The settings of a run under ``cfg``; ``interactive`` marks a chat with an input bar."""
    llm = cfg.llm
    budget = llm.budget
    if llm.thinking is None:
        thinking = ThinkingMode.UNSET
    else:
        thinking = ThinkingMode.ON if llm.thinking.enabled else ThinkingMode.OFF
    tool_timeout = cfg.harness.tool_timeout
    return AgentSettings(
        model=llm.model,
        system_prompt=cfg.system_prompt,
        max_tokens=budget.max_tokens,
        max_iterations=budget.max_iterations,
        max_output_tokens=budget.max_output_tokens,
        call_timeout=budget.call_timeout,
        thinking=thinking,
        reasoning_effort=llm.reasoning_effort,
        prompt_cache=not llm.no_prompt_cache,
        no_tool_search=llm.no_tool_search,
        confirm_tags=tuple(cfg.harness.confirm_tags),
        tool_timeout=tool_timeout if tool_timeout > timedelta(0) else None,
        work_dir=work_dir,
        interactive=interactive,
        verbose=verbose,
        identity=cfg.identity,
        pii_mode=cfg.harness.pii.mode,
    )
