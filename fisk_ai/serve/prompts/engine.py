"""PromptsServer: the a2a prompts channel on a Server of its own, the surface `fisk serve`,
`fisk run` and the tests start, drain and close."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from fisk_ai.a2a.transport import Transport
from fisk_ai.agent.resources import Resources
from fisk_ai.serve.prompts.intake import PromptsChannel
from fisk_ai.serve.prompts.options import ConversationNaming, PromptsOptions
from fisk_ai.serve.server import Server

__all__ = ["PromptsServer"]


class PromptsServer:
    """Answers request.prompt on a transport as ``options`` say, ``options.workers`` turns at a
    time, each run in a new Runner built from ``resources``."""

    def __init__(self, transport: Transport, resources: Resources, options: PromptsOptions) -> None:
        self.channel = PromptsChannel(transport, resources, options)
        self._server = Server(resources, [(self.channel, options.workers)])
        self._serving: asyncio.Task[None] | None = None

    @property
    def identity(self) -> str:
        return self.channel.identity

    @property
    def task_subject(self) -> str:
        return self.channel.task_subject

    @property
    def turns_running(self) -> int:
        return self.channel.turns_running

    @property
    def request_timeout(self) -> timedelta:
        return self.channel.options.request_timeout

    @property
    def draining(self) -> bool:
        return self.channel.draining

    @property
    def naming(self) -> ConversationNaming:
        return self.channel.options.naming

    @property
    def serving(self) -> asyncio.Task[None] | None:
        """The Server's work once started: it ends when the channel is drained and its turns
        are over, raising the channel's fault if it had one."""
        return self._serving

    async def start(self) -> None:
        await self.channel.open()
        self._serving = asyncio.get_running_loop().create_task(
            self._server.serve(), name=f"serve {self.channel.name}"
        )

    async def drain(self) -> None:
        """Take no more prompts: leave the queue group and refuse what still arrives. Turns
        already running carry on; a question out stops having its window restarted."""
        await self._server.drain()

    async def wait_idle(self) -> None:
        """Return once no turn is running."""
        await self.channel.wait_idle()

    async def close(self) -> None:
        """Drain, then abandon the turns still running; each caller gets a terminal message. A
        fault is reported through ``serving``, not raised here."""
        await self._server.stop()
        if self._serving is not None:
            await asyncio.gather(self._serving, return_exceptions=True)
