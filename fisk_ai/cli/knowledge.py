"""`fisk knowledge` (aliases rag, k): build, search and look after the knowledge index.

Flag parsing and wiring only; the store is in fisk_ai.knowledge and the text in
fisk_ai.lineui.knowledge, both imported when a subcommand runs, so `fisk --help` never loads
SQLite.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fisk_ai.cli.flags import add_common_flags
from fisk_ai.errors import FiskError

if TYPE_CHECKING:
    from fisk_ai.config import Config
    from fisk_ai.knowledge.store import KnowledgeReader

DEFAULT_CONFIG = "agent.yaml"
STORE_DIR_ENV = "FISK_AI_STORE_DIR"


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "knowledge",
        aliases=["rag", "k"],
        help="build and search the knowledge index",
        description="Index the documents harness.knowledge.paths names into the knowledge "
        "store, search them as the agent would, and look after the index.",
    )
    parser.add_argument(
        "--config", default=DEFAULT_CONFIG, help="the agent.yaml (default agent.yaml)"
    )
    parser.add_argument(
        "--store-dir",
        default=os.environ.get(STORE_DIR_ENV, ""),
        help="an absolute directory a relative harness.knowledge.directory resolves under "
        f"(env {STORE_DIR_ENV})",
    )
    add_common_flags(parser)
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    index = actions.add_parser(
        "index",
        help="index files: add new, update changed, remove deleted",
        description="Bring the index in line with the files. Without paths, index "
        "harness.knowledge.paths and remove documents no longer there; with paths, index "
        "those and remove nothing.",
    )
    index.add_argument("paths", nargs="*", metavar="PATH")
    index.add_argument(
        "--reindex", action="store_true", help="drop the index and build it from scratch"
    )
    index.add_argument(
        "--dry-run", action="store_true", help="say what would change and write nothing"
    )
    index.set_defaults(handler=run_index)

    _register_watch_and_words(actions)
    _register_browse(actions)

    search = actions.add_parser("search", help="search as knowledge_search does")
    search.add_argument("query", nargs="+")
    search.add_argument("--top-k", type=int, default=0, help="how many hits (1 to 20)")
    search.add_argument("--full", action="store_true", help="print whole chunks")
    search.set_defaults(handler=run_search)

    match = actions.add_parser(
        "match", help="list the documents holding all the words, as knowledge_enumerate does"
    )
    match.add_argument("query", nargs="+")
    match.add_argument("--limit", type=int, default=20, help="at most this many (default 20)")
    match.add_argument("--all", action="store_true", help="every matching document")
    match.add_argument("--sort", choices=("matches", "path"), default="matches")
    match.add_argument("--paths-only", action="store_true", help="print paths only")
    match.add_argument("--count", action="store_true", help="print only how many matched")
    match.add_argument("--exit-code", action="store_true", help="exit 1 when no document matched")
    match.set_defaults(handler=run_match)

    show = actions.add_parser("show", help="print one chunk by its citation (path#chunk)")
    show.add_argument("citation", metavar="PATH#N")
    show.set_defaults(handler=run_show)

    rm = actions.add_parser("rm", help="remove documents (a path, or a directory's documents)")
    rm.add_argument("sources", nargs="+", metavar="SOURCE")
    rm.set_defaults(handler=run_rm)

    reset = actions.add_parser("reset", help="empty the index")
    reset.add_argument("--force", action="store_true", help="really delete every document")
    reset.set_defaults(handler=run_reset)

    rebuild = actions.add_parser(
        "rebuild", help="re-derive the full-text indexes from the stored chunks"
    )
    rebuild.set_defaults(handler=run_rebuild)

    actions.add_parser("sources", help="list indexed documents").set_defaults(handler=run_sources)
    actions.add_parser("stats", help="count what the index holds").set_defaults(handler=run_stats)
    actions.add_parser("doctor", help="check the store").set_defaults(handler=run_doctor)


def _register_watch_and_words(actions: Any) -> None:
    watch = actions.add_parser(
        "watch",
        help="index, then keep the index in line with the files as they change",
        description="Index the paths, then watch them: a created, edited or deleted file is "
        "reflected in the index within a second. Holds the writer lock until interrupted.",
    )
    watch.add_argument("paths", nargs="*", metavar="PATH")
    watch.set_defaults(handler=run_watch)

    words = actions.add_parser(
        "words", help="list the indexed words (the exact vocabulary) with their document counts"
    )
    words.add_argument("pattern", nargs="?", default="", help="a substring the word must hold")
    words.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    words.add_argument("--min-docs", type=int, default=1, help="in at least this many documents")
    words.add_argument("--max-docs", type=int, default=0, help="in at most this many (0: any)")
    words.add_argument("--field", choices=("body", "heading"), default=None)
    words.add_argument("--sort", choices=("docs", "word", "stem"), default="docs")
    words.add_argument("--words-only", action="store_true", help="print the words only")
    words.add_argument("--count", action="store_true", help="print only how many words")
    words.add_argument("--exit-code", action="store_true", help="exit 1 when no word matched")
    words.set_defaults(handler=run_words)


def _register_browse(actions: Any) -> None:
    browse = actions.add_parser(
        "browse",
        help="explore the index full screen: sources, search, match, chunks in context",
        description="Open the knowledge explorer on a terminal: the indexed documents and their "
        "state, a search box showing each hit's tier, score and citation, the match view, and "
        "each chunk among its neighbours. Reads the index and never writes it.",
    )
    browse.add_argument(
        "--top-k", type=int, default=10, help="hits per search (1 to 20, default 10)"
    )
    browse.set_defaults(handler=run_browse)


def run_browse(args: argparse.Namespace) -> int:
    from fisk_ai.knowledge.access import KnowledgeIndex, refuse_unbuilt_keys

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise FiskError(
            "fisk knowledge browse needs a terminal on stdin and stdout; use fisk knowledge "
            "search, match or sources to read the index as lines"
        )
    if not 1 <= args.top_k <= 20:
        raise FiskError(f"--top-k must be between 1 and 20, not {args.top_k}")
    cfg = _config(args)
    refuse_unbuilt_keys(cfg)
    index = KnowledgeIndex(_directory(args, cfg), cfg.harness.knowledge.embeddings)
    from fisk_ai.workstation.knowledge_app import KnowledgeApp

    try:
        KnowledgeApp(index, top_k=args.top_k).run()
    finally:
        index.close()
    return 0


def _config(args: argparse.Namespace) -> Config:
    from fisk_ai.config import Mode, load

    cfg = load(args.config, Mode.LENIENT)
    if not cfg.harness.knowledge.enabled:
        raise FiskError(
            f"{args.config} does not enable knowledge; set harness.knowledge.enabled: true"
        )
    return cfg


def _directory(args: argparse.Namespace, cfg: Config) -> Path:
    from fisk_ai.knowledge.access import knowledge_directory

    if args.store_dir and not Path(args.store_dir).is_absolute():
        raise FiskError(f"--store-dir must be an absolute path, not {args.store_dir}")
    return knowledge_directory(cfg, args.store_dir or None)


def _reader(args: argparse.Namespace) -> KnowledgeReader:
    """The index opened read-only; an unbuilt one is an error, so a pipe never reads "not
    built" as "nothing found"."""
    from fisk_ai.knowledge.access import refuse_unbuilt_keys
    from fisk_ai.knowledge.store import KnowledgeReader

    cfg = _config(args)
    refuse_unbuilt_keys(cfg)
    reader = KnowledgeReader(_directory(args, cfg))
    if not reader.open():
        raise FiskError(
            f"no knowledge index is built at {reader.paths.directory}; build it with "
            "fisk knowledge index"
        )
    return reader


def _roots(args: argparse.Namespace, cfg: Config) -> list[str]:
    roots = list(args.paths) or list(cfg.harness.knowledge.paths)
    if not roots:
        raise FiskError(
            "harness.knowledge.paths is empty; list the directories to index there, or pass "
            f"them to fisk knowledge {'watch' if args.handler is run_watch else 'index'}"
        )
    return roots


def _vector_tier(cfg: Config) -> tuple[Any, Any]:
    """The embedder and the manifest it asks for, the dimension probed from the live endpoint
    before anything is written (so an unreachable endpoint leaves the index whole); (None,
    None) without embeddings."""
    from fisk_ai.knowledge.access import wanted_manifest
    from fisk_ai.knowledge.embeddings import open_embedder

    settings = cfg.harness.knowledge.embeddings
    if settings is None:
        return None, None
    embedder = open_embedder(settings)
    return embedder, wanted_manifest(settings, embedder.probe())


def _open_writer(args: argparse.Namespace, cfg: Config, *, rebuild: bool) -> tuple[Any, Any]:
    """The writer with its vector tier planned, and the ``embed`` its passes use."""
    from fisk_ai.knowledge.indexing import vector_embed
    from fisk_ai.knowledge.store import KnowledgeWriter

    embedder, wanted = _vector_tier(cfg)
    writer = KnowledgeWriter(_directory(args, cfg), rebuild=rebuild)
    writer.open()
    try:
        writer.plan_vectors(wanted)
    except BaseException:
        writer.close()
        raise
    return writer, None if embedder is None else vector_embed(embedder)


def run_index(args: argparse.Namespace) -> int:
    from fisk_ai.knowledge.access import refuse_unbuilt_keys
    from fisk_ai.knowledge.indexing import index_files, walk
    from fisk_ai.knowledge.store import KnowledgeReader, stored_documents
    from fisk_ai.lineui.knowledge import ProgressLine

    cfg = _config(args)
    refuse_unbuilt_keys(cfg)
    directory = _directory(args, cfg)
    roots = _roots(args, cfg)
    files = list(walk(roots, directory))
    reconcile = not args.paths
    progress = ProgressLine()
    if args.dry_run:
        stored = {}
        reader = KnowledgeReader(directory)
        if not args.reindex and reader.open():
            with reader.use() as connection:
                stored = stored_documents(connection)
            reader.close()
        report = index_files(None, stored, files, reconcile=reconcile)
        print(report.line(dry_run=True))
        return 0
    writer, embed = _open_writer(args, cfg, rebuild=args.reindex)
    with contextlib.closing(writer):
        try:
            report = index_files(
                writer,
                writer.documents(),
                files,
                reconcile=reconcile,
                progress=progress,
                embed=embed,
            )
        finally:
            progress.clear()
    print(report.line())
    return 0


def run_watch(args: argparse.Namespace) -> int:
    from fisk_ai.knowledge.access import refuse_unbuilt_keys
    from fisk_ai.knowledge.watch import Watcher

    cfg = _config(args)
    refuse_unbuilt_keys(cfg)
    roots = _roots(args, cfg)
    writer, embed = _open_writer(args, cfg, rebuild=False)
    with contextlib.closing(writer):
        watcher = Watcher(writer, roots, reconcile=not args.paths, embed=embed)
        print(f"watching {', '.join(roots)}; interrupt to stop", file=sys.stderr, flush=True)
        watcher.run(
            lambda report: print(report.line(), flush=True),
            on_warning=lambda message: print(f"warning: {message}", file=sys.stderr),
        )
    return 0


def run_words(args: argparse.Namespace) -> int:
    from fisk_ai.knowledge.search import vocabulary
    from fisk_ai.lineui.knowledge import word_lines

    if args.limit < 1 or args.min_docs < 1 or args.max_docs < 0:
        raise FiskError("--limit and --min-docs must be at least 1, --max-docs at least 0")
    reader = _reader(args)
    with reader.use() as connection:
        found = vocabulary(
            connection,
            args.pattern,
            field=args.field,
            min_docs=args.min_docs,
            max_docs=args.max_docs,
        )
    reader.close()
    if args.sort == "word":
        found.sort(key=lambda word: word.word)
    elif args.sort == "stem":
        found.sort(key=lambda word: (word.stem, word.word))
    if args.count:
        print(len(found))
    elif found:
        shown = found[: args.limit]
        sys.stdout.write(word_lines(shown, words_only=args.words_only))
        if len(shown) < len(found):
            print(f"{len(found) - len(shown)} more; raise --limit to list them", file=sys.stderr)
    return 1 if args.exit_code and not found else 0


def run_search(args: argparse.Namespace) -> int:
    from fisk_ai.knowledge.access import KnowledgeIndex
    from fisk_ai.lineui.knowledge import search_lines

    cfg = _config(args)
    top_k = args.top_k or cfg.harness.knowledge.top_k
    if not 1 <= top_k <= 20:
        raise FiskError(f"--top-k must be between 1 and 20, not {args.top_k}")
    reader = _reader(args)
    reader.close()
    index = KnowledgeIndex(reader.paths.directory, cfg.harness.knowledge.embeddings)
    try:
        answer = index.search_blocking(" ".join(args.query), top_k)
    finally:
        index.close()
    print(answer.tier, file=sys.stderr)
    if answer.status.value == "index_empty":
        print("the knowledge index holds no documents", file=sys.stderr)
        return 0
    if not answer.hits:
        print("no matches", file=sys.stderr)
        return 0
    sys.stdout.write(search_lines(answer, full=args.full))
    return 0


def run_match(args: argparse.Namespace) -> int:
    from fisk_ai.knowledge.search import enumerate_documents
    from fisk_ai.lineui.knowledge import match_lines

    if args.limit < 1:
        raise FiskError(f"--limit must be at least 1, not {args.limit}")
    reader = _reader(args)
    with reader.use() as connection:
        answer = enumerate_documents(connection, " ".join(args.query))
    reader.close()
    for report in answer.terms:
        if report.not_queried:
            print(f"not queried: {report.term} ({report.not_queried})", file=sys.stderr)
    documents = list(answer.documents)
    if args.sort == "path":
        documents.sort(key=lambda document: document.path)
    if args.count:
        print(len(documents))
    else:
        shown = documents if args.all else documents[: args.limit]
        if shown:
            sys.stdout.write(match_lines(shown, paths_only=args.paths_only))
        if len(shown) < len(documents):
            print(f"{len(documents) - len(shown)} more; pass --all to list them", file=sys.stderr)
    return 1 if args.exit_code and not documents else 0


def run_show(args: argparse.Namespace) -> int:
    from fisk_ai.knowledge.search import chunk_at, parse_citation
    from fisk_ai.lineui.knowledge import chunk_text

    path, ordinal = parse_citation(args.citation)
    reader = _reader(args)
    with reader.use() as connection:
        found = chunk_at(connection, path, ordinal)
    reader.close()
    if found is None:
        raise FiskError(
            f"{args.citation} names no chunk in the index; fisk knowledge sources lists the "
            "documents"
        )
    sys.stdout.write(chunk_text(*found))
    return 0


def _writer(args: argparse.Namespace, *, rebuild: bool = False) -> Any:
    from fisk_ai.knowledge.store import KnowledgeWriter

    cfg = _config(args)
    return KnowledgeWriter(_directory(args, cfg), rebuild=rebuild)


def run_rm(args: argparse.Namespace) -> int:
    with _writer(args) as writer:
        stored = writer.documents()
        doomed: list[str] = []
        for source in args.sources:
            prefix = source.rstrip("/") + "/"
            matched = [path for path in stored if path == source or path.startswith(prefix)]
            if not matched:
                raise FiskError(
                    f"nothing is indexed under {source}; fisk knowledge sources lists the documents"
                )
            doomed += matched
        removed = writer.remove_documents(sorted(set(doomed)))
    print(f"removed {removed} documents")
    return 0


def run_reset(args: argparse.Namespace) -> int:
    cfg = _config(args)
    directory = _directory(args, cfg)
    if not args.force:
        raise FiskError(
            f"reset deletes every document indexed in {directory}; pass --force to do it"
        )
    from fisk_ai.knowledge.store import KnowledgeWriter

    with KnowledgeWriter(directory, rebuild=True):
        pass
    print(f"reset the knowledge index in {directory}")
    return 0


def run_rebuild(args: argparse.Namespace) -> int:
    with _writer(args) as writer:
        writer.rebuild()
    print("rebuilt the full-text indexes from the stored chunks")
    return 0


def run_sources(args: argparse.Namespace) -> int:
    from fisk_ai.knowledge.search import sources
    from fisk_ai.lineui.knowledge import source_lines

    reader = _reader(args)
    with reader.use() as connection:
        found = sources(connection)
    reader.close()
    if not found:
        print("no documents are indexed", file=sys.stderr)
        return 0
    sys.stdout.write(source_lines(found))
    return 0


def run_stats(args: argparse.Namespace) -> int:
    from fisk_ai.knowledge import FORMAT_VERSION
    from fisk_ai.knowledge.search import counts
    from fisk_ai.knowledge.store import read_manifest

    reader = _reader(args)
    with reader.use() as connection:
        held = counts(connection)
        words = int(connection.execute("SELECT count(*) FROM chunks_vocab").fetchone()[0])
        manifest = read_manifest(connection)
    reader.close()
    size = sum(
        path.stat().st_size
        for path in (reader.paths.database, *reader.paths.sidecars)
        if path.exists()
    )
    rows = [
        ("Store", str(reader.paths.database)),
        ("Format", f"version {FORMAT_VERSION}"),
        (
            "Tier",
            "lexical (FTS5)"
            if manifest is None
            else f"hybrid (FTS5 + vectors, RRF), model={manifest.model} dim={manifest.dimension}",
        ),
        ("Documents", str(held.documents)),
        ("Chunks", str(held.chunks)),
        ("Words", str(words)),
        ("Size", f"{size / 1024:.0f} KiB"),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label.rjust(width)}: {value}")
    return 0


def run_doctor(args: argparse.Namespace) -> int:
    from fisk_ai.knowledge.doctor import diagnose
    from fisk_ai.lineui.knowledge import doctor_lines

    cfg = _config(args)
    checks = diagnose(
        _directory(args, cfg),
        cfg.harness.knowledge.paths,
        embeddings=cfg.harness.knowledge.embeddings,
    )
    sys.stdout.write(doctor_lines(checks))
    return 1 if any(check.fatal for check in checks) else 0
