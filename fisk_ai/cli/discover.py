"""`fisk discover <agent>`: fetch and print the card another agent answers discovery with."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from fisk_ai.cli.flags import add_common_flags

if TYPE_CHECKING:
    from datetime import timedelta

    from fisk_ai.a2a.messages import DiscoveryReply, Identity

DESCRIPTION_LIMIT = 60


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "discover",
        help="show the card another agent serves: its version and tools",
        description="Fetch the card agent AGENT answers discovery with over NATS and print it. "
        "The NATS context is --context, else the configuration's nats_context, else the "
        "selected one.",
    )
    parser.add_argument("agent", help="the identity the other agent serves as")
    parser.add_argument(
        "--config", help="an agent configuration supplying nats_context and request_timeout"
    )
    parser.add_argument("--context", metavar="NAME", help="the NATS context to connect with")
    add_common_flags(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import asyncio
    import sys

    from fisk_ai.a2a.client import DEFAULT_CLIENT_IDENTITY, DEFAULT_DISCOVERY_TIMEOUT
    from fisk_ai.a2a.messages import Identity
    from fisk_ai.a2a.transport import discovery_subject
    from fisk_ai.config import Mode, load
    from fisk_ai.errors import FiskError

    try:
        discovery_subject(args.agent)
    except ValueError:
        raise FiskError(
            f"the agent name {args.agent!r} is not letters, digits, - and _ only; pass the "
            "identity the agent serves as"
        ) from None
    context_name: str | None = args.context
    timeout: timedelta = DEFAULT_DISCOVERY_TIMEOUT
    sender = DEFAULT_CLIENT_IDENTITY
    if args.config:
        cfg = load(args.config, Mode.LENIENT)
        context_name = context_name or cfg.nats_context or None
        if cfg.expose.agent.a2a is not None:
            timeout = cfg.expose.agent.a2a.request_timeout
        if cfg.identity:
            sender = Identity(name=cfg.identity)
    card = asyncio.run(_fetch(args.agent, context_name, timeout, sender))
    sys.stdout.write(render_card(card))
    return 0


async def _fetch(
    agent: str, context_name: str | None, wait: timedelta, sender: Identity
) -> DiscoveryReply:
    from fisk_ai.a2a.client import discover
    from fisk_ai.serve.connection import connect_transport

    transport = await connect_transport(context_name, name=f"fisk-ai discover {sender.name}")
    try:
        return await discover(transport, agent, timeout=wait, sender=sender)
    finally:
        await transport.close()


def render_card(card: DiscoveryReply) -> str:
    """The card as ``fisk discover`` prints it: the agent's fields (with the telemetry fields
    for an agent answering prompts), then its tools."""
    from fisk_ai.util.sanitize import single_line

    fields = [
        ("Agent", card.name),
        ("Version", card.version),
        ("Protocols", ", ".join(card.protocols)),
        ("Description", card.description),
        ("Model", card.model),
    ]
    shown = [(label, single_line(value)) for label, value in fields if value]
    if card.model or card.telemetry or card.telemetry_content:
        # What the agent does with a conversation, for a caller deciding whether to send one;
        # an agent answering no prompts has no conversation to export.
        shown += [
            ("Telemetry", _enabled(card.telemetry)),
            ("Telemetry Content", _enabled(card.telemetry_content)),
        ]
    width = 4 + max(len(label) for label, _ in shown)
    lines = [f"Agent Card for {single_line(card.name)}:", ""]
    lines += [f"{label.rjust(width)}: {value}" for label, value in shown]
    lines.append("")
    if not card.tools:
        lines.append("No tools are served.")
        return "\n".join(lines) + "\n"
    rows = [("Tool", "Description")]
    for tool in card.tools:
        summary = next((line for line in tool.description.splitlines() if line.strip()), "")
        rows.append((single_line(tool.name), _cut(single_line(summary))))
    name_width = max(len(name) for name, _ in rows)
    lines += [f"{name.ljust(name_width)}  {text}".rstrip() for name, text in rows]
    return "\n".join(lines) + "\n"


def _enabled(value: bool) -> str:
    return "enabled" if value else "disabled"


def _cut(text: str) -> str:
    if len(text) <= DESCRIPTION_LIMIT:
        return text
    return text[: DESCRIPTION_LIMIT - 3] + "..."
