"""Prompters the elicitation tests answer questions with."""

from __future__ import annotations

from dataclasses import dataclass

from fisk_ai.a2a.codec import encode
from fisk_ai.a2a.messages import Cancel, new_request
from fisk_ai.a2a.transport import Transport, cancel_subject
from fisk_ai.tools.questions import Answer, ApprovalChoice, Question
from tests.serve.prompts.engine import CALLER, IDENTITY, WAIT


@dataclass
class CancelingPrompter:
    """Cancels the turn while its question is on screen, then answers it anyway."""

    transport: Transport
    request: str

    def can_prompt(self) -> bool:
        return True

    async def ask(self, question: Question) -> Answer:
        cancel = new_request(Cancel, sender=CALLER, request=self.request)
        await self.transport.request(
            cancel_subject(IDENTITY, self.request), encode(cancel), timeout=WAIT
        )
        return ApprovalChoice.ONCE
