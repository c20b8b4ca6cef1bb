"""Supplying the answer to a deferred tool call after its run suspended."""

from __future__ import annotations

from collections.abc import Callable

from fisk_ai.llm.types import ToolResultBlock
from fisk_ai.sessions.errors import DeferredAnswerRefused
from fisk_ai.sessions.fold import Conversation, fold
from fisk_ai.sessions.records import Deferred, Record, ToolResult
from fisk_ai.sessions.store import SessionStore

__all__ = ["answer_deferred"]


async def answer_deferred(
    store: SessionStore,
    run_id: str,
    tool_use_id: str,
    content: str,
    *,
    is_error: bool = False,
    screen: Callable[[str, str], str] | None = None,
) -> Record:
    """Journal ``content`` as the result of the deferred call ``tool_use_id``.

    The session is read and checked before it is opened, so a refused answer takes no lock. The
    check is repeated under the lock, since another answer may have landed in between. Exactly
    one tool_result record is written, which leaves the next resume an ordinary one.

    ``screen``, called with the call's tool name and ``content`` once the call is known to be
    waiting, gives the text journaled instead: the answer reaches the model on the next resume
    past the run's own hooks, so a caller running under a PII guard passes its screen here.
    """
    _waiting(fold(await store.read(run_id)), tool_use_id)
    async with await store.open(run_id) as journal:
        call = _waiting(fold(await store.read(run_id)), tool_use_id)
        if screen is not None:
            content = screen(call.tool_name, content)
        return await journal.append(ToolResult(ToolResultBlock(tool_use_id, content, is_error)))


def _waiting(conversation: Conversation, tool_use_id: str) -> Deferred:
    """The deferred call ``tool_use_id`` the conversation waits on; refused otherwise."""
    run_id = conversation.run_id
    # Answered comes first: answering a deferral commits its turn, and calling that call unknown
    # would tell whoever answers twice that the first answer never landed.
    if conversation.is_answered(tool_use_id):
        raise DeferredAnswerRefused(
            f"call {tool_use_id} of session {run_id} was already answered; resume the session "
            "to continue it"
        )
    for deferred in conversation.deferred:
        if deferred.tool_use_id == tool_use_id:
            return deferred
    raise DeferredAnswerRefused(
        f"session {run_id} is not waiting on call {tool_use_id}; fisk session show {run_id} "
        "lists the calls it is waiting on"
    )
