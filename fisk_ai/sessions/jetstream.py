"""The jetstream backend: sessions as messages on a JetStream stream the operator made.

The stream listens on one wildcard subject, ``<prefix>.>``, and keeps one message per subject,
refusing a second one (discard new, per subject), so every record is written once and never
replaced. A session's meta record lives at ``<prefix>.<id>._meta`` and record N at
``<prefix>.<id>.N``; a message body is exactly the line the file backend would write, without
the newline, so a session moves between the backends unchanged.

Nothing here creates or edits the stream. Binding reads its configuration and refuses any shape
that could lose or rewrite a record, naming the ``nats stream add`` command that makes a right one.

There is no lock. A journal publishes each record on the condition that the newest message under
``<prefix>.<id>.>`` is the one it last wrote (``Nats-Expected-Last-Subject-Sequence`` with
``Nats-Expected-Last-Subject-Sequence-Subject``, nats-server 2.11 and later), and each message
carries ``Nats-Msg-Id: <nonce>-<seq>`` with a nonce of the journal's own. A refused publish is
explained by reading the record's subject: our own message id there is an acknowledgement that
was lost, so the record is adopted; another meta record means somebody created the session
first; anything else means another writer took the session over.

The store borrows a connection it is given and never closes it. Without one, it connects when it
is first used and closes the connection once nothing (no call and no open journal) uses it, so a
command that never closes the store leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import json
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

from fisk_ai.sessions.errors import (
    JournalError,
    JournalLocked,
    SessionError,
    SessionExists,
    SessionNotFound,
)
from fisk_ai.sessions.fold import SessionStatus
from fisk_ai.sessions.records import (
    JOURNAL_VERSION,
    Assistant,
    MemoryRevisions,
    Meta,
    Payload,
    Record,
    Terminal,
    ToolResult,
    Unrecognized,
    User,
    decode_record,
    encode_record,
)
from fisk_ai.sessions.store import (
    AppendAction,
    SessionSummary,
    check_append,
    check_claim,
)
from fisk_ai.util import jsonx
from fisk_ai.util.natsx import describe_nats_failure, nats_server_phrase

if TYPE_CHECKING:
    from nats.aio.client import Client as NatsClient
    from nats.js.api import RawStreamMsg, StreamConfig
    from nats.js.client import JetStreamContext

__all__ = [
    "BIND_TIMEOUT",
    "ConnectionOpener",
    "JetStreamJournal",
    "JetStreamSessionStore",
    "jetstream",
    "stream_add_command",
]

BIND_TIMEOUT = 10.0
MIN_MAX_MSG_SIZE = 4096
META_SUBJECT = "_meta"
DEFAULT_SUBJECT_PREFIX = "fisk.sessions"
# The first nats-server release that honors Nats-Expected-Last-Subject-Sequence-Subject.
MIN_SERVER_VERSION = (2, 11)

MSG_ID = "Nats-Msg-Id"
EXPECTED_LAST_SUBJECT_SEQUENCE = "Nats-Expected-Last-Subject-Sequence"
EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT = "Nats-Expected-Last-Subject-Sequence-Subject"

_NONCE_BYTES = 16
_PUBLISH_ATTEMPTS = 3
_REQUESTS_IN_FLIGHT = 64
_API_TIMEOUT = 5.0
# JetStream API error codes this backend tells apart.
_STREAM_NOT_FOUND = 10059
_NO_MESSAGE_FOUND = 10037
_WRONG_LAST_SEQUENCE = 10071
_MAX_MESSAGES_PER_SUBJECT = 10077
_REFUSED_APPENDS = (_WRONG_LAST_SEQUENCE, _MAX_MESSAGES_PER_SUBJECT)
# Records after which a session's status cannot have changed: stepping back over them finds it.
_STATUS_RECORDS = (Meta, Terminal, Assistant, User, ToolResult)

_log = logging.getLogger(__name__)
_Result = TypeVar("_Result")

ConnectionOpener = Callable[[], Awaitable["NatsClient"]]


def stream_add_command(stream: str, subject_prefix: str, context_name: str = "") -> str:
    """The nats CLI command that makes a stream this backend binds to."""
    context = f"--context {context_name} " if context_name else ""
    return (
        f"nats {context}stream add {stream} --subjects '{subject_prefix}.>' "
        "--max-msgs-per-subject=1 --discard=new --discard-per-subject"
    )


@dataclass(frozen=True)
class _Binding:
    """A connection and what binding the stream on it established."""

    connection: NatsClient
    js: JetStreamContext
    subject_prefix: str


class JetStreamSessionStore:
    """Sessions as messages on an operator-made JetStream stream.

    Give either ``connection`` (borrowed: used, never closed) or ``open_connection`` (called
    when the store is first used; that connection is closed again once nothing uses it).
    ``jetstream_options`` are nats-py's ``jetstream()`` arguments (a domain or an API prefix).
    """

    def __init__(
        self,
        stream: str,
        *,
        connection: NatsClient | None = None,
        open_connection: ConnectionOpener | None = None,
        context_name: str = "",
        jetstream_options: Mapping[str, str] | None = None,
        bind_timeout: float = BIND_TIMEOUT,
    ) -> None:
        if (connection is None) == (open_connection is None):
            raise ValueError("give exactly one of connection and open_connection")
        self._stream = stream
        self._borrowed = connection
        self._open_connection = open_connection
        self._context_name = context_name
        self._jetstream_options = dict(jetstream_options or {})
        self._bind_timeout = bind_timeout
        self._binding: _Binding | None = None
        self._users = 0
        self._guard = asyncio.Lock()

    @property
    def stream(self) -> str:
        return self._stream

    def describe(self) -> str:
        via = f"NATS context {self._context_name}" if self._context_name else "the host's NATS"
        return f"jetstream, stream {self._stream} via {via}"

    async def bind(self) -> None:
        """Check the stream now rather than at first use; a wrong shape raises SessionError."""
        async with self._using():
            pass

    async def create(self, run_id: str, meta: Meta) -> JetStreamJournal:
        _validate_session_id(run_id)
        if meta.run_id != run_id:
            raise ValueError(f"the meta record names run {meta.run_id}, not {run_id}")
        binding = await self._acquire()
        journal = JetStreamJournal(self, binding, run_id, last_seq=0, last_stream_seq=0)
        try:
            await journal.append_record(Record(1, meta))
        except BaseException:
            await journal.close()
            raise
        return journal

    async def open(self, run_id: str, *, read_seq: int | None = None) -> JetStreamJournal:
        _validate_session_id(run_id)
        binding = await self._acquire()
        try:
            with self._failures(f"open session {run_id}"):
                last = await self._last_message(binding, self._session_filter(binding, run_id))
            if last is None:
                raise self._not_found(run_id)
            record = self._decode(binding, run_id, last)
            # The journal's first publish is conditioned on this very message, so a writer
            # that appends after this check still makes that publish, and so the claim, fail.
            check_claim(run_id, read_seq, record.seq)
        except BaseException:
            await self._release()
            raise
        return JetStreamJournal(
            self, binding, run_id, last_seq=record.seq, last_stream_seq=_stream_seq(last)
        )

    async def exists(self, run_id: str) -> bool:
        _validate_session_id(run_id)
        async with self._using() as binding:
            with self._failures(f"look up session {run_id}"):
                last = await self._last_message(binding, self._session_filter(binding, run_id))
        return last is not None

    async def read(self, run_id: str) -> list[Record]:
        _validate_session_id(run_id)
        async with self._using() as binding:
            with self._failures(f"read session {run_id}"):
                subjects = await self._subjects(binding, self._session_filter(binding, run_id))
                if not subjects:
                    raise self._not_found(run_id)
                ordered = sorted(
                    (self._record_seq(binding, run_id, subject), subject) for subject in subjects
                )
                messages = await _bounded_gather(
                    self._last_message(binding, subject) for _, subject in ordered
                )
            records = []
            for message in messages:
                if message is None:
                    raise SessionNotFound(
                        f"session {run_id} was removed from stream {self._stream} while it was "
                        "being read"
                    )
                records.append(self._decode(binding, run_id, message))
            return records

    async def list(self) -> builtins.list[SessionSummary]:
        async with self._using() as binding:
            with self._failures("list sessions"):
                subjects = await self._subjects(
                    binding, f"{binding.subject_prefix}.*.{META_SUBJECT}"
                )
                run_ids = sorted(
                    run_id
                    for subject in subjects
                    if _is_session_id(run_id := subject.split(".")[-2])
                )
                found = await _bounded_gather(
                    self._summarize(binding, run_id) for run_id in run_ids
                )
        summaries = [summary for summary in found if summary is not None]
        summaries.sort(key=lambda summary: summary.run_id)
        summaries.sort(key=lambda summary: summary.updated, reverse=True)
        return summaries

    async def remove(self, run_id: str) -> None:
        _validate_session_id(run_id)
        async with self._using() as binding:
            with self._failures(f"remove session {run_id}"):
                response = await self._api(
                    binding,
                    f"STREAM.PURGE.{self._stream}",
                    {"filter": self._session_filter(binding, run_id)},
                )
        if not response.get("purged"):
            raise self._not_found(run_id)

    @contextlib.asynccontextmanager
    async def _using(self) -> AsyncIterator[_Binding]:
        binding = await self._acquire()
        try:
            yield binding
        finally:
            await self._release()

    async def _acquire(self) -> _Binding:
        async with self._guard:
            if self._binding is None:
                self._binding = await self._bind()
            self._users += 1
            return self._binding

    async def _release(self) -> None:
        async with self._guard:
            self._users -= 1
            binding = self._binding
            if self._users or self._borrowed is not None or binding is None:
                return
            self._binding = None
        with contextlib.suppress(Exception):
            await binding.connection.close()

    async def _bind(self) -> _Binding:
        import nats.errors
        from nats.js.errors import NotFoundError

        opened: NatsClient | None = None
        try:
            async with asyncio.timeout(self._bind_timeout):
                if self._borrowed is not None:
                    connection = self._borrowed
                else:
                    assert self._open_connection is not None
                    connection = opened = await self._open_connection()
                self._check_server_version(connection)
                js = connection.jetstream(**self._jetstream_options)
                try:
                    info = await js.stream_info(self._stream)
                except NotFoundError:
                    raise SessionError(
                        f"stream {self._stream} does not exist, and the jetstream session backend "
                        f"never creates one; create it with: "
                        f"{self._fix_command(DEFAULT_SUBJECT_PREFIX)}"
                    ) from None
                except nats.errors.Error as failure:
                    raise SessionError(
                        f"stream {self._stream} could not be described "
                        f"({describe_nats_failure(failure)}); check that "
                        f"{nats_server_phrase(self._context_name)} is up and has JetStream enabled"
                    ) from None
                subject_prefix = self._check_shape(info.config)
        except TimeoutError:
            await _close_quietly(opened)
            raise SessionError(
                f"stream {self._stream} could not be bound within {self._bind_timeout:g} s; check "
                f"that {nats_server_phrase(self._context_name)} is up and has JetStream enabled"
            ) from None
        except BaseException:
            await _close_quietly(opened)
            raise
        return _Binding(connection, js, subject_prefix)

    def _check_server_version(self, connection: NatsClient) -> None:
        try:
            version = connection.connected_server_version
            found = (version.major, version.minor)
        except (ValueError, TypeError):
            return
        if found != (0, 0) and found < MIN_SERVER_VERSION:
            needed = ".".join(map(str, MIN_SERVER_VERSION))
            raise SessionError(
                f"{nats_server_phrase(self._context_name)} runs nats-server "
                f"{found[0]}.{found[1]}, and the jetstream session backend needs {needed} or "
                f"newer to publish on a session's last sequence; upgrade the server"
            )

    def _check_shape(self, config: StreamConfig) -> str:
        """The subject prefix of a stream of the right shape; SessionError naming every
        mismatch otherwise."""
        subjects = list(config.subjects or [])
        subject_prefix = _wildcard_prefix(subjects[0]) if len(subjects) == 1 else None
        problems = []
        if not subjects:
            problems.append("listens on no subject")
        elif len(subjects) > 1:
            listed = ", ".join(f"'{subject}'" for subject in subjects)
            problems.append(f"listens on {len(subjects)} subjects ({listed}) rather than one")
        elif subject_prefix is None:
            problems.append(
                f"listens on '{subjects[0]}' rather than on one wildcard subject '<prefix>.>'"
            )
        if config.max_msgs_per_subject != 1:
            kept = config.max_msgs_per_subject
            problems.append(
                "keeps "
                + ("any number of messages" if kept is None or kept < 0 else f"{kept} messages")
                + " per subject rather than exactly 1"
            )
        if _enum_value(config.discard) != "new":
            problems.append("discards old messages rather than refusing new ones")
        elif not config.discard_new_per_subject:
            problems.append("does not refuse new messages per subject (--discard-per-subject)")
        if config.max_age:
            problems.append(
                f"expires messages after {config.max_age:g} s (stored sessions must never expire)"
            )
        size = config.max_msg_size
        if size is not None and 0 < size < MIN_MAX_MSG_SIZE:
            problems.append(
                f"limits a message to {size} bytes (a record may need {MIN_MAX_MSG_SIZE} or more)"
            )
        if problems:
            raise SessionError(
                f"stream {self._stream} {_and_list(problems)}, so it cannot hold sessions; a "
                f"stream of the right shape is made with: "
                f"{self._fix_command(subject_prefix or DEFAULT_SUBJECT_PREFIX)}"
            )
        assert subject_prefix is not None
        return subject_prefix

    def _fix_command(self, subject_prefix: str) -> str:
        return stream_add_command(self._stream, subject_prefix, self._context_name)

    @contextlib.contextmanager
    def _failures(self, doing: str) -> Iterator[None]:
        """NATS failures as one-sentence SessionErrors; the store's own errors pass through."""
        import nats.errors

        try:
            yield
        except (nats.errors.Error, TimeoutError) as failure:
            raise SessionError(
                f"could not {doing} in stream {self._stream} ({describe_nats_failure(failure)}); "
                f"check that {nats_server_phrase(self._context_name)} is up"
            ) from None

    async def _last_message(self, binding: _Binding, subject: str) -> RawStreamMsg | None:
        from nats.js.errors import NotFoundError

        try:
            return await binding.js.get_last_msg(self._stream, subject)
        except NotFoundError:
            return None

    async def _subjects(self, binding: _Binding, subject_filter: str) -> builtins.list[str]:
        """Every subject with a message in the stream matching ``subject_filter``, page by page."""
        found: dict[str, int] = {}
        while True:
            response = await self._api(
                binding,
                f"STREAM.INFO.{self._stream}",
                {"subjects_filter": subject_filter, "offset": len(found)},
            )
            page = (response.get("state") or {}).get("subjects") or {}
            before = len(found)
            found.update(page)
            if len(found) == before or len(found) >= int(response.get("total") or 0):
                return builtins.list(found)

    async def _api(
        self, binding: _Binding, operation: str, request: Mapping[str, object]
    ) -> dict[str, Any]:
        from nats.js.errors import APIError

        reply = await binding.connection.request(
            f"{self._api_prefix()}.{operation}", json.dumps(request).encode(), timeout=_API_TIMEOUT
        )
        try:
            response = jsonx.parse(reply.data)
        except jsonx.JsonError as bad:
            raise SessionError(
                f"the JetStream API answered {operation} with a reply that {bad}"
            ) from None
        if not isinstance(response, dict):
            raise SessionError(f"the JetStream API answered {operation} with a non-object reply")
        if "error" in response:
            APIError.from_error(response["error"])
        return response

    def _api_prefix(self) -> str:
        domain = self._jetstream_options.get("domain")
        if domain:
            return f"$JS.{domain}.API"
        return self._jetstream_options.get("prefix") or "$JS.API"

    async def _summarize(self, binding: _Binding, run_id: str) -> SessionSummary | None:
        """A listing row from the meta record and the newest record, stepping back from the
        newest over records that leave the status as it was (a claim, memory revisions)."""
        meta_message = await self._last_message(
            binding, _record_subject(binding.subject_prefix, run_id, 1)
        )
        last_message = await self._last_message(binding, self._session_filter(binding, run_id))
        if meta_message is None or last_message is None:
            return None  # removed while the listing ran
        updated = last_message.time or datetime.fromtimestamp(0, UTC)
        meta: Meta | None = None
        try:
            meta_record = self._decode(binding, run_id, meta_message)
            if not isinstance(meta_record.payload, Meta):
                raise JournalError(f"record 1 of session {run_id} is not a meta record")
            meta = meta_record.payload
            if meta.version != JOURNAL_VERSION:
                raise JournalError(
                    f"session {run_id} is journal version {meta.version}, and this fisk-ai "
                    f"reads version {JOURNAL_VERSION}"
                )
            status = await self._status(
                binding, run_id, self._decode(binding, run_id, last_message)
            )
        except SessionError as failure:
            return SessionSummary(
                run_id=run_id,
                status=SessionStatus.CORRUPT,
                model=meta.fingerprint.model if meta is not None else "",
                updated=updated,
                first_prompt=meta.prompt if meta is not None else "",
                problem=str(failure),
            )
        return SessionSummary(
            run_id=run_id,
            status=status,
            model=meta.fingerprint.model,
            updated=updated,
            first_prompt=meta.prompt,
        )

    async def _status(self, binding: _Binding, run_id: str, record: Record) -> SessionStatus:
        while not isinstance(record.payload, _STATUS_RECORDS):
            subject = _record_subject(binding.subject_prefix, run_id, record.seq - 1)
            message = await self._last_message(binding, subject)
            if message is None:
                raise JournalError(f"session {run_id} has no record {record.seq - 1}")
            record = self._decode(binding, run_id, message)
        if isinstance(record.payload, Terminal):
            return SessionStatus(record.payload.reason.value)
        return SessionStatus.OPEN

    def _session_filter(self, binding: _Binding, run_id: str) -> str:
        return f"{binding.subject_prefix}.{run_id}.>"

    def _record_seq(self, binding: _Binding, run_id: str, subject: str) -> int:
        token = subject.removeprefix(f"{binding.subject_prefix}.{run_id}.")
        if token == META_SUBJECT:
            return 1
        if token.isascii() and token.isdigit() and not token.startswith("0") and int(token) > 1:
            return int(token)
        raise JournalError(
            f"stream {self._stream} holds a message on {subject}, which is not a record subject "
            f"of session {run_id}; remove that message"
        )

    def _decode(self, binding: _Binding, run_id: str, message: RawStreamMsg) -> Record:
        subject = message.subject or ""
        seq = self._record_seq(binding, run_id, subject)
        try:
            record = decode_record(message.data or b"")
        except JournalError as bad:
            raise JournalError(
                f"stream {self._stream} message {subject} is corrupt: {bad}"
            ) from None
        if record.seq != seq:
            raise JournalError(
                f"stream {self._stream} message {subject} is corrupt: it holds record "
                f"{record.seq}, not {seq}"
            )
        return record

    def _not_found(self, run_id: str) -> SessionNotFound:
        return SessionNotFound(
            f"there is no session {run_id} in stream {self._stream}; fisk session ls lists the "
            "sessions kept there"
        )


class JetStreamJournal:
    """One session held for appending. Holding it excludes nobody: another writer is found out
    when a publish conditioned on this journal's last record is refused."""

    def __init__(
        self,
        store: JetStreamSessionStore,
        binding: _Binding,
        run_id: str,
        *,
        last_seq: int,
        last_stream_seq: int,
    ) -> None:
        self._store = store
        self._binding = binding
        self._run_id = run_id
        self._last_seq = last_seq
        self._last_stream_seq = last_stream_seq
        self._nonce = secrets.token_hex(_NONCE_BYTES)
        self._closed = False
        self._mutex = asyncio.Lock()

    @property
    def run_id(self) -> str:
        return self._run_id

    @property
    def last_seq(self) -> int:
        return self._last_seq

    def message_id(self, seq: int) -> str:
        """The Nats-Msg-Id this journal publishes record ``seq`` under."""
        return f"{self._nonce}-{seq}"

    async def append(self, payload: Payload, *, optional: bool = False) -> Record:
        async with self._mutex:
            optional = optional or isinstance(payload, MemoryRevisions | Unrecognized)
            record = Record(self._last_seq + 1, payload, optional)
            await self._publish(record)
            return record

    async def append_record(self, record: Record) -> AppendAction:
        async with self._mutex:
            action = check_append(self._last_seq, record.seq)
            if action is AppendAction.WRITE:
                await self._publish(record)
            return action

    async def ensure_ours(self) -> None:
        """Raise JournalLocked if anything was written to the session since our last record."""
        store = self._store
        self._check_open()
        with store._failures(f"check session {self._run_id}"):
            last = await store._last_message(
                self._binding, store._session_filter(self._binding, self._run_id)
            )
        if last is None:
            raise self._removed()
        if _stream_seq(last) != self._last_stream_seq:
            raise self._taken(last.subject or "")

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._store._release()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def _publish(self, record: Record) -> None:
        """Publish ``record`` on the condition that nothing followed our last record, and
        advance only once the stream has it."""
        import nats.errors
        from nats.js.errors import APIError

        self._check_open()
        store = self._store
        prefix = self._binding.subject_prefix
        subject = _record_subject(prefix, self._run_id, record.seq)
        message_id = self.message_id(record.seq)
        headers = {
            MSG_ID: message_id,
            EXPECTED_LAST_SUBJECT_SEQUENCE: str(self._last_stream_seq),
            EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT: f"{prefix}.{self._run_id}.>",
        }
        body = encode_record(record)
        for _ in range(_PUBLISH_ATTEMPTS):
            with store._failures(f"append record {record.seq} to session {self._run_id}"):
                try:
                    ack = await self._binding.js.publish(
                        subject, body, stream=store.stream, headers=headers
                    )
                except nats.errors.TimeoutError:
                    # The record may have landed with its acknowledgement lost; publishing it
                    # again under the same message id finds out.
                    continue
                except APIError as refused:
                    if refused.err_code not in _REFUSED_APPENDS:
                        raise
                    stream_seq = await self._explain_refusal(subject, message_id, record.seq)
                else:
                    stream_seq = ack.seq
            self._last_seq = record.seq
            self._last_stream_seq = stream_seq
            return
        raise SessionError(
            f"stream {store.stream} did not acknowledge record {record.seq} of session "
            f"{self._run_id} after {_PUBLISH_ATTEMPTS} attempts; check the NATS server, then "
            "resume the session"
        )

    async def _explain_refusal(self, subject: str, message_id: str, seq: int) -> int:
        """The stream sequence of our own record when a refused publish had in fact landed;
        otherwise the SessionError that says who else wrote."""
        store = self._store
        stored = await store._last_message(self._binding, subject)
        if stored is not None and (stored.headers or {}).get(MSG_ID) == message_id:
            _log.debug("adopting record %d of session %s after a lost ack", seq, self._run_id)
            return _stream_seq(stored)
        if seq == 1 and stored is not None:
            raise SessionExists(
                f"session {self._run_id} already exists in stream {store.stream}; choose "
                f"another name or remove it with fisk session rm {self._run_id}"
            )
        if stored is None and seq > 1:
            session = store._session_filter(self._binding, self._run_id)
            if await store._last_message(self._binding, session) is None:
                raise self._removed()
        raise self._taken(subject)

    def _taken(self, subject: str) -> JournalLocked:
        return JournalLocked(
            f"session {self._run_id} in stream {self._store.stream} was written by another "
            f"writer (at {subject}), which holds it now; let that run end, then resume the "
            "session again"
        )

    def _removed(self) -> SessionError:
        return SessionError(
            f"session {self._run_id} was removed from stream {self._store.stream} while this "
            "run was writing it"
        )

    def _check_open(self) -> None:
        if self._closed:
            raise SessionError(f"session {self._run_id} was closed; open it again to append")


def _record_subject(subject_prefix: str, run_id: str, seq: int) -> str:
    token = META_SUBJECT if seq == 1 else str(seq)
    return f"{subject_prefix}.{run_id}.{token}"


def _wildcard_prefix(subject: str) -> str | None:
    """``fisk.sessions`` for ``fisk.sessions.>``; None for any other kind of subject."""
    prefix, _, last = subject.rpartition(".")
    tokens = prefix.split(".")
    if last != ">" or not prefix or any(token in ("", "*", ">") for token in tokens):
        return None
    return prefix


def _stream_seq(message: RawStreamMsg) -> int:
    return message.seq or 0


def _enum_value(value: object) -> object:
    return getattr(value, "value", value)


def _and_list(items: builtins.list[str]) -> str:
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


def _validate_session_id(run_id: str) -> None:
    from fisk_ai.sessions.file import validate_session_id

    validate_session_id(run_id)


def _is_session_id(text: str) -> bool:
    try:
        _validate_session_id(text)
    except SessionError:
        return False
    return True


async def _bounded_gather(work: Iterable[Awaitable[_Result]]) -> builtins.list[_Result]:
    """Run ``work`` concurrently, a bounded number at a time, keeping the order."""
    slots = asyncio.Semaphore(_REQUESTS_IN_FLIGHT)

    async def in_slot(item: Awaitable[_Result]) -> _Result:
        async with slots:
            return await item

    return await asyncio.gather(*(in_slot(item) for item in work))


async def _close_quietly(connection: NatsClient | None) -> None:
    if connection is not None:
        with contextlib.suppress(Exception):
            await connection.close()


def jetstream(
    *,
    stream: str,
    nats_context: str = "",
    connection: NatsClient | None = None,
    open_connection: ConnectionOpener | None = None,
    jetstream_options: Mapping[str, str] | None = None,
) -> JetStreamSessionStore:
    """The registry's factory: bind ``stream`` over ``connection`` (borrowed, never closed) or
    over the connections ``open_connection`` makes (opened at first use, closed when idle).
    ``nats_context`` names where the connection leads, for messages and ``describe()``.

    Making a connection from a NATS context is the host's part (``fisk_ai.serve.stores`` does
    it for the commands), which keeps this layer from reading context files itself.
    """
    return JetStreamSessionStore(
        stream,
        connection=connection,
        open_connection=open_connection,
        context_name=nats_context,
        jetstream_options=jetstream_options,
    )
