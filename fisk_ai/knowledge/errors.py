"""The failures of the knowledge store, each a sentence an operator (or the model) can act on."""

from __future__ import annotations

from fisk_ai.errors import FiskError

REINDEX_COMMAND = "fisk knowledge index --reindex"


class KnowledgeError(FiskError):
    """The knowledge store cannot do what was asked; the message says why and what to change."""


class KnowledgeLocked(KnowledgeError):
    """Another process holds the writer lock of this knowledge store."""


class FormatMismatch(KnowledgeError):
    """The database was written by another format version, or its tables are not the shape
    this version writes; nothing reads or writes it until it is rebuilt."""


class DamagedIndex(KnowledgeError):
    """SQLite cannot read the database whole (cut short, garbage pages, a bad WAL). Rebuilding
    the full-text indexes would build them over the damage, so the way out is building the
    index again from the files."""


def damaged_index(database: object, problem: str) -> DamagedIndex:
    """The one sentence for a damaged database, naming the command that builds it again."""
    return DamagedIndex(
        f"the knowledge index {database} is damaged ({problem}); build it again from the files "
        f"with `{REINDEX_COMMAND}`"
    )


class QueryError(KnowledgeError):
    """A query the knowledge tools cannot compile, said so the model can rewrite it."""
