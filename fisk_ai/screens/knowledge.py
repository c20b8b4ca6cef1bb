"""The knowledge explorer: the indexed documents, a search box that shows what a search finds
and why, the enumerate view, and a reader that shows a chunk among its neighbours.

The explorer only reads. It is handed a ``KnowledgeIndex``, which opens the database read-only
and never takes the writer's lock, so an index or watch running beside it is never held up; an
index built while the explorer is open is seen on the next search or on F5. Every read runs in a
worker that posts what it read, and the handlers here own the widgets.
"""

from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Input, OptionList, Static

from fisk_ai.tui.widgets.knowledge_context import ChunkBlock
from fisk_ai.tui.widgets.knowledge_query import QueryInput
from fisk_ai.tui.widgets.knowledge_results import (
    DEGRADED,
    Passage,
    ResultList,
    passage_of,
    term_line,
    tier_word,
)
from fisk_ai.tui.widgets.knowledge_sources import SourceList
from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from fisk_ai.knowledge.access import ChunkContext, IndexOverview, KnowledgeIndex
    from fisk_ai.knowledge.search import EnumerateAnswer, SearchAnswer
    from fisk_ai.tools.toolset import ToolSet

__all__ = ["ChunkReader", "KnowledgeExplorer", "explorer_index", "shown_directory"]

DEFAULT_TOP_K = 10
CONTEXT_RADIUS = 2
READING = "reading the index..."
SEARCH_HINT = "type words and press Enter to search; ctrl+t switches to match"
MATCH_HINT = (
    'documents holding every word: bare words, "a phrase", -word to exclude, heading: or '
    "body: to look in one part; ctrl+t switches to search"
)
RELOAD_HINT = "F5 reads the index again once it is built"
NOT_ENABLED = (
    "knowledge is not enabled for this agent; set harness.knowledge.enabled: true and build "
    "the index with fisk knowledge index"
)


def explorer_index(tools: ToolSet | None) -> KnowledgeIndex | None:
    """The index a run's knowledge tools read, or None when the run has none."""
    from fisk_ai.tools.builtin.knowledge import KNOWLEDGE_SEARCH, KnowledgeSearch

    tool = tools.get(KNOWLEDGE_SEARCH) if tools is not None else None
    return tool.index if isinstance(tool, KnowledgeSearch) else None


def shown_directory(directory: Path) -> str:
    """The store's directory relative to the working directory when it is under it."""
    try:
        return str(directory.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(directory)


class Mode(enum.Enum):
    SEARCH = "search"
    MATCH = "match"


def overview_line(overview: IndexOverview) -> Text:
    from fisk_ai.knowledge.access import IndexState

    state_style = "bold green" if overview.state is IndexState.BUILT else "bold yellow"
    line = Text.assemble((overview.state.value, state_style))
    if overview.state in (IndexState.BUILT, IndexState.STALE):
        line.append(f"  {len(overview.sources)} documents, {overview.chunks} chunks")
    return line


@dataclass(frozen=True)
class SearchShown:
    answer: SearchAnswer
    passages: tuple[Passage, ...]


class KnowledgeExplorer(Screen[None]):
    """The explorer over ``index``; Esc closes it. The index belongs to whoever opened the
    explorer and is never closed here."""

    DEFAULT_CSS = """
    KnowledgeExplorer {
        layout: vertical;
        #kx-header { height: 1; background: $primary; color: $text; padding: 0 1; }
        #kx-problem { height: auto; color: $warning; padding: 0 1; display: none; }
        #kx-problem.-shown { display: block; }
        #kx-body { height: 1fr; }
        #kx-sources { width: 34%; max-width: 50; height: 1fr; border: round $primary-darken-2; }
        #kx-sources:focus-within { border: round $accent; }
        #kx-main { width: 1fr; }
        #kx-query { border: round $primary-darken-2; }
        #kx-query:focus { border: round $accent; }
        #kx-tier { height: auto; padding: 0 1; color: $text-muted; }
        #kx-tier.-degraded { color: $warning; text-style: bold; }
        #kx-terms { height: auto; max-height: 6; padding: 0 1; color: $text-muted; display: none; }
        #kx-terms.-shown { display: block; }
        #kx-status { height: auto; padding: 0 1; }
        #kx-results { height: 1fr; border: round $primary-darken-2; }
        #kx-results:focus-within { border: round $accent; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("ctrl+t", "toggle_mode", "Search/Match"),
        Binding("f5", "reload", "Reload"),
    ]

    mode: var[Mode] = var(Mode.SEARCH, init=False)
    """Whether Enter in the query field searches (ranked passages) or matches (documents)."""
    overview: var[IndexOverview | None] = var(None, init=False)
    """The index as last read; None until the first read ends."""

    class OverviewRead(Message, bubble=False):
        def __init__(self, overview: IndexOverview | None, problem: str) -> None:
            super().__init__()
            self.overview = overview
            self.problem = problem

    class Searched(Message, bubble=False):
        def __init__(self, query: str, shown: SearchShown | None, problem: str) -> None:
            super().__init__()
            self.query = query
            self.shown = shown
            self.problem = problem

    class Matched(Message, bubble=False):
        def __init__(self, query: str, answer: EnumerateAnswer | None, problem: str) -> None:
            super().__init__()
            self.query = query
            self.answer = answer
            self.problem = problem

    def __init__(self, index: KnowledgeIndex, *, top_k: int = DEFAULT_TOP_K) -> None:
        super().__init__()
        self.index = index
        self.top_k = top_k
        self.terms: tuple[str, ...] = ()
        """The words of the last search, highlighted in the reader too."""

    def compose(self) -> ComposeResult:
        yield Static(self._header(), id="kx-header")
        yield Static("", markup=False, id="kx-problem")
        with Horizontal(id="kx-body"):
            sources = SourceList(id="kx-sources")
            sources.border_title = "sources"
            yield sources
            with Vertical(id="kx-main"):
                query = QueryInput(placeholder="words to search for", id="kx-query")
                query.border_title = Mode.SEARCH.value
                yield query
                yield Static("", markup=False, id="kx-tier")
                yield Static("", markup=False, id="kx-terms")
                yield Static(READING, markup=False, id="kx-status")
                results = ResultList(id="kx-results")
                results.border_title = "hits"
                yield results
        yield Footer()

    def _header(self) -> Text:
        header = Text.assemble(
            ("knowledge", "bold"), "  ", single_line(shown_directory(self.index.directory)), "  "
        )
        if self.overview is None:
            header.append("reading...")
        else:
            header.append_text(overview_line(self.overview))
        return header

    @property
    def query_field(self) -> Input:
        return self.query_one("#kx-query", Input)

    @property
    def results(self) -> ResultList:
        return self.query_one(ResultList)

    def _say(self, widget_id: str, text: str | Text) -> None:
        self.query_one(widget_id, Static).update(text)

    def on_mount(self) -> None:
        self.query_field.focus()
        self._read_overview()

    @work(group="overview", exclusive=True, exit_on_error=False)
    async def _read_overview(self) -> None:
        try:
            overview = await self.index.overview()
        except Exception as error:  # A broken store must leave a readable screen behind.
            self.post_message(self.OverviewRead(None, _sentence(error)))
            return
        self.post_message(self.OverviewRead(overview, ""))

    def on_knowledge_explorer_overview_read(self, message: KnowledgeExplorer.OverviewRead) -> None:
        from fisk_ai.knowledge.access import IndexState

        overview = message.overview
        self.overview = overview
        problem = message.problem or (overview.problem if overview is not None else "")
        shown = self.query_one("#kx-problem", Static)
        shown.update(problem)
        shown.set_class(bool(problem), "-shown")
        self.query_one(SourceList).show_sources(overview.sources if overview else ())
        if overview is not None and not self.results.option_count:
            if self.mode is Mode.SEARCH:
                self._show_tier(overview.tier)
            built = overview.state in (IndexState.BUILT, IndexState.STALE)
            self._say("#kx-status", self._hint() if built else RELOAD_HINT)

    def watch_overview(self) -> None:
        self._say("#kx-header", self._header())

    def _hint(self) -> str:
        return SEARCH_HINT if self.mode is Mode.SEARCH else MATCH_HINT

    def watch_mode(self, mode: Mode) -> None:
        field = self.query_field
        field.border_title = mode.value
        field.placeholder = (
            "words to search for" if mode is Mode.SEARCH else "words every document must hold"
        )
        self.results.clear_options()
        self.results.border_title = "hits" if mode is Mode.SEARCH else "documents"
        self.query_one("#kx-terms", Static).set_class(False, "-shown")
        if mode is Mode.MATCH:
            from fisk_ai.knowledge.search import ENUMERATE_TIER

            self._show_tier(ENUMERATE_TIER)
        else:
            self._show_tier(self.overview.tier if self.overview else "")
        self._say("#kx-status", self._hint())

    def _show_tier(self, text: str, *, degraded: bool = False) -> None:
        """The tier line, in the warning colour when the search degraded; hidden when there is
        no index to name a tier for."""
        tier = self.query_one("#kx-tier", Static)
        tier.update(text)
        tier.display = bool(text)
        tier.set_class(degraded, "-degraded")

    def action_toggle_mode(self) -> None:
        self.mode = Mode.MATCH if self.mode is Mode.SEARCH else Mode.SEARCH
        field = self.query_field
        field.focus()
        # The words stay, selected: Enter asks the other view the same question, typing
        # replaces them.
        field.action_select_all()

    def action_reload(self) -> None:
        self._read_overview()

    def action_close(self) -> None:
        self.dismiss(None)

    @on(Input.Submitted, "#kx-query")
    def query_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            return
        self._say("#kx-status", "searching..." if self.mode is Mode.SEARCH else "matching...")
        if self.mode is Mode.SEARCH:
            self._search(text)
        else:
            self._match(text)

    @work(group="query", exclusive=True, exit_on_error=False)
    async def _search(self, text: str) -> None:
        try:
            answer = await self.index.search(text, self.top_k)
            terms = answer.query.terms
            passages = await asyncio.to_thread(
                lambda: tuple(passage_of(hit.body, terms) for hit in answer.hits)
            )
        except Exception as error:  # Said in the view; the explorer stays usable.
            self.post_message(self.Searched(text, None, _sentence(error)))
            return
        self.post_message(self.Searched(text, SearchShown(answer, passages), ""))

    def on_knowledge_explorer_searched(self, message: KnowledgeExplorer.Searched) -> None:
        from fisk_ai.knowledge.search import SearchStatus

        shown = message.shown
        if shown is None:
            self.results.clear_options()
            self._say("#kx-status", message.problem)
            return
        answer = shown.answer
        self.terms = answer.query.terms
        word = tier_word(answer)
        degraded = word == DEGRADED
        self._show_tier(
            f"embeddings unreachable ({answer.degraded}): these hits come from the lexical tier "
            f"only\n{answer.tier}"
            if degraded
            else answer.tier,
            degraded=degraded,
        )
        self.results.show_hits(answer.hits, word, shown.passages)
        query = single_line(message.query, 60)
        if answer.status is SearchStatus.INDEX_NOT_BUILT:
            status = self.overview.problem if self.overview else "no knowledge index is built"
            self._read_overview()
        elif answer.status is SearchStatus.INDEX_EMPTY:
            status = "the knowledge index holds no documents; fisk knowledge index adds them"
        elif not answer.query.terms:
            status = "nothing to search for: every word is shorter than two letters or digits"
        else:
            count = len(answer.hits)
            status = f"{count} {'hit' if count == 1 else 'hits'} for: {query}"
            if count:
                status += "   Tab reaches the hits"
        self._say("#kx-status", status)

    @work(group="query", exclusive=True, exit_on_error=False)
    async def _match(self, text: str) -> None:
        try:
            answer = await self.index.enumerate(text)
        except Exception as error:  # A refused operator is a sentence to show, not a crash.
            self.post_message(self.Matched(text, None, _sentence(error)))
            return
        self.post_message(self.Matched(text, answer, ""))

    def on_knowledge_explorer_matched(self, message: KnowledgeExplorer.Matched) -> None:
        from fisk_ai.knowledge.search import EnumerateStatus

        terms = self.query_one("#kx-terms", Static)
        answer = message.answer
        if answer is None:
            self.results.clear_options()
            terms.set_class(False, "-shown")
            self._say("#kx-status", message.problem)
            return
        self.terms = tuple(word for term in answer.query.included for word in term.words)
        terms.update("\n".join(term_line(report) for report in answer.terms))
        terms.set_class(bool(answer.terms), "-shown")
        self.results.show_documents(answer.documents)
        if answer.status is EnumerateStatus.INDEX_NOT_BUILT:
            status = self.overview.problem if self.overview else "no knowledge index is built"
            self._read_overview()
        elif answer.status is EnumerateStatus.CORPUS_EMPTY:
            status = "the knowledge index holds no documents; fisk knowledge index adds them"
        elif answer.status is EnumerateStatus.QUERY_EMPTY:
            status = "nothing to match: every term is shorter than two letters or digits"
        else:
            status = (
                f"{len(answer.documents)} of {answer.indexed_documents} documents hold: "
                f"{single_line(message.query, 60)}"
            )
        self._say("#kx-status", status)

    @on(OptionList.OptionSelected, "#kx-results")
    def result_chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._read(event.option.id or "", self.terms)

    @on(OptionList.OptionSelected, "#kx-sources")
    def source_chosen(self, event: OptionList.OptionSelected) -> None:
        from fisk_ai.knowledge.search import citation

        event.stop()
        self._read(citation(event.option.id or "", 0), ())

    def _read(self, cited: str, terms: tuple[str, ...]) -> None:
        from fisk_ai.knowledge.search import parse_citation

        path, ordinal = parse_citation(cited)
        self.app.push_screen(ChunkReader(self.index, path, ordinal, terms))


def _sentence(error: Exception) -> str:
    from fisk_ai.errors import FiskError

    if isinstance(error, FiskError):
        return single_line(str(error), 400)
    return single_line(f"the knowledge index could not be read: {error}", 400)


@dataclass(frozen=True)
class ReadChunks:
    context: ChunkContext
    spans: tuple[tuple[tuple[int, int], ...], ...]


class ChunkReader(Screen[None]):
    """One chunk among its neighbours in its document, the opened one marked and the search's
    words highlighted; ``[`` and ``]`` move to the chunk before or after, Esc goes back."""

    DEFAULT_CSS = """
    ChunkReader {
        layout: vertical;
        #kr-header { height: 1; background: $primary; color: $text; padding: 0 1; }
        #kr-body { height: 1fr; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("left_square_bracket", "move(-1)", "Previous chunk"),
        Binding("right_square_bracket", "move(1)", "Next chunk"),
    ]

    class ChunksRead(Message, bubble=False):
        def __init__(self, read: ReadChunks | None, problem: str) -> None:
            super().__init__()
            self.read = read
            self.problem = problem

    def __init__(
        self, index: KnowledgeIndex, path: str, ordinal: int, terms: tuple[str, ...]
    ) -> None:
        super().__init__()
        self.index = index
        self.path = path
        self.ordinal = ordinal
        self.terms = terms
        self.total = 0

    def compose(self) -> ComposeResult:
        yield Static(single_line(self.path), markup=False, id="kr-header")
        yield VerticalScroll(id="kr-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#kr-body").focus()
        self._read_chunks()

    @work(group="chunks", exclusive=True, exit_on_error=False)
    async def _read_chunks(self) -> None:
        try:
            context = await self.index.context(self.path, self.ordinal, CONTEXT_RADIUS)
            if context is None:
                self.post_message(
                    self.ChunksRead(
                        None, f"{self.path}#{self.ordinal} is no longer in the knowledge index"
                    )
                )
                return
            spans = await asyncio.to_thread(self._spans, context)
        except Exception as error:  # Said in the view; Esc still goes back.
            self.post_message(self.ChunksRead(None, _sentence(error)))
            return
        self.post_message(self.ChunksRead(ReadChunks(context, spans), ""))

    def _spans(self, context: ChunkContext) -> tuple[tuple[tuple[int, int], ...], ...]:
        from fisk_ai.knowledge.search import matched_spans
        from fisk_ai.util.sanitize import strip_control

        return tuple(
            tuple(matched_spans(strip_control(chunk.body), self.terms)) for chunk in context.chunks
        )

    async def on_chunk_reader_chunks_read(self, message: ChunkReader.ChunksRead) -> None:
        body = self.query_one("#kr-body", VerticalScroll)
        await body.remove_children()
        read = message.read
        if read is None:
            await body.mount(Static(message.problem, markup=False))
            return
        self.total = read.context.total
        self._say_where()
        blocks = [
            ChunkBlock(chunk, spans, opened=chunk.ordinal == self.ordinal)
            for chunk, spans in zip(read.context.chunks, read.spans, strict=True)
        ]
        await body.mount_all(blocks)
        opened = next(block for block in blocks if block.has_class("-opened"))
        self.call_after_refresh(body.scroll_to_widget, opened, animate=False, top=True)

    def _say_where(self) -> None:
        where = Text.assemble(
            (single_line(f"{self.path}#{self.ordinal}"), "bold"),
            f"  chunk {self.ordinal + 1} of {self.total}",
        )
        self.query_one("#kr-header", Static).update(where)

    def action_move(self, step: int) -> None:
        wanted = self.ordinal + step
        if not 0 <= wanted < self.total:
            return
        self.ordinal = wanted
        self._read_chunks()

    def action_back(self) -> None:
        self.dismiss(None)
