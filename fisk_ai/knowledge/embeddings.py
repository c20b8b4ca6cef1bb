"""The vector tier's embedders: an OpenAI-compatible ``POST <base_url>/embeddings`` endpoint
(``Embedder``, the default, as upstream) or, with ``provider: local``, all-MiniLM-L6-v2 run
in-process (``fisk_ai.knowledge.local_embedder``, imported only when chosen). ``open_embedder``
picks one from the configuration; indexing and search use either through ``TextEmbedder``.

Requests carry ``{"input": [...], "model": m}`` and, when ``api_key_env`` names a variable, a
bearer token read from it. Inputs go in batches of 64; a failed batch is halved, recursively,
down to single inputs, so one bad input fails alone and the order is kept. A response is mapped
strictly by each object's own ``index`` with a seen-set: a gap, a duplicate, an index out of
range, an empty vector, a count mismatch or an ``error`` object inside a 200 body fails the
whole batch, so a vector never lands on the wrong chunk. Every vector is L2-normalized here, so
the manifest can say ``normalized: true`` whatever the server does.

A failure is classified by the step that failed, a ``DegradeReason`` (connect, timeout, an
error status, a malformed response, an empty input), never by an error's text: the reason is
what a degraded search tells the model and the tier line, so it is a closed vocabulary. The
exception's message adds the detail an operator needs (the status code, what was wrong with the
response).

The HTTP client is the standard library's urllib (no new dependency; proxies from the
environment are not used, so the corpus goes only where base_url says), imported when the first
request is made. Calls block; async callers run them in a thread.
"""

from __future__ import annotations

import enum
import ipaddress
import json
import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from fisk_ai.knowledge.errors import KnowledgeError
from fisk_ai.util.redact import redact_url

if TYPE_CHECKING:
    import urllib.request

    from fisk_ai import config

__all__ = [
    "BATCH_SIZE",
    "PROBE_INPUT",
    "DegradeReason",
    "Embedder",
    "EmbeddingsUnavailable",
    "TextEmbedder",
    "check_embeddings",
    "document_input",
    "manifest_model",
    "open_embedder",
    "query_input",
]

BATCH_SIZE = 64
PROBE_INPUT = "dimension probe"
MAX_INPUT_BYTES = 128 * 1024
MAX_QUERY_BYTES = 8192
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
_KEY = "harness.knowledge.embeddings"
_SERVER_ERROR = 500
_TOO_MANY = 429


class DegradeReason(enum.StrEnum):
    """Why the embeddings endpoint gave no vectors: the step that failed."""

    CONNECT = "connect failed"
    TIMEOUT = "timeout"
    ERROR_STATUS = "error status"
    MALFORMED_RESPONSE = "malformed response"
    EMPTY_INPUT = "empty input"


class EmbeddingsUnavailable(KnowledgeError):
    """The endpoint could not give vectors; ``reason`` names the step that failed and
    ``detail`` (for the operator's message only) what was seen there."""

    def __init__(self, reason: DegradeReason, base_url: str, detail: str = "") -> None:
        said = f"{reason} ({detail})" if detail else str(reason)
        super().__init__(f"the embeddings endpoint {base_url} is unreachable: {said}")
        self.reason = reason


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class TextEmbedder(Protocol):
    """What indexing and search need of an embedder, endpoint or local."""

    # What the manifest records, so another embedder's vectors are refused rather than mixed.
    model: str
    # Who answers, for a sentence: "the embeddings endpoint <url>" or "the local embedder ...".
    source: str
    query_prefix: str
    document_prefix: str

    def probe(self) -> int: ...

    def embed_query(self, text: str) -> list[float]: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...

    def close(self) -> None: ...


def _local(settings: config.Embeddings) -> bool:
    from fisk_ai import config

    return settings.provider is config.EmbeddingsProvider.LOCAL


def open_embedder(settings: config.Embeddings) -> TextEmbedder:
    """The embedder ``settings`` asks for; nothing is loaded or contacted until it embeds."""
    if _local(settings):
        from fisk_ai.knowledge.local_embedder import LocalEmbedder

        return LocalEmbedder(settings)
    return Embedder(settings)


def manifest_model(settings: config.Embeddings) -> str:
    """The model name an index built with ``settings`` records in its manifest."""
    if _local(settings):
        from fisk_ai.knowledge.local_embedder import MANIFEST_MODEL

        return MANIFEST_MODEL
    return settings.model


def check_embeddings(settings: config.Embeddings) -> None:
    """Refuse an embeddings block that cannot work, naming the key: no base_url or no model, a
    base_url that is not http(s), plain http to anything but loopback (the chunks would cross
    the network in clear), or an api_key_env naming an unset variable; for the local embedder,
    a package it needs that is not installed."""
    if _local(settings):
        from fisk_ai.knowledge.local_embedder import check_installed

        check_installed()
        return
    for key, value in (("base_url", settings.base_url), ("model", settings.model)):
        if not value:
            raise KnowledgeError(
                f"{_KEY}.{key} is required when the embeddings block is present; set it or "
                "remove the block"
            )
    parts = urlsplit(settings.base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise KnowledgeError(
            f"{_KEY}.base_url must be an http(s) URL such as https://api.openai.com/v1, not "
            f"{settings.base_url!r}"
        )
    if parts.scheme == "http" and not _loopback(parts.hostname):
        raise KnowledgeError(
            f"{_KEY}.base_url must use https unless the endpoint is on loopback "
            f"(localhost, 127.0.0.1, ::1); {settings.base_url} would send the corpus in clear"
        )
    if settings.api_key_env and not os.environ.get(settings.api_key_env):
        raise KnowledgeError(
            f"{_KEY}.api_key_env names {settings.api_key_env}, which is not set; export it or "
            "remove the key"
        )


def document_input(document_prefix: str, heading_path: str, body: str) -> str:
    """What a chunk is embedded as: the document prefix with ``{title}`` replaced by the
    heading breadcrumb (``none`` at the top of a file), then the heading and the body."""
    prefix = document_prefix.replace("{title}", heading_path or "none")
    text = f"{heading_path}\n\n{body}" if heading_path else body
    return _clip(prefix + text, MAX_INPUT_BYTES)


def query_input(query_prefix: str, text: str) -> str:
    """What a search question is embedded as: the query prefix, then the question."""
    return _clip(query_prefix + text, MAX_QUERY_BYTES)


def _clip(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore")


def _normalized(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(value * value for value in vector))
    if norm == 0.0 or not math.isfinite(norm):
        raise ValueError("a zero or non-finite vector")
    return [value / norm for value in vector]


class _BadBatch(Exception):
    """One batch failed in a way a smaller batch might not."""

    def __init__(self, reason: DegradeReason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class Embedder:
    """One endpoint and model. Thread-safe: each request is its own connection."""

    def __init__(self, settings: config.Embeddings) -> None:
        self.base_url = settings.base_url.rstrip("/")
        self.model = settings.model
        self.source = f"the embeddings endpoint {redact_url(self.base_url)}"
        self.query_prefix = settings.query_prefix
        self.document_prefix = settings.document_prefix
        self.timeout = settings.timeout.total_seconds()
        self._api_key = os.environ.get(settings.api_key_env, "") if settings.api_key_env else ""
        self._opener: urllib.request.OpenerDirector | None = None

    def _http(self) -> urllib.request.OpenerDirector:
        if self._opener is None:
            import urllib.request

            self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        return self._opener

    def close(self) -> None:
        self._opener = None

    def probe(self) -> int:
        """The model's dimension, asked of the live endpoint."""
        return len(self.embed([PROBE_INPUT])[0])

    def embed_query(self, text: str) -> list[float]:
        return self.embed([query_input(self.query_prefix, text)])[0]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One normalized vector per text, in order; EmbeddingsUnavailable when any batch
        still fails at a single input."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH_SIZE):
            vectors += self._embed_halving(list(texts[start : start + BATCH_SIZE]))
        return vectors

    def _embed_halving(self, batch: list[str]) -> list[list[float]]:
        try:
            return self._request(batch)
        except _BadBatch as failure:
            if len(batch) == 1:
                raise EmbeddingsUnavailable(failure.reason, self.base_url, failure.detail) from None
            middle = len(batch) // 2
            return self._embed_halving(batch[:middle]) + self._embed_halving(batch[middle:])

    def _request(self, batch: list[str]) -> list[list[float]]:
        import urllib.error
        import urllib.request

        for text in batch:
            if not text:
                raise EmbeddingsUnavailable(DegradeReason.EMPTY_INPUT, self.base_url)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        # The scheme was checked when the configuration was: http(s) only.
        request = urllib.request.Request(  # noqa: S310
            f"{self.base_url}/embeddings",
            data=json.dumps({"input": batch, "model": self.model}).encode(),
            headers=headers,
            method="POST",
        )
        try:
            with self._http().open(request, timeout=self.timeout) as response:
                content = response.read(MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as exc:
            status = exc.code
            exc.close()
            if status >= _SERVER_ERROR or status == _TOO_MANY:
                raise _BadBatch(DegradeReason.ERROR_STATUS, f"HTTP {status}") from None
            raise EmbeddingsUnavailable(
                DegradeReason.ERROR_STATUS, self.base_url, f"HTTP {status}"
            ) from None
        except TimeoutError:
            raise EmbeddingsUnavailable(
                DegradeReason.TIMEOUT, self.base_url, f"after {self.timeout:g}s"
            ) from None
        except OSError as exc:
            if isinstance(getattr(exc, "reason", None), TimeoutError):
                raise EmbeddingsUnavailable(
                    DegradeReason.TIMEOUT, self.base_url, f"after {self.timeout:g}s"
                ) from None
            # Refused, reset, DNS: the endpoint is not there; halving would not help.
            raise EmbeddingsUnavailable(DegradeReason.CONNECT, self.base_url) from None
        if len(content) > MAX_RESPONSE_BYTES:
            raise _BadBatch(DegradeReason.MALFORMED_RESPONSE, "over 64 MiB")
        try:
            return _vectors(json.loads(content), len(batch))
        except (ValueError, TypeError, KeyError) as exc:
            raise _BadBatch(DegradeReason.MALFORMED_RESPONSE, str(exc)) from None


def _vectors(payload: Any, expected: int) -> list[list[float]]:
    """The vectors of a response, placed by each object's own index."""
    if not isinstance(payload, dict):
        raise ValueError("not a JSON object")
    if payload.get("error"):
        raise ValueError("an error object in the body")
    data = payload["data"]
    if not isinstance(data, list) or len(data) != expected:
        raise ValueError(f"{len(data) if isinstance(data, list) else 'no'} vectors for {expected}")
    placed: list[list[float] | None] = [None] * expected
    for item in data:
        index = item["index"]
        if not isinstance(index, int) or not 0 <= index < expected:
            raise ValueError(f"index {index!r} out of range")
        if placed[index] is not None:
            raise ValueError(f"index {index} twice")
        embedding = item["embedding"]
        if not isinstance(embedding, list) or not embedding:
            raise ValueError(f"an empty vector at index {index}")
        placed[index] = _normalized([float(value) for value in embedding])
    vectors = [vector for vector in placed if vector is not None]
    if len(vectors) != expected:
        raise ValueError("a gap in the indexes")
    dimension = len(vectors[0])
    if any(len(vector) != dimension for vector in vectors):
        raise ValueError("vectors of different lengths")
    return vectors
