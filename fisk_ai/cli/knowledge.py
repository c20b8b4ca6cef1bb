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
    from datetime import timedelta

    from fisk_ai.config import Config
    from fisk_ai.knowledge.store import KnowledgeReader

DEFAULT_CONFIG = "agent.yaml"
STORE_DIR_ENV = "FISK_AI_STORE_DIR"
# Stands in front of a query word that starts with a dash while the arguments are parsed; no
# argument can hold a NUL byte, so none is mistaken for one.
_DASH_WORD = "\0"


class _ActionParser(argparse.ArgumentParser):
    """The parser of one `fisk knowledge` action. When ``dash_words`` is set, a word that
    starts with a single dash and is no option of the action (``match retention -draft``) is
    a query word, not an unknown flag."""

    dash_words = False

    def parse_known_args(  # type: ignore[override]
        self, args: list[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        words = list(sys.argv[1:] if args is None else args)
        if self.dash_words:
            words = self._protect_dash_words(words)
        parsed, extras = super().parse_known_args(words, namespace)
        query = getattr(parsed, "query", None)
        if self.dash_words and isinstance(query, list):
            # argparse gives the query only the words before the first option; the words after
            # it (`match retention --limit 5 -draft`) come back unparsed, in order.
            later = [word for word in extras if word.startswith(_DASH_WORD) or word[:1] != "-"]
            extras = [word for word in extras if word not in later]
            parsed.query = [word.removeprefix(_DASH_WORD) for word in (*query, *later)]
        return parsed, extras

    def _protect_dash_words(self, words: list[str]) -> list[str]:
        protected: list[str] = []
        takes_value = False
        for position, word in enumerate(words):
            if word == "--":
                return protected + words[position:]
            option = self._option_string_actions.get(word.split("=", 1)[0])
            dash_word = (
                option is None
                and not takes_value
                and len(word) > 1
                and word[0] == "-"
                and word[1] != "-"
            )
            protected.append(_DASH_WORD + word if dash_word else word)
            # The word after `--limit` is its value, even a negative one.
            takes_value = option is not None and "=" not in word and option.nargs != 0
        return protected


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
    actions = parser.add_subparsers(
        title="actions", metavar="ACTION", required=True, parser_class=_ActionParser
    )

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
    search.dash_words = True
    search.add_argument("query", nargs="+")
    search.add_argument(
        "--top-k",
        type=int,
        default=None,
        help="how many hits, 1 to 20 (default harness.knowledge.top_k)",
    )
    search.add_argument("--full", action="store_true", help="print whole chunks")
    search.set_defaults(handler=run_search)

    match = actions.add_parser(
        "match",
        help="list the documents holding all the words, as knowledge_enumerate does",
        description="List every indexed document holding all the words: side by side they "
        'must all appear, "quoted words" must be adjacent, -word excludes (no -- needed), '
        "heading:word and body:word look in one part of a section.",
    )
    match.dash_words = True
    match.add_argument("query", nargs="+")
    match.add_argument("--limit", type=int, default=None, help="at most this many (default 20)")
    match.add_argument("--all", action="store_true", help="every matching document")
    match.add_argument("--sort", choices=("matches", "path"), default="matches")
    match.add_argument(
        "--min-matches",
        type=int,
        default=0,
        help="only documents with at least this many sections matching in the body",
    )
    match.add_argument("--paths-only", action="store_true", help="print paths only")
    match.add_argument(
        "--explain",
        action="store_true",
        help="also print the compiled expression and what the index holds for each term",
    )
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
    actions.add_parser("doctor", help="check the store; exits 1 when a check fails").set_defaults(
        handler=run_doctor
    )

    # The group's flags are taken after the action too (`fisk knowledge index --config X`);
    # suppressed defaults leave the group's value alone when they are not given there.
    for action in actions.choices.values():
        action.add_argument(
            "--config", default=argparse.SUPPRESS, help="as fisk knowledge --config"
        )
        action.add_argument(
            "--store-dir", default=argparse.SUPPRESS, help="as fisk knowledge --store-dir"
        )


def _register_watch_and_words(actions: Any) -> None:
    watch = actions.add_parser(
        "watch",
        help="index, then keep the index in line with the files as they change",
        description="Index the paths, then watch them: a created, edited or deleted file is "
        "reflected in the index once the files have been quiet for the debounce. Holds the "
        "writer lock until interrupted.",
    )
    watch.add_argument("paths", nargs="*", metavar="PATH")
    watch.add_argument(
        "--debounce",
        default="2s",
        help="how long the files must be quiet before a change is indexed (default 2s, "
        "at least 100ms)",
    )
    watch.add_argument(
        "--no-initial",
        action="store_true",
        help="skip the first full pass and index only the changes that follow",
    )
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


def _debounce(text: str) -> timedelta:
    from fisk_ai.knowledge.watch import MIN_DEBOUNCE
    from fisk_ai.util.durations import DurationError, parse_duration

    try:
        debounce = parse_duration(text)
    except DurationError as exc:
        raise FiskError(
            f"--debounce {text!r} is not a duration ({exc}); write 2s or 500ms"
        ) from None
    if debounce < MIN_DEBOUNCE:
        raise FiskError(f"--debounce must be at least 100ms, not {text}")
    return debounce


def run_watch(args: argparse.Namespace) -> int:
    from fisk_ai.knowledge.access import refuse_unbuilt_keys
    from fisk_ai.knowledge.watch import Watcher

    debounce = _debounce(args.debounce)
    cfg = _config(args)
    refuse_unbuilt_keys(cfg)
    roots = _roots(args, cfg)
    writer, embed = _open_writer(args, cfg, rebuild=False)
    with contextlib.closing(writer):
        watcher = Watcher(
            writer,
            roots,
            reconcile=not args.paths,
            embed=embed,
            debounce=debounce,
            initial_pass=not args.no_initial,
        )
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

    if args.top_k is not None and not 1 <= args.top_k <= 20:
        raise FiskError(f"--top-k must be between 1 and 20, not {args.top_k}")
    cfg = _config(args)
    top_k = cfg.harness.knowledge.top_k if args.top_k is None else args.top_k
    reader = _reader(args)
    reader.close()
    index = KnowledgeIndex(reader.paths.directory, cfg.harness.knowledge.embeddings)
    try:
        answer = index.search_blocking(" ".join(args.query), top_k)
    finally:
        index.close()
    print(answer.tier, file=sys.stderr)
    if answer.status.value == "index_empty":
        print("the knowledge index holds no passages to search", file=sys.stderr)
        return 0
    if not answer.hits:
        print("no matches", file=sys.stderr)
        return 0
    sys.stdout.write(search_lines(answer, full=args.full))
    return 0


def _refuse_contradictions(args: argparse.Namespace) -> None:
    """Refuse flags of `match` that contradict each other, rather than letting one win."""
    if args.all and args.limit is not None:
        raise FiskError(
            "--all and --limit contradict each other; --all lists every match, --limit caps it"
        )
    if args.count and (args.paths_only or args.explain):
        raise FiskError("--count prints only a number; drop --paths-only and --explain")
    if args.paths_only and args.explain:
        raise FiskError("--paths-only prints only paths; drop --explain")
    if args.limit is not None and args.limit < 1:
        raise FiskError(f"--limit must be at least 1, not {args.limit}")
    if args.min_matches < 0:
        raise FiskError(f"--min-matches must be 0 or more, not {args.min_matches}")


def run_match(args: argparse.Namespace) -> int:
    from fisk_ai.knowledge.search import enumerate_documents
    from fisk_ai.lineui.knowledge import explain_lines, match_lines

    _refuse_contradictions(args)
    reader = _reader(args)
    with reader.use() as connection:
        answer = enumerate_documents(
            connection, " ".join(args.query), min_body_matches=args.min_matches
        )
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
        limit = len(documents) if args.all else args.limit or 20
        shown = documents[:limit]
        if shown:
            sys.stdout.write(match_lines(shown, paths_only=args.paths_only))
        if args.explain:
            sys.stdout.write(explain_lines(answer))
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


def _refuse_unbuilt(args: argparse.Namespace, action: str) -> None:
    """Refuse an action that writes to an index that was never built, rather than creating an
    empty one (which the agent would then read as empty, not as never built)."""
    from fisk_ai.knowledge.store import KnowledgePaths

    directory = _directory(args, _config(args))
    if not KnowledgePaths(directory).built():
        raise FiskError(
            f"there is no knowledge index to {action} at {directory}; build it with "
            "fisk knowledge index"
        )


def run_rm(args: argparse.Namespace) -> int:
    _refuse_unbuilt(args, "remove documents from")
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
    from fisk_ai.knowledge.store import KnowledgePaths, KnowledgeWriter

    if not KnowledgePaths(directory).built():
        print(f"there is no knowledge index to reset at {directory}")
        return 0
    if not args.force:
        raise FiskError(
            f"reset deletes every document indexed in {directory}; pass --force to do it"
        )

    with KnowledgeWriter(directory, rebuild=True):
        pass
    print(f"reset the knowledge index in {directory}")
    return 0


def run_rebuild(args: argparse.Namespace) -> int:
    _refuse_unbuilt(args, "rebuild")
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
    from fisk_ai.knowledge.doctor import CheckState, diagnose
    from fisk_ai.lineui.knowledge import doctor_lines

    cfg = _config(args)
    checks = diagnose(
        _directory(args, cfg),
        cfg.harness.knowledge.paths,
        embeddings=cfg.harness.knowledge.embeddings,
    )
    sys.stdout.write(doctor_lines(checks))
    # Any failed check fails the command (a check that did not run does not): a script asking
    # whether knowledge works gets "no" for a missing store or a silent embedder too.
    return 1 if any(check.state is CheckState.FAILED for check in checks) else 0
