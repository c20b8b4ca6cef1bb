"""Reading a stored conversation back, and checking a late answer against it before the ack.

A request.read replays the end of a stored conversation between a replay_start and a replay_end
status and closes with a result. It runs no model and writes nothing, so it holds no worker slot
and may read a conversation whose turn is running.

A request.answer is checked before the ack, so a refused answer starts nothing: its value must
fit, the call it names must still be waiting, and a human-in-the-loop call must be answered with
its own kind of answer.
"""

from __future__ import annotations

from functools import partial

from fisk_ai.a2a.events import event_message
from fisk_ai.a2a.messages import (
    Ack,
    EventStatus,
    RequestRead,
    StatusBody,
    TerminalResult,
    WireUsage,
)
from fisk_ai.a2a.messages import Answer as LateAnswer
from fisk_ai.a2a.prompts_client import MAX_REPLAY_BLOCKS
from fisk_ai.a2a.vocabulary import AnswerKind, ErrorCode, StopReason
from fisk_ai.agent.events import StatusPhase
from fisk_ai.agent.replay import conversation_turns, replay_window
from fisk_ai.agent.resources import Resources
from fisk_ai.serve.prompts.turn import refuse
from fisk_ai.serve.replies import ReplySet
from fisk_ai.sessions.errors import SessionError, SessionNotFound
from fisk_ai.sessions.fold import fold
from fisk_ai.sessions.store import SessionStore
from fisk_ai.tools.builtin.hitl import ASK_HUMAN_CONFIRM, ASK_HUMAN_INPUT, ASK_HUMAN_SELECT
from fisk_ai.tools.toolset import ToolSet

__all__ = ["MAX_ANSWER_BYTES", "AnswerRefusal", "check_answer", "replay_conversation"]

MAX_ANSWER_BYTES = 4096

AnswerRefusal = tuple[ErrorCode, str]
"""Why a late answer is not taken: the terminal error's code and sentence."""

_HITL_TOOL_FOR_KIND = {
    AnswerKind.CONFIRM: ASK_HUMAN_CONFIRM,
    AnswerKind.SELECT: ASK_HUMAN_SELECT,
    AnswerKind.INPUT: ASK_HUMAN_INPUT,
}


async def replay_conversation(
    request: RequestRead, replies: ReplySet, session_id: str, resources: Resources
) -> None:
    """Answer ``request`` with the end of conversation ``session_id`` from ``resources``'
    store, the tool set naming its calls."""
    identity = replies.sender.name
    try:
        conversation = fold(await resources.store.read(session_id))
    except SessionNotFound:
        await refuse(
            replies,
            ErrorCode.UNKNOWN_CONVERSATION,
            f"agent {identity} holds no conversation for that token; check conversation_token",
        )
        return
    except SessionError as error:
        await refuse(replies, ErrorCode.FAILED, str(error))
        return
    tools = resources.tools if isinstance(resources.tools, ToolSet) else resources.tools()
    window = replay_window(
        conversation_turns(conversation, tools), request.replay, MAX_REPLAY_BLOCKS
    )
    usage = WireUsage.from_usage(
        conversation.usage,
        llm_calls=conversation.llm_calls,
        tool_calls=conversation.tool_calls,
        remote_tool_calls=conversation.remote_tool_calls,
    )
    token = request.conversation_token
    if not await replies.send(
        lambda header: Ack(**header, accepted=True, conversation_token=token)
    ):
        return
    start = StatusBody(phase=StatusPhase.REPLAY_START)
    if not await replies.send(lambda header: EventStatus(**header, block=start)):
        return
    for event in window.events:
        if not await replies.send(partial(event_message, event)):
            return
    end = StatusBody(
        phase=StatusPhase.REPLAY_END,
        count=len(window.events),
        truncated=window.truncated,
        usage=usage,
    )
    if await replies.send(lambda header: EventStatus(**header, block=end)):
        await replies.send(
            lambda header: TerminalResult(**header, stop_reason=StopReason.END_TURN, usage=usage)
        )


async def check_answer(
    store: SessionStore, late: LateAnswer, session_id: str
) -> tuple[AnswerRefusal | None, bool]:
    """Why a late answer to conversation ``session_id`` cannot be taken (None when it can),
    and whether it answers a deferred call. Raises SessionError when the journal cannot be
    read."""
    if late.value is not None and len(late.value.encode()) > MAX_ANSWER_BYTES:
        return (
            ErrorCode.ANSWER_TOO_LARGE,
            f"the answer's value is over {MAX_ANSWER_BYTES} bytes; shorten answer.value",
        ), False
    conversation = fold(await store.read(session_id))
    call_id = late.tool_use_id
    if conversation.is_answered(call_id):
        return (
            ErrorCode.ALREADY_ANSWERED,
            f"call {call_id} was already answered; send a request.resume to continue",
        ), False
    if any(deferred.tool_use_id == call_id for deferred in conversation.deferred):
        return None, True
    waiting = next((block for block in conversation.pending if block.id == call_id), None)
    if waiting is None:
        return (
            ErrorCode.UNKNOWN_CALL,
            f"the conversation is not waiting on call {call_id}; check answer.tool_use_id",
        ), False
    expected = _HITL_TOOL_FOR_KIND.get(late.kind)
    if expected is not None and waiting.name != expected:
        return (
            ErrorCode.REJECTED,
            f"call {call_id} is to {waiting.name}, which a {late.kind} answer does not "
            "answer; check answer.kind",
        ), False
    return None, False
