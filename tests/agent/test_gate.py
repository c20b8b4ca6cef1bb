import json

import pytest

from fisk_ai.agent.gate import NO_OPERATOR, ConfirmGate, GateVerdict, denial_content
from fisk_ai.tools.questions import (
    DECLINE_REASON_LIMIT,
    ApprovalChoice,
    ApprovalQuestion,
    DeclineWithReason,
    NobodyToAsk,
    QuestionInterrupted,
)
from tests.fakes.prompter import INTERRUPT, ScriptedPrompter


def question(call_id: str = "t1", tool: str = "stream_rm") -> ApprovalQuestion:
    return ApprovalQuestion(
        tool_use_id=call_id,
        tool_name=tool,
        command="stream rm",
        display="stream rm -- ORDERS",
        trigger="ai:confirm",
    )


async def test_with_no_prompter_the_gate_denies_before_any_grant() -> None:
    gate = ConfirmGate(None, standing_grants={"stream_rm"}, call_approvals={"t1"})

    assert await gate.decide(question()) == GateVerdict(False, NO_OPERATOR)


async def test_a_prompter_that_cannot_prompt_denies_without_asking() -> None:
    prompter = ScriptedPrompter([ApprovalChoice.ONCE], reachable=False)

    verdict = await ConfirmGate(prompter).decide(question())

    assert not verdict.allowed
    assert prompter.questions == []


async def test_a_standing_grant_allows_without_asking() -> None:
    prompter = ScriptedPrompter()

    verdict = await ConfirmGate(prompter, standing_grants={"stream_rm"}).decide(question())

    assert verdict.allowed


async def test_a_call_approval_allows_that_call_once() -> None:
    prompter = ScriptedPrompter([ApprovalChoice.NO])
    gate = ConfirmGate(prompter, call_approvals={"t1"})

    assert (await gate.decide(question())).allowed
    assert not (await gate.decide(question())).allowed


async def test_declining_names_the_command_and_says_the_decision_is_final() -> None:
    verdict = await ConfirmGate(ScriptedPrompter([ApprovalChoice.NO])).decide(question())

    assert verdict.reason == (
        'the operator declined to run "stream rm -- ORDERS"; this decision is final, do not retry'
    )


async def test_nobody_to_ask_is_a_denial_saying_why_and_not_a_decline() -> None:
    prompter = ScriptedPrompter([NobodyToAsk("the caller has no operator to ask")])

    verdict = await ConfirmGate(prompter).decide(question())

    assert verdict == GateVerdict(
        False,
        'the caller has no operator to ask, so nobody approved "stream rm -- ORDERS"; '
        "this decision is final, do not retry",
    )


async def test_always_grants_the_tool_and_stages_the_grant_for_that_call() -> None:
    gate = ConfirmGate(ScriptedPrompter([ApprovalChoice.ALWAYS]))

    await gate.decide(question("t1"))

    assert (await gate.decide(question("t2"))).allowed
    assert gate.take_staged("t2") is None
    assert gate.take_staged("t1") == "stream_rm"
    assert gate.take_staged("t1") is None


async def test_an_interrupt_is_not_an_answer() -> None:
    gate = ConfirmGate(ScriptedPrompter([INTERRUPT]))

    with pytest.raises(QuestionInterrupted):
        await gate.decide(question())
    assert gate.standing_grants == frozenset()


def test_a_denial_is_sent_as_compact_json() -> None:
    assert json.loads(denial_content("no")) == {"allowed": False, "reason": "no"}
    assert denial_content("no") == '{"allowed":false,"reason":"no"}'


async def test_a_decline_with_a_sentence_gives_the_model_the_sentence_and_stays_final() -> None:
    prompter = ScriptedPrompter([DeclineWithReason("use the staging cluster")])

    verdict = await ConfirmGate(prompter).decide(question())

    assert verdict == GateVerdict(
        False,
        'the operator declined to run "stream rm -- ORDERS" and said: '
        '"use the staging cluster"; this decision is final, do not retry',
    )


async def test_the_sentence_is_one_line_without_control_sequences_and_bounded() -> None:
    hostile = "stop\x1b[2J\nnow " + "x" * (DECLINE_REASON_LIMIT * 2)
    prompter = ScriptedPrompter([DeclineWithReason(hostile)])

    verdict = await ConfirmGate(prompter).decide(question())

    said = verdict.reason.split(' and said: "', 1)[1].rsplit('"; ', 1)[0]
    assert said.startswith("stop now xxx")
    assert "\x1b" not in said and "\n" not in said
    assert len(said) <= DECLINE_REASON_LIMIT + len("...")


async def test_an_empty_sentence_is_a_plain_decline() -> None:
    verdict = await ConfirmGate(ScriptedPrompter([DeclineWithReason("  ")])).decide(question())

    assert verdict.reason == (
        'the operator declined to run "stream rm -- ORDERS"; this decision is final, do not retry'
    )
