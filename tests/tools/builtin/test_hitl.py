import json

import pytest

from fisk_ai.tools.base import AsksOperator, ExecDeps, Kind, Presentation, Tool
from fisk_ai.tools.builtin.hitl import (
    NO_OPERATOR_REASON,
    AskHumanConfirm,
    AskHumanInput,
    AskHumanSelect,
    hitl_source,
    hitl_tools,
)
from fisk_ai.tools.questions import (
    ConfirmQuestion,
    InputQuestion,
    QuestionInterrupted,
    SelectQuestion,
)
from tests.fakes.prompter import INTERRUPT, ScriptedPrompter


def deps(prompter: ScriptedPrompter | None) -> ExecDeps:
    return ExecDeps(prompter=prompter)


def args(**values: object) -> str:
    return json.dumps(values)


async def test_confirm_yes_is_confirmed() -> None:
    outcome = await AskHumanConfirm().execute(
        args(question="Delete it?"), deps(ScriptedPrompter([True]))
    )

    assert (outcome.output, outcome.is_error) == ('{"confirmed":true}', False)


async def test_confirm_no_is_unconfirmed_with_a_reason() -> None:
    outcome = await AskHumanConfirm().execute(
        args(question="Delete it?"), deps(ScriptedPrompter([False]))
    )

    assert json.loads(outcome.output) == {
        "confirmed": False,
        "reason": "the operator answered no",
    }


async def test_select_returns_the_option_the_model_sent() -> None:
    prompter = ScriptedPrompter([1])

    outcome = await AskHumanSelect().execute(
        args(question="Which?", options=["red\x1b[31m", "blue"]), deps(prompter)
    )

    assert outcome.output == '{"selected":"blue"}'
    assert prompter.questions == [SelectQuestion("Which?", ("red", "blue"))]


async def test_select_without_a_choice_is_null_with_a_reason() -> None:
    outcome = await AskHumanSelect().execute(
        args(question="Which?", options=["a", "b"]), deps(ScriptedPrompter([None]))
    )

    assert json.loads(outcome.output) == {
        "selected": None,
        "reason": "the operator made no selection",
    }


async def test_input_returns_the_text_even_when_empty() -> None:
    outcome = await AskHumanInput().execute(args(question="Name?"), deps(ScriptedPrompter([""])))

    assert outcome.output == '{"value":""}'


async def test_input_offers_the_default_to_the_operator() -> None:
    prompter = ScriptedPrompter(["prod"])

    await AskHumanInput().execute(args(question="Env?", default="staging"), deps(prompter))

    assert prompter.questions == [InputQuestion("Env?", "staging")]


async def test_input_without_a_value_is_null_with_a_reason() -> None:
    outcome = await AskHumanInput().execute(args(question="Name?"), deps(ScriptedPrompter([None])))

    assert json.loads(outcome.output) == {"value": None, "reason": "the operator gave no value"}


@pytest.mark.parametrize(
    ("tool", "arguments", "key"),
    [
        (AskHumanConfirm(), args(question="Go?"), "confirmed"),
        (AskHumanSelect(), args(question="Which?", options=["a"]), "selected"),
        (AskHumanInput(), args(question="Name?"), "value"),
    ],
)
async def test_without_a_prompter_the_answer_is_negative_not_an_error(
    tool: Tool, arguments: str, key: str
) -> None:
    outcome = await tool.execute(arguments, deps(None))

    answer = json.loads(outcome.output)
    assert not outcome.is_error
    assert answer[key] in (False, None)
    assert answer["reason"] == NO_OPERATOR_REASON


async def test_a_prompter_that_cannot_reach_anyone_is_never_asked() -> None:
    prompter = ScriptedPrompter([True], reachable=False)

    outcome = await AskHumanConfirm().execute(args(question="Go?"), deps(prompter))

    assert json.loads(outcome.output)["confirmed"] is False
    assert prompter.questions == []


async def test_an_empty_question_is_an_error() -> None:
    outcome = await AskHumanConfirm().execute(args(question=" \x1b[2J "), deps(ScriptedPrompter()))

    assert outcome.is_error
    assert "question" in outcome.output


async def test_more_than_25_options_is_an_error() -> None:
    options = [f"option {index}" for index in range(26)]

    outcome = await AskHumanSelect().execute(
        args(question="Which?", options=options), deps(ScriptedPrompter())
    )

    assert outcome.is_error


async def test_a_missing_question_is_an_error() -> None:
    outcome = await AskHumanInput().execute("{}", deps(ScriptedPrompter()))

    assert outcome.is_error
    assert "question" in outcome.output


async def test_the_question_is_one_clean_line_capped_at_500_characters() -> None:
    prompter = ScriptedPrompter([True])

    await AskHumanConfirm().execute(
        args(question="\x1b]0;title\x07Really\n\ndo " + "x" * 600), deps(prompter)
    )

    shown = prompter.questions[0]
    assert isinstance(shown, ConfirmQuestion)
    assert shown.question.startswith("Really do xxx")
    assert len(shown.question) == 501
    assert shown.question.endswith("…")


async def test_an_interrupted_question_propagates() -> None:
    with pytest.raises(QuestionInterrupted):
        await AskHumanConfirm().execute(args(question="Go?"), deps(ScriptedPrompter([INTERRUPT])))


def test_the_tools_are_builtin_self_rendered_and_never_exposed() -> None:
    for tool in hitl_tools():
        assert tool.kind is Kind.BUILTIN
        assert tool.presentation is Presentation.SELF_RENDERED
        assert not tool.mcp_exposable
        assert not tool.a2a_exposable
        assert isinstance(tool, AsksOperator)
        assert tool.asks_operator


def test_the_tools_are_never_deferred() -> None:
    assert not any(tool.definition(True).defer_loading for tool in hitl_tools())


def test_the_tools_are_offered_under_their_documented_names() -> None:
    assert [tool.name for tool in hitl_tools()] == [
        "ask_human_confirm",
        "ask_human_select",
        "ask_human_input",
    ]


def test_the_source_is_labelled_by_the_key_that_adds_it() -> None:
    source = hitl_source()

    assert source.label == "harness.human_in_the_loop"
    assert [tool.name for tool in source.tools] == [tool.name for tool in hitl_tools()]
