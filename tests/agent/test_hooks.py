from fisk_ai.agent.hooks import Allow, Deny, Hooks, PreToolDecision, Rewrite
from fisk_ai.llm.types import ToolUseBlock
from fisk_ai.tools.base import Outcome

CALL = ToolUseBlock("t1", "status", "{}")


async def test_prompt_hooks_run_in_order_on_each_others_rewrite() -> None:
    async def shout(prompt: str) -> str:
        return prompt.upper()

    async def exclaim(prompt: str) -> str:
        return prompt + "!"

    hooks = Hooks(user_prompt_submit=(shout, exclaim))

    assert await hooks.submit_prompt("hi") == "HI!"


async def test_a_prompt_denial_stops_the_later_hooks() -> None:
    seen: list[str] = []

    async def refuse(prompt: str) -> str | Deny:
        return Deny("not today")

    async def record(prompt: str) -> str:
        seen.append(prompt)
        return prompt

    hooks = Hooks(user_prompt_submit=(refuse, record))

    assert await hooks.submit_prompt("hi") == Deny("not today")
    assert seen == []


async def test_no_pre_tool_hooks_allow_the_call() -> None:
    assert await Hooks().before_tool(CALL) == Allow()


async def test_a_later_pre_tool_hook_sees_the_earlier_rewrite() -> None:
    seen: list[ToolUseBlock] = []

    async def redirect(call: ToolUseBlock) -> PreToolDecision:
        return Rewrite("stream_ls", '{"all": true}')

    async def record(call: ToolUseBlock) -> PreToolDecision:
        seen.append(call)
        return Allow()

    decision = await Hooks(pre_tool_use=(redirect, record)).before_tool(CALL)

    assert seen == [ToolUseBlock("t1", "stream_ls", '{"all": true}')]
    assert decision == Rewrite("stream_ls", '{"all": true}')


async def test_a_pre_tool_denial_wins_over_an_earlier_rewrite() -> None:
    async def redirect(call: ToolUseBlock) -> PreToolDecision:
        return Rewrite("other", "{}")

    async def refuse(call: ToolUseBlock) -> PreToolDecision:
        return Deny("blocked")

    assert await Hooks(pre_tool_use=(redirect, refuse)).before_tool(CALL) == Deny("blocked")


async def test_post_tool_hooks_chain_their_outcomes() -> None:
    async def redact(call: ToolUseBlock, outcome: Outcome) -> Outcome:
        return Outcome(outcome.output.replace("secret", "***"))

    async def tag(call: ToolUseBlock, outcome: Outcome) -> Outcome:
        return Outcome(outcome.output + " [checked]")

    hooks = Hooks(post_tool_use=(redact, tag))

    assert await hooks.after_tool(CALL, Outcome("a secret")) == Outcome("a *** [checked]")
