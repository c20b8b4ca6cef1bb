"""What can go wrong with a session, each as a FiskError an operator can act on."""

from __future__ import annotations

from fisk_ai.errors import FiskError


class SessionError(FiskError):
    """A session could not be stored, read, resumed or answered."""


class JournalError(SessionError):
    """A journal is corrupt or malformed, or a record cannot be read."""


class JournalGapError(JournalError):
    """A record skips ahead of the journal's last sequence, so records in between are missing."""


class JournalLocked(SessionError):
    """Another process holds the session open for writing."""


class SessionNotFound(SessionError):
    """No session is stored under the id."""


class SessionExists(SessionError):
    """A new session was asked for under an id that is already taken."""


class InvalidSessionId(SessionError):
    """The text cannot name a session."""


class ResumeRefused(SessionError):
    """The configuration changed since the session started, in a way that forbids continuing it."""


class DeferredAnswerRefused(SessionError):
    """An answer was supplied for a call the session is not waiting on."""
