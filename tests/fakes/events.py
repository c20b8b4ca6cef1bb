"""A recording event sink: keeps every event the loop emits, in order."""

from __future__ import annotations

from typing import TypeVar

from fisk_ai.agent.events import Event

E = TypeVar("E")


class RecordingSink:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def of(self, kind: type[E]) -> list[E]:
        """The recorded events of one type, in order."""
        return [event for event in self.events if isinstance(event, kind)]
