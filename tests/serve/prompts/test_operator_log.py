"""The operator's log lines of the prompts channel, in the user guide's wording: a prompt
accepted, run and ended, and a question asked and answered with how long it was held and how
many waiting messages the caller sent."""

from __future__ import annotations

import asyncio
import logging
import re
from datetime import timedelta

import pytest

from fisk_ai.a2a.in_process import InProcessTransport
from fisk_ai.a2a.messages import TerminalError, TerminalResult
from fisk_ai.a2a.prompts_client import TurnOptions
from fisk_ai.serve.oplog import OPERATOR_LOGGER, operator_line
from fisk_ai.tools.base import Tool
from fisk_ai.tools.questions import Answer, ApprovalChoice, Question
from tests.fakes.provider import answer, call, calls
from tests.serve.prompts.engine import StartAgent, client, exchange, prompt


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == OPERATOR_LOGGER]


def test_a_line_is_logfmt_with_the_message_first() -> None:
    assert operator_line("Running", work="t-1", caller_verified=False, resume=None) == (
        "msg=Running work=t-1 caller_verified=false"
    )
    assert operator_line("Ending a run", reason='llm call: 401 "no"') == (
        'msg="Ending a run" reason="llm call: 401 \\"no\\""'
    )


async def test_a_prompt_is_logged_as_accepted_running_and_ended(
    agent: StartAgent, caller: InProcessTransport, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=OPERATOR_LOGGER)
    await agent((), (answer("two streams"),))
    request = prompt("how many streams", request="docs1")

    replies = await exchange(caller, request)

    assert isinstance(replies[-1], TerminalResult)
    session = replies[0].conversation_token  # type: ignore[union-attr]
    assert session
    accepted, running, ending = lines(caplog)
    assert re.fullmatch(
        r'msg="Accepted a prompt" channel=a2a/prompts request=docs1 caller=peer '
        r"session=t-[0-9a-f]{64} prompt_bytes=16",
        accepted,
    ), accepted
    journal = accepted.split("session=")[1].split()[0]
    assert session not in " ".join(lines(caplog)), "the token is never logged"
    assert running == (
        f"msg=Running channel=a2a/prompts work={journal} caller=peer caller_verified=false"
    )
    assert ending == (
        f'msg="Ending a run" channel=a2a/prompts request=docs1 caller=peer session={journal} '
        "stop_reason=end_turn"
    )


async def test_a_failed_run_ends_with_its_code_and_reason_and_a_follow_up_says_resume(
    agent: StartAgent, caller: InProcessTransport, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=OPERATOR_LOGGER)
    started = await agent((), (answer("first"), RuntimeError("llm call: 401 Unauthorized")))
    first = await exchange(caller, prompt("hello", request="r1"))
    token = first[0].conversation_token  # type: ignore[union-attr]
    caplog.clear()

    second = await exchange(caller, prompt("again", request="r2", conversation_token=token))

    assert isinstance(second[-1], TerminalError)
    assert started.provider.calls == 2
    _, running, ending = lines(caplog)
    journal = running.split("work=")[1].split()[0]
    assert running.endswith(f"caller_verified=false resume={journal}")
    assert ending.startswith(
        f'msg="Ending a run" channel=a2a/prompts request=r2 caller=peer session={journal} '
    )
    assert re.search(r" stop_reason=error code=\w+ reason=\"", ending), ending
    assert "401 Unauthorized" in ending


class SlowPrompter:
    """Holds the question open long enough for the client to send waiting messages."""

    def __init__(self, hold: timedelta) -> None:
        self._hold = hold

    def can_prompt(self) -> bool:
        return True

    async def ask(self, question: Question) -> Answer:
        del question
        await asyncio.sleep(self._hold.total_seconds())
        return ApprovalChoice.ONCE


async def test_a_question_is_logged_when_asked_and_when_answered(
    agent: StartAgent,
    caller: InProcessTransport,
    app_tools: tuple[Tool, ...],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=OPERATOR_LOGGER)
    await agent(
        app_tools,
        (calls(call("t1", "stream_rm", {"stream": "ORDERS"})), answer("removed")),
        elicit=True,
        request_timeout=timedelta(milliseconds=300),
    )
    options = TurnOptions(prompter=SlowPrompter(timedelta(milliseconds=450)), request="docs1")

    result = await client(caller).ask("remove ORDERS", options=options)

    assert isinstance(result, TerminalResult), result
    asked = next(line for line in lines(caplog) if "Asked the caller" in line)
    answered = next(line for line in lines(caplog) if "A question was answered" in line)
    question = re.search(r"question=(\S+)", asked)
    assert question is not None
    assert asked == (
        f'msg="Asked the caller a question" channel=a2a/prompts request=docs1 '
        f"caller=fisk-ai question={question.group(1)} kind=approve wait_ms=300"
    )
    match = re.fullmatch(
        rf'msg="A question was answered" channel=a2a/prompts request=docs1 '
        rf"caller=fisk-ai question={question.group(1)} held=(\S+) acks=(\d+)",
        answered,
    )
    assert match, answered
    assert match.group(1) in {"0s", "1s"}
    assert int(match.group(2)) >= 2
