"""How a prompts engine is set up: its options, and how it names the conversations it holds.

No conversation is held between turns. Each turn runs in a fresh Runner over the journal named
``t-`` + sha256hex(identity + NUL + token), so any member of the queue group can take any turn
(``SERVED``). A run a terminal hosts for itself names its conversations as local runs are named
instead (``LOCAL``): the token is a KSUID and the journal carries it as its id, since the
terminal is the only caller and `fisk run --resume` takes the session id it printed.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from fisk_ai.a2a.codec import DEFAULT_MAX_MESSAGE_SIZE
from fisk_ai.a2a.prompts_client import KEEPALIVE_INTERVAL
from fisk_ai.util.ids import new_ksuid

__all__ = [
    "LOCAL",
    "SERVED",
    "ConversationNaming",
    "PromptsOptions",
    "conversation_session_id",
    "new_conversation_token",
]


def new_conversation_token() -> str:
    """A fresh conversation token: 128 random bits in the subject-safe alphabet."""
    return secrets.token_urlsafe(16)


def conversation_session_id(identity: str, token: str) -> str:
    """The journal a conversation token names on agent ``identity``."""
    digest = hashlib.sha256(f"{identity}\x00{token}".encode()).hexdigest()
    return f"t-{digest}"


@dataclass(frozen=True)
class ConversationNaming:
    """How an engine mints conversation tokens and names the journal a token stands for."""

    new_token: Callable[[], str]
    session_id: Callable[[str, str], str]
    """(identity, token) -> the session id of the conversation's journal."""
    operator_is_caller: bool = False
    """The terminal hosting the run is its only caller: its operator, who resumes a
    conversation as the command line does (a changed configuration needs --force), and who
    gave up a question the terminal gives up."""


SERVED = ConversationNaming(new_conversation_token, conversation_session_id)
LOCAL = ConversationNaming(new_ksuid, lambda _identity, token: token, operator_is_caller=True)


@dataclass(frozen=True)
class PromptsOptions:
    """How a prompts engine answers: as agent ``identity``, ``workers`` turns at a time.

    With ``elicit`` a run's questions go to the caller, each held for ``request_timeout``;
    without it nobody is asked and gated calls are refused. A quiet run sends a status every
    ``keepalive_interval``.
    """

    identity: str
    workers: int
    request_timeout: timedelta
    elicit: bool = False
    keepalive_interval: timedelta = KEEPALIVE_INTERVAL
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    naming: ConversationNaming = SERVED
