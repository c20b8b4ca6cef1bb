"""`fisk knowledge doctor`: what is true of a knowledge store, check by check.

Each check passes, fails, or did not run; a check that did not run is never reported as
passing. Only a fatal failure (no FTS5, a database of another format, indexes that drifted from
their chunks) makes the command fail.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fisk_ai.knowledge.errors import FormatMismatch, KnowledgeError, KnowledgeLocked

__all__ = ["Check", "CheckState", "diagnose"]


class CheckState(enum.Enum):
    PASSED = "ok"
    FAILED = "FAIL"
    NOT_RUN = "skip"


@dataclass(frozen=True)
class Check:
    name: str
    state: CheckState
    detail: str
    fatal: bool = False


def _fts5_check() -> Check:
    from fisk_ai.knowledge.store import connect, database_error

    scratch = connect(":memory:")
    try:
        scratch.execute("CREATE VIRTUAL TABLE probe USING fts5(body, tokenize='porter unicode61')")
    except database_error() as exc:
        return Check("FTS5 compiled in", CheckState.FAILED, str(exc), fatal=True)
    finally:
        scratch.close()
    return Check("FTS5 compiled in", CheckState.PASSED, "porter and unicode61 tokenizers")


def _store_checks(directory: Path) -> list[Check]:
    from fisk_ai.knowledge.store import KnowledgeReader, KnowledgeWriter

    checks: list[Check] = []
    reader = KnowledgeReader(directory)
    try:
        built = reader.open()
    except FormatMismatch as exc:
        return [Check("Format", CheckState.FAILED, str(exc), fatal=True)]
    except KnowledgeError as exc:
        return [Check("Store present", CheckState.FAILED, str(exc))]
    if not built:
        checks.append(
            Check("Store present", CheckState.FAILED, f"no index at {reader.paths.database}")
        )
        for name in ("Format", "WAL journal mode", "Index writable", "Index integrity"):
            checks.append(Check(name, CheckState.NOT_RUN, "no index is built"))
        return checks
    checks.append(Check("Store present", CheckState.PASSED, str(reader.paths.database)))
    checks.append(Check("Format", CheckState.PASSED, "format version 2"))
    with reader.use() as connection:
        mode = str(connection.execute("PRAGMA journal_mode").fetchone()[0])
    reader.close()
    checks.append(
        Check(
            "WAL journal mode",
            CheckState.PASSED if mode.lower() == "wal" else CheckState.FAILED,
            f"journal_mode={mode}",
        )
    )
    if not os.access(directory, os.W_OK):
        checks.append(Check("Index writable", CheckState.FAILED, f"{directory} is not writable"))
        checks.append(Check("Index integrity", CheckState.NOT_RUN, "needs the writer"))
        return checks
    try:
        with KnowledgeWriter(directory) as writer:
            checks.append(Check("Index writable", CheckState.PASSED, "writer lock taken"))
            problems = writer.integrity_problems()
    except KnowledgeLocked as exc:
        checks.append(Check("Index writable", CheckState.FAILED, str(exc)))
        checks.append(Check("Index integrity", CheckState.NOT_RUN, "another writer holds the lock"))
        return checks
    if problems:
        checks.append(
            Check(
                "Index integrity",
                CheckState.FAILED,
                "; ".join(problems) + "; run fisk knowledge rebuild",
                fatal=True,
            )
        )
    else:
        checks.append(Check("Index integrity", CheckState.PASSED, "both FTS indexes match"))
    return checks


def diagnose(directory: Path, paths: Sequence[str], *, embeddings: bool) -> list[Check]:
    """Every check of the store in ``directory`` whose corpus is ``paths``."""
    checks = [_fts5_check()]
    checks += _store_checks(directory)
    if not paths:
        checks.append(Check("Index paths", CheckState.NOT_RUN, "harness.knowledge.paths is empty"))
    for path in paths:
        exists = Path(path).exists()
        checks.append(
            Check(
                f"Index path {path}",
                CheckState.PASSED if exists else CheckState.FAILED,
                "found" if exists else "does not exist",
            )
        )
    checks.append(
        Check(
            "Embeddings",
            CheckState.FAILED if embeddings else CheckState.PASSED,
            "configured, but not built yet in this fisk-ai"
            if embeddings
            else "not configured (lexical-only)",
        )
    )
    return checks
