"""Bringing the index in line with the files: walk, classify, chunk, store, reconcile.

A document is cited by the path it was walked at, root included (``docs/install.md`` when the
root is ``docs``), so two roots never collide and the citation tells the operator where to look.
A file whose content hash matches the stored one is skipped with its chunks kept; a changed one
has its chunks replaced in one short transaction; and, when the walk covered the configured
paths and saw at least one file, a document no longer found is removed (so an early walk
failure can never empty the index).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fisk_ai import telemetry
from fisk_ai.knowledge.chunking import split_into_chunks
from fisk_ai.knowledge.errors import KnowledgeError
from fisk_ai.knowledge.store import KnowledgeWriter, NewChunk, StoredDocument

if TYPE_CHECKING:
    from fisk_ai.knowledge.embeddings import TextEmbedder

__all__ = [
    "INDEXED_SUFFIXES",
    "MAX_FILE_BYTES",
    "IndexReport",
    "ListedPath",
    "Progress",
    "changed_on_disk",
    "eligible_in_root",
    "index_files",
    "vector_embed",
    "walk",
]

INDEXED_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".text"})
MAX_FILE_BYTES = 512 * 1024
# A directory of this name beside the corpus is usually an agent's memory: its notes are the
# model's own, not the operator's documents, so it is never indexed.
_MEMORY_DIRECTORY = "memory"

Progress = Callable[[int, int, str], None]
# Gives one vector per chunk, in order; called outside the write transaction, so the slow
# network call never holds the writer's transaction open.
Embed = Callable[[Sequence[NewChunk]], list[list[float]]]


@dataclass
class IndexReport:
    added: int = 0
    updated: int = 0
    skipped: int = 0
    removed: int = 0
    files: int = 0
    chunks: int = 0
    # Chunks embedded by this pass; None when the index has no vector tier.
    embeddings: int | None = None

    def line(self, *, dry_run: bool = False) -> str:
        lead = "would index" if dry_run else "indexed"
        vectors = "" if self.embeddings is None else f", {self.embeddings} embeddings"
        return (
            f"{lead}: added={self.added} updated={self.updated} skipped={self.skipped} "
            f"removed={self.removed} ({self.files} files, {self.chunks} chunks{vectors})"
        )


class ListedPath(type(Path())):  # type: ignore[misc]
    """A path as ``walk`` listed it, with the identity (device, inode) the file had then, so
    the read can tell the file it opens is the one that was listed."""

    identity: tuple[int, int] | None = None


def _listed(path: Path) -> Path:
    try:
        info = path.lstat()
    except OSError:
        return path
    listed = ListedPath(path)
    listed.identity = (info.st_dev, info.st_ino)
    return listed


def _citation_path(path: Path) -> str:
    text = path.as_posix()
    return text[2:] if text.startswith("./") else text


def _eligible(path: Path) -> bool:
    if path.suffix.lower() not in INDEXED_SUFFIXES or path.is_symlink():
        return False
    try:
        return path.is_file() and path.stat().st_size <= MAX_FILE_BYTES
    except OSError:
        return False


def eligible_in_root(path: Path, root: Path, store_directory: Path) -> bool:
    """Whether ``path``, somewhere under ``root``, is a file the walk would index: the same
    rules as ``walk``, applied to one path (what the watcher sees)."""
    try:
        relative = path.relative_to(root)
    except ValueError:
        return False
    if any(part.startswith(".") or part == _MEMORY_DIRECTORY for part in relative.parts[:-1]):
        return False
    store = store_directory.resolve()
    parent = path.parent
    while True:
        if parent.is_symlink() or parent.resolve() == store:
            return False
        if parent in (root, parent.parent):
            break
        parent = parent.parent
    return _eligible(path)


def vector_embed(embedder: TextEmbedder) -> Embed:
    """The ``embed`` of ``index_files`` for the configured embedder (endpoint or local): each
    chunk as the document prefix, its heading and its body."""
    from fisk_ai.knowledge.embeddings import document_input

    def embed(chunks: Sequence[NewChunk]) -> list[list[float]]:
        with telemetry.current().embedding_batch(embedder.model, len(chunks)):
            return embedder.embed(
                [
                    document_input(embedder.document_prefix, chunk.heading_path, chunk.body)
                    for chunk in chunks
                ]
            )

    return embed


def walk(roots: Sequence[str], store_directory: Path) -> Iterator[Path]:
    """Every file under ``roots`` that is indexed: markdown and text files of at most 512 KiB,
    outside dot directories, directories named memory, the store's own directory and symlinks."""
    store = store_directory.resolve()
    for root in roots:
        top = Path(root)
        if top.is_symlink() or not top.exists():
            raise KnowledgeError(
                f"knowledge path {root} does not exist or is a symlink; fix "
                "harness.knowledge.paths or the path given to fisk knowledge index"
            )
        if top.is_file():
            if _eligible(top):
                yield _listed(top)
            continue
        for directory, subdirectories, files in os.walk(top, followlinks=False):
            here = Path(directory)
            subdirectories[:] = sorted(
                name
                for name in subdirectories
                if not name.startswith(".")
                and name != _MEMORY_DIRECTORY
                and not (here / name).is_symlink()
                and (here / name).resolve() != store
            )
            for name in sorted(files):
                path = here / name
                if _eligible(path):
                    yield _listed(path)


def _read(path: Path) -> tuple[str, str, int] | None:
    """The text, its sha256 and the mtime in whole seconds (as the Go original stores it); None
    for a file that is not UTF-8 or vanished, or that is no longer what the walk listed.

    The tree may change between the walk and the read, so the read trusts nothing the walk saw:
    the open follows no symlink and never blocks (a FIFO put in the file's place is opened and
    refused at once), the opened file must be a regular file and, for a path the walk listed,
    the very file it listed, and at most ``MAX_FILE_BYTES`` are read, so a file grown past the
    cap is skipped as the walk would have skipped it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        opened = os.fstat(fd)
        listed = path.identity if isinstance(path, ListedPath) else None
        if not stat.S_ISREG(opened.st_mode) or (
            listed is not None and listed != (opened.st_dev, opened.st_ino)
        ):
            return None
        data = _read_at_most(fd, MAX_FILE_BYTES + 1)
        mtime = opened.st_mtime_ns // 1_000_000_000
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text, hashlib.sha256(data).hexdigest(), mtime


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0 and (chunk := os.read(fd, remaining)):
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def changed_on_disk(document: StoredDocument) -> str:
    """Why the file behind an indexed document no longer matches it, as a few words ("changed
    since indexed", "gone"), or "" when it still does. The path resolves against the working
    directory, as the walk that indexed it did. The content hash decides: the stored mtime has
    whole seconds only, so an edit within the second it was indexed keeps the same mtime."""
    path = Path(document.path)
    read = _read(path)
    if read is None:
        return "gone"
    return "" if read[1] == document.hash else "changed since indexed"


def index_files(
    writer: KnowledgeWriter | None,
    stored: Mapping[str, StoredDocument],
    files: Sequence[Path],
    *,
    reconcile: bool,
    progress: Progress | None = None,
    embed: Embed | None = None,
) -> IndexReport:
    """Index ``files`` against what is ``stored``; with no ``writer`` nothing is written and the
    report says what would change (a dry run). ``reconcile`` removes the stored documents the
    walk did not see, when it saw at least one file. ``embed`` gives the vectors of a changed
    document's chunks when the index has a vector tier."""
    report = IndexReport(embeddings=None if embed is None else 0)
    seen: set[str] = set()
    total = len(files)
    for done, path in enumerate(files, 1):
        cited = _citation_path(path)
        if progress is not None:
            progress(done, total, cited)
        read = _read(path)
        if read is None:
            continue
        text, digest, mtime = read
        seen.add(cited)
        report.files += 1
        previous = stored.get(cited)
        if previous is not None and previous.hash == digest:
            report.skipped += 1
            report.chunks += previous.chunks
            continue
        chunked = split_into_chunks(text)
        report.chunks += len(chunked.chunks)
        if previous is None:
            report.added += 1
        else:
            report.updated += 1
        if writer is not None:
            chunks = [NewChunk(chunk.heading_path, chunk.body) for chunk in chunked.chunks]
            vectors = embed(chunks) if embed is not None and chunks else None
            if vectors is not None and report.embeddings is not None:
                report.embeddings += len(vectors)
            writer.replace_document(
                cited,
                title=chunked.title,
                mtime=mtime,
                digest=digest,
                chunks=chunks,
                vectors=vectors,
            )
    if reconcile and seen:
        gone = sorted(set(stored) - seen)
        report.removed = len(gone) if writer is None else writer.remove_documents(gone)
    return report
