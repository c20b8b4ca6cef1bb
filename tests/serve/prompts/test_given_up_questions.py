"""A question given up says who gave it up: a remote caller that canceled or went quiet is not
"the operator", while the operator at the terminal hosting its own run still is."""

from __future__ import annotations

from datetime import timedelta

from fisk_ai.a2a.in_process import InProcessTransport
from fisk_ai.a2a.messages import TerminalError
from fisk_ai.a2a.prompts_client import TurnOptions
from fisk_ai.a2a.vocabulary import ErrorCode
from fisk_ai.serve.prompts import LOCAL
from fisk_ai.tools.base import Tool
from tests.fakes.provider import call, calls
from tests.serve.prompts.engine import StartAgent, client, exchange, prompt
from tests.serve.prompts.prompters import CancelingPrompter

REMOVE = calls(call("t1", "stream_rm", {"stream": "ORDERS"}))


async def test_a_question_the_caller_canceled_is_not_blamed_on_the_operator(
    agent: StartAgent, caller: InProcessTransport, app_tools: tuple[Tool, ...]
) -> None:
    await agent(app_tools, (REMOVE,), elicit=True)
    canceling = TurnOptions(request="r1", prompter=CancelingPrompter(caller, "r1"))

    result = await client(caller).ask("remove ORDERS", options=canceling)

    assert isinstance(result, TerminalError) and result.code == ErrorCode.SUSPENDED
    assert result.error.startswith("the caller canceled the request while a question was open")
    assert "operator" not in result.error


async def test_a_question_the_caller_left_unanswered_says_so(
    agent: StartAgent, caller: InProcessTransport, app_tools: tuple[Tool, ...]
) -> None:
    await agent(app_tools, (REMOVE,), elicit=True, request_timeout=timedelta(milliseconds=200))

    result = (await exchange(caller, prompt("remove ORDERS")))[-1]

    assert isinstance(result, TerminalError) and result.code == ErrorCode.SUSPENDED
    assert result.error == (
        "the caller did not answer a question in time; it is asked again when the "
        "conversation continues"
    )


async def test_a_question_given_up_at_the_hosting_terminal_is_the_operators(
    agent: StartAgent, caller: InProcessTransport, app_tools: tuple[Tool, ...]
) -> None:
    await agent(app_tools, (REMOVE,), elicit=True, naming=LOCAL)
    canceling = TurnOptions(request="r1", prompter=CancelingPrompter(caller, "r1"))

    result = await client(caller).ask("remove ORDERS", options=canceling)

    assert isinstance(result, TerminalError)
    assert result.error == (
        "the operator interrupted a question, which is not an answer; it is asked again when "
        "the conversation continues"
    )
