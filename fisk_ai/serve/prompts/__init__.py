"""The prompts engine: answering other agents' prompts over a2a, one agent-loop turn each.

The engine is a channel of the Server (``fisk_ai/serve/server.py``): getting requests in and
answers out is here, running the turn is the Server's. By concern:

- ``intake``: the channel. Subscribe, decode, refuse, admit, and build the Server's Work.
- ``turn``: one accepted turn. Its events going out in order, keepalives, its terminal message.
- ``elicitation``: the run's questions put to the caller, and late answers taken after it ended.
- ``reading``: request.read, and the checks a request.answer passes before its ack.
- ``options``: how an engine is set up, and how it names the conversations it holds.
- ``engine``: ``PromptsServer``, the channel on a Server of its own.
- ``hosting``: ``prompts_channel``, the channel as `fisk serve` hosts it.

Every reply set is the one ``ReplySet`` of ``fisk_ai/serve/replies.py`` the tools server uses
too: messages numbered from 1 without gaps, advancing only after a publish succeeded.
"""

from fisk_ai.serve.prompts.engine import PromptsServer
from fisk_ai.serve.prompts.intake import PromptsChannel
from fisk_ai.serve.prompts.options import (
    LOCAL,
    SERVED,
    ConversationNaming,
    PromptsOptions,
    conversation_session_id,
    new_conversation_token,
)
from fisk_ai.serve.prompts.reading import MAX_ANSWER_BYTES

__all__ = [
    "LOCAL",
    "MAX_ANSWER_BYTES",
    "SERVED",
    "ConversationNaming",
    "PromptsChannel",
    "PromptsOptions",
    "PromptsServer",
    "conversation_session_id",
    "new_conversation_token",
]
