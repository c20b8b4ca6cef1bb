"""The agent a terminal's surface talks to, for either surface: hosted in this process behind
the embedded broker, or somebody else's reached through a NATS context.

``RunOptions`` is what `fisk run` (and a resume from `fisk session browse`) asked for;
``hosted_run`` turns it into a conversation, a pane reporter and, for a hosted agent, its tools
and session store. The surfaces only draw what the conversation tells them.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fisk_ai.errors import FiskError
from fisk_ai.multiplex import Reporter, detect
from fisk_ai.presentation import resume_flags
from fisk_ai.serve.local import RunOptions, TelemetryReport
from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from fisk_ai.a2a.conversation import AgentConversation
    from fisk_ai.agent.events import EventSink
    from fisk_ai.config import Config
    from fisk_ai.sessions import SessionStore
    from fisk_ai.tools.questions import Prompter
    from fisk_ai.tools.toolset import ToolSet

__all__ = ["HostedRun", "RunOptions", "TelemetryReport", "hosted_run"]


@dataclass(frozen=True)
class HostedRun:
    """What a surface needs of its agent: the configuration, the tools (empty for a remote
    agent), the pane reporter, the conversation, and the store a hosted agent journals to."""

    config: Config
    tools: ToolSet
    reporter: Reporter
    conversation: AgentConversation
    store: SessionStore | None
    model: str
    """The model the summary names: "" for a remote agent, whose model is its own business."""
    resume_flags: str = ""
    """What ``presentation.resume_flags`` gave for this run, for the resume hint."""
    telemetry: TelemetryReport = field(default_factory=TelemetryReport)
    """Filled in when the hosted agent stops: how many spans reached the collector."""


def _no_report() -> TelemetryReport:

    return TelemetryReport()


@contextlib.asynccontextmanager
async def hosted_run(
    options: RunOptions,
    *,
    events: EventSink,
    prompter_for: Callable[[Reporter], Prompter],
    warn: Callable[[str], None],
    interactive: bool = False,
) -> AsyncIterator[HostedRun]:
    """The agent of ``options`` for one surface: hosted in this process behind the embedded
    broker, or reached through ``options.nats_context``; closed on exit."""
    if options.nats_context:
        async with _remote_run(options, events=events, prompter_for=prompter_for) as remote:
            yield remote
        return

    from fisk_ai.config import Mode, load
    from fisk_ai.serve.local import host_local_agent

    cfg = load(options.config, Mode.AGENT)
    reporter = Reporter(cfg.identity, detect(os.environ))
    prompter = prompter_for(reporter)
    try:
        async with host_local_agent(
            cfg,
            options,
            interactive=interactive,
            elicit=interactive or prompter.can_prompt(),
            warn=lambda text: warn(f"warning: {single_line(text)}"),
            note=warn,
        ) as agent:
            if options.resume:
                # Said here in the store's words rather than as an unknown conversation token.
                await agent.store.read(options.resume)
            conversation = agent.endpoint.conversation(events=events, prompter=prompter)
            yield HostedRun(
                cfg,
                agent.tools,
                reporter,
                conversation,
                agent.store,
                model=cfg.llm.model,
                resume_flags=resume_flags(config=options.config, state_dir=options.state_dir),
                telemetry=agent.telemetry,
            )
    finally:
        await reporter.aclose()


@contextlib.asynccontextmanager
async def _remote_run(
    options: RunOptions, *, events: EventSink, prompter_for: Callable[[Reporter], Prompter]
) -> AsyncIterator[HostedRun]:
    from fisk_ai.config import Config, Mode, load
    from fisk_ai.serve.local import remote_agent
    from fisk_ai.serve.remote import remote_request_timeout
    from fisk_ai.tools.toolset import ToolSet

    if options.identity and not Path(options.config).exists():  # noqa: ASYNC240 - one stat
        cfg = Config()
    else:
        cfg = load(options.config, Mode.LENIENT)
    identity = options.identity or (cfg.identity if cfg.identity_named else "")
    if not identity:
        raise FiskError(
            f"set identity in {options.config} or pass --identity to name the agent "
            f"--nats-context {options.nats_context} should reach; a default identity could "
            "reach any agent built from the same application"
        )
    reporter = Reporter(identity, detect(os.environ))
    try:
        async with remote_agent(
            options.nats_context, identity, request_timeout=remote_request_timeout(cfg)
        ) as endpoint:
            conversation = endpoint.conversation(events=events, prompter=prompter_for(reporter))
            flags = resume_flags(
                config=options.config, nats_context=options.nats_context, identity=identity
            )
            yield HostedRun(
                cfg, ToolSet(), reporter, conversation, None, model="", resume_flags=flags
            )
    finally:
        await reporter.aclose()
