"""`fisk knowledge doctor`: what is true of a knowledge store, check by check.

Each check passes, fails, or did not run; a check that did not run is never reported as
passing. Only a fatal failure makes the command fail: no FTS5, a database of another format or
built with other embeddings (another model, prefix or dimension than the configuration's: every
search would be refused), or indexes that drifted from their chunks. An embedder that does not
answer fails its check without failing the command, because searches then degrade to the
lexical tier rather than stop.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fisk_ai.knowledge import FORMAT_VERSION
from fisk_ai.knowledge.errors import (
    DamagedIndex,
    FormatMismatch,
    KnowledgeError,
    KnowledgeLocked,
    damaged_index,
)

if TYPE_CHECKING:
    from fisk_ai import config

__all__ = ["Check", "CheckState", "diagnose"]

_DATABASE_INTEGRITY = "Database integrity"


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


_INTEGRITY_ROWS = 5
"""How many of ``PRAGMA integrity_check``'s findings the check quotes; one names the damage."""


def _store_checks(directory: Path) -> list[Check]:
    from fisk_ai.knowledge.store import KnowledgeReader

    reader = KnowledgeReader(directory)
    try:
        built = reader.open()
    except FormatMismatch as exc:
        return [Check("Format", CheckState.FAILED, str(exc), fatal=True)]
    except DamagedIndex as exc:
        return [
            Check("Store present", CheckState.PASSED, str(reader.paths.database)),
            Check(_DATABASE_INTEGRITY, CheckState.FAILED, str(exc), fatal=True),
        ]
    except KnowledgeError as exc:
        return [Check("Store present", CheckState.FAILED, str(exc))]
    if not built:
        checks = [Check("Store present", CheckState.FAILED, f"no index at {reader.paths.database}")]
        for name in ("Format", "WAL journal mode", "Index writable", "Index integrity"):
            checks.append(Check(name, CheckState.NOT_RUN, "no index is built"))
        return checks
    checks = [
        Check("Store present", CheckState.PASSED, str(reader.paths.database)),
        Check("Format", CheckState.PASSED, f"format version {FORMAT_VERSION}"),
    ]
    damage = ""
    try:
        with reader.use() as connection:
            rows = connection.execute(f"PRAGMA integrity_check({_INTEGRITY_ROWS})").fetchall()
            mode = str(connection.execute("PRAGMA journal_mode").fetchone()[0])
    except DamagedIndex as exc:
        damage, mode = str(exc), ""
    else:
        # A finding may run over lines ("*** in database main ***" and then the pages).
        findings = [line for row in rows for line in str(row[0]).splitlines() if line.strip()]
        if findings != ["ok"]:
            damage = str(damaged_index(reader.paths.database, "; ".join(findings)))
    finally:
        reader.close()
    if damage:
        checks.append(Check(_DATABASE_INTEGRITY, CheckState.FAILED, damage, fatal=True))
        for name in ("WAL journal mode", "Index writable", "Index integrity"):
            checks.append(Check(name, CheckState.NOT_RUN, "the database is damaged"))
        return checks
    checks.append(
        Check(_DATABASE_INTEGRITY, CheckState.PASSED, "PRAGMA integrity_check found no damage")
    )
    checks.append(
        Check(
            "WAL journal mode",
            CheckState.PASSED if mode.lower() == "wal" else CheckState.FAILED,
            f"journal_mode={mode}",
        )
    )
    return checks + _writer_checks(directory)


def _writer_checks(directory: Path) -> list[Check]:
    from fisk_ai.knowledge.store import KnowledgeWriter

    if not os.access(directory, os.W_OK):
        return [
            Check("Index writable", CheckState.FAILED, f"{directory} is not writable"),
            Check("Index integrity", CheckState.NOT_RUN, "needs the writer"),
        ]
    checks: list[Check] = []
    try:
        with KnowledgeWriter(directory) as writer:
            checks.append(Check("Index writable", CheckState.PASSED, "writer lock taken"))
            problems = writer.integrity_problems()
    except KnowledgeLocked as exc:
        checks.append(Check("Index writable", CheckState.FAILED, str(exc)))
        checks.append(Check("Index integrity", CheckState.NOT_RUN, "another writer holds the lock"))
        return checks
    except DamagedIndex as exc:
        # Damage PRAGMA integrity_check did not see, met as the writer opened or checked.
        detail = str(exc)
        checks.append(Check("Index integrity", CheckState.FAILED, detail, fatal=True))
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


_REACHABLE = "Embeddings reachable"
_MANIFEST = "Manifest matches model"


def _embedder_check(settings: config.Embeddings) -> tuple[Check, int]:
    """Whether the configured embedder answers, and the dimension it answered with (0 when it
    did not)."""
    from fisk_ai.knowledge.embeddings import open_embedder

    embedder = open_embedder(settings)
    try:
        dimension = embedder.probe()
    except KnowledgeError as exc:
        # Unreachable, a refused request, or the local embedder's packages missing.
        return Check(_REACHABLE, CheckState.FAILED, str(exc)), 0
    finally:
        embedder.close()
    detail = f"{embedder.source} answered with {dimension} dimensions"
    return Check(_REACHABLE, CheckState.PASSED, detail), dimension


def _manifest_check(directory: Path, settings: config.Embeddings, dimension: int) -> Check:
    """The index's manifest against the configured model and prefixes, and against the
    dimension the embedder answered with when it answered."""
    from fisk_ai.knowledge.access import wanted_manifest
    from fisk_ai.knowledge.store import KnowledgeReader, check_manifest

    reader = KnowledgeReader(directory)
    try:
        try:
            built = reader.open()
        except KnowledgeError:
            return Check(_MANIFEST, CheckState.NOT_RUN, "the index cannot be opened")
        if not built:
            return Check(_MANIFEST, CheckState.NOT_RUN, "no index is built")
        with reader.use() as connection:
            manifest = check_manifest(
                connection,
                reader.paths.database,
                wanted_manifest(settings, dimension),
                writing=False,
            )
    except FormatMismatch as exc:
        return Check(_MANIFEST, CheckState.FAILED, str(exc), fatal=True)
    except DamagedIndex:
        return Check(_MANIFEST, CheckState.NOT_RUN, "the index cannot be read")
    finally:
        reader.close()
    if manifest is None:
        return Check(_MANIFEST, CheckState.NOT_RUN, "the index holds no chunks, so no vectors yet")
    detail = f"model={manifest.model} dim={manifest.dimension}"
    if not dimension:
        detail += "; the dimension was not compared, since the embedder did not answer"
    return Check(_MANIFEST, CheckState.PASSED, detail)


def _embeddings_checks(directory: Path, settings: config.Embeddings | None) -> list[Check]:
    if settings is None:
        return [Check("Embeddings", CheckState.PASSED, "not configured (lexical-only)")]
    reachable, dimension = _embedder_check(settings)
    return [reachable, _manifest_check(directory, settings, dimension)]


def diagnose(
    directory: Path, paths: Sequence[str], *, embeddings: config.Embeddings | None
) -> list[Check]:
    """Every check of the store in ``directory`` whose corpus is ``paths``, with the vector
    tier ``embeddings`` configures (None: lexical-only)."""
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
    return checks + _embeddings_checks(directory, embeddings)
