"""Hooks an embedder installs around the loop: on a prompt, before a tool, after a tool.

Every hook is an async callable run on the run's own task, in loop order. Several hooks at one
point run in the order given, each seeing what the one before it left: a rewritten prompt, a
rewritten call, a replaced outcome. A hook that raises ends the run as a crash (the loop's
barrier journals it); to refuse a single prompt or call, return ``Deny`` instead.

PreToolUse is the only reliable place to block a tool: it runs before validation, the confirm
gate and execution, so what runs is what the operator confirms and what is journaled.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from fisk_ai.llm.types import ToolUseBlock
from fisk_ai.tools.base import Outcome

__all__ = [
    "Allow",
    "Deny",
    "Hooks",
    "PostToolUseHook",
    "PreToolDecision",
    "PreToolUseHook",
    "Rewrite",
    "UserPromptSubmitHook",
]


@dataclass(frozen=True)
class Allow:
    """Let the call through unchanged."""


@dataclass(frozen=True)
class Deny:
    """Refuse a prompt or a call. A denied call is answered to the model as an error carrying
    ``reason``, so it can adapt; a denied prompt never enters the conversation."""

    reason: str


@dataclass(frozen=True)
class Rewrite:
    """Run a different tool, or the same one with other arguments. ``input`` replaces the whole
    argument object, as JSON text. A rewrite naming an unknown tool, or whose input is not a JSON
    object, aborts the run rather than dispatching a malformed call."""

    name: str
    input: str


PreToolDecision = Allow | Deny | Rewrite
UserPromptSubmitHook = Callable[[str], Awaitable[str | Deny]]
PreToolUseHook = Callable[[ToolUseBlock], Awaitable[PreToolDecision]]
PostToolUseHook = Callable[[ToolUseBlock, Outcome], Awaitable[Outcome]]


@dataclass(frozen=True)
class Hooks:
    """The hooks of one run; each point takes any number, run in order."""

    user_prompt_submit: Sequence[UserPromptSubmitHook] = ()
    pre_tool_use: Sequence[PreToolUseHook] = ()
    post_tool_use: Sequence[PostToolUseHook] = ()

    async def submit_prompt(self, prompt: str) -> str | Deny:
        """The prompt that enters the conversation, or the first refusal."""
        for hook in self.user_prompt_submit:
            decision = await hook(prompt)
            if isinstance(decision, Deny):
                return decision
            prompt = decision
        return prompt

    async def before_tool(self, call: ToolUseBlock) -> PreToolDecision:
        """Allow, the first refusal, or the call as the last rewrite left it."""
        current = call
        for hook in self.pre_tool_use:
            decision = await hook(current)
            if isinstance(decision, Deny):
                return decision
            if isinstance(decision, Rewrite):
                current = ToolUseBlock(call.id, decision.name, decision.input)
        if current is call:
            return Allow()
        return Rewrite(current.name, current.input)

    async def after_tool(self, call: ToolUseBlock, outcome: Outcome) -> Outcome:
        """The outcome the model, the journal and the event sink receive."""
        for hook in self.post_tool_use:
            outcome = await hook(call, outcome)
        return outcome
