"""The agent card served at ``/.well-known/agent-card.json``.

It describes the agent as a prompt reaches it: one skill per command of the wrapped
application in the tool set a run gets (what the top-level include and exclude selected,
confirmation-gated commands included, since a run reaches them through an approval), or one
skill for the agent itself when it wraps none. Streaming is on, push notifications off, text
in and text out, and a bearer scheme is declared exactly when a token is required.
"""

from __future__ import annotations

from collections.abc import Iterable

from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_1_0, TransportProtocol

from fisk_ai.tools.base import Confirmable, Kind, Tool

__all__ = ["BEARER_SCHEME", "agent_card"]

BEARER_SCHEME = "bearer"
_TEXT = "text/plain"


def agent_card(
    *,
    identity: str,
    version: str,
    application: str,
    url: str,
    tools: Iterable[Tool],
    bearer: bool,
) -> AgentCard:
    """The card of agent ``identity`` (``version``, wrapping ``application`` when not empty),
    answering JSON-RPC at ``url``."""
    about = f"fisk-ai agent {identity}" + (f", driving {application}" if application else "")
    skills = [_skill(tool) for tool in tools if tool.kind is Kind.APPLICATION]
    if not skills:
        skills = [
            AgentSkill(
                id="prompt",
                name=identity,
                description=f"Answers a prompt as {about}.",
                tags=["fisk-ai"],
            )
        ]
    card = AgentCard(
        name=identity,
        description=f"{about}. Each message is a prompt; a context is a conversation.",
        version=version,
        supported_interfaces=[
            AgentInterface(
                url=url,
                protocol_binding=TransportProtocol.JSONRPC.value,
                protocol_version=PROTOCOL_VERSION_1_0,
            )
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=[_TEXT],
        default_output_modes=[_TEXT],
        skills=skills,
    )
    if bearer:
        card.security_schemes[BEARER_SCHEME].CopyFrom(
            SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer"))
        )
        card.security_requirements.append(
            SecurityRequirement(schemes={BEARER_SCHEME: StringList()})
        )
    return card


def _skill(tool: Tool) -> AgentSkill:
    tags = list(tool.tags) if isinstance(tool, Confirmable) else []
    return AgentSkill(
        id=tool.name,
        name=tool.name,
        description=tool.description or tool.model_description,
        tags=tags or ["command"],
    )
