"""The explorer's results: ranked search hits, or the documents an enumerate query matched.

Every hit shows the tier that found it, its score, its citation and a passage of its text with
the words the index matched highlighted. Corpus text is data: it is sanitised and never parsed as
markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.console import Group
from rich.padding import Padding
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from fisk_ai.knowledge.search import Hit, MatchedDocument, SearchAnswer, TermReport

PREVIEW_CHARACTERS = 160
# How much text before the first match a passage keeps, so the match reads in its sentence.
LEAD_CHARACTERS = 40
MATCH_STYLE = "bold reverse"
INDENT = 3
LEXICAL = "lexical"
HYBRID = "hybrid"
DEGRADED = "degraded"


def tier_word(answer: SearchAnswer) -> str:
    """Which tier found an answer's hits, in one word."""
    if answer.degraded:
        return DEGRADED
    return HYBRID if answer.tier.startswith("tier: hybrid (") else LEXICAL


def score_text(hit: Hit, tier: str) -> str:
    """BM25 (shown positive, higher is better, as `fisk knowledge search` prints it), or the
    fused reciprocal-rank score of a hybrid search."""
    if tier == HYBRID:
        return f"rrf {hit.score:.4f}"
    return f"score {-hit.score:.2f}"


@dataclass(frozen=True)
class Passage:
    """Some text to show and where in it the index matched the query's words."""

    text: str
    spans: tuple[tuple[int, int], ...]


def passage_of(body: str, terms: Sequence[str]) -> Passage:
    """A hit's text on one line, cut to about PREVIEW_CHARACTERS around its first match. Blocks
    (it asks SQLite for the stems): call it off the event loop."""
    from fisk_ai.knowledge.search import matched_spans

    flat = single_line(body)
    spans = matched_spans(flat, terms)
    start = 0
    if spans and spans[0][0] > LEAD_CHARACTERS:
        start = flat.rfind(" ", 0, spans[0][0] - LEAD_CHARACTERS) + 1
    end = min(len(flat), start + PREVIEW_CHARACTERS)
    cut = flat[start:end]
    kept = tuple((a - start, b - start) for a, b in spans if a >= start and b <= end)
    if start:
        cut, kept = "..." + cut, tuple((a + 3, b + 3) for a, b in kept)
    if end < len(flat):
        cut += "..."
    return Passage(cut, kept)


def highlighted(passage: Passage) -> Text:
    text = Text(passage.text)
    for start, end in passage.spans:
        text.stylize(MATCH_STYLE, start, end)
    return text


def hit_prompt(number: int, hit: Hit, tier: str, passage: Passage) -> Group:
    """The hit's number, citation, tier and score on one line; its section and passage below,
    indented under it."""
    tier_style = "bold yellow" if tier == DEGRADED else "cyan"
    first = Text.assemble(
        (f"{number}. ", "bold"),
        (single_line(hit.citation), "bold"),
        "  ",
        (tier, tier_style),
        "  ",
        (score_text(hit, tier), "dim"),
    )
    below: list[Text] = []
    if hit.heading_path:
        below.append(Text(single_line(hit.heading_path), style="italic"))
    below.append(highlighted(passage))
    return Group(first, Padding(Group(*below), (0, 0, 0, INDENT)))


def document_prompt(document: MatchedDocument) -> Group:
    counts = Text(
        f"{document.body_matches} body and {document.heading_matches} heading chunks match, "
        f"of {document.total_chunks}",
        style="dim",
    )
    return Group(Text(single_line(document.path), style="bold"), Padding(counts, (0, 0, 0, INDENT)))


def term_line(report: TermReport) -> str:
    """What one enumerate term found, as a line: documents (stemmed), as written, related."""
    term = single_line(report.term, 40)
    if report.not_queried:
        return f"{term}: not queried ({report.not_queried})"
    line = f"{term}: {report.documents} documents, {report.as_written} as written"
    if report.related_forms:
        line += f"; also matches {', '.join(single_line(form) for form in report.related_forms)}"
    return line


class ResultList(OptionList):
    """Hits (each option's id the hit's citation) or matched documents (the citation of their
    first chunk); Enter reads the chunk in its document."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Read in context"),
    ]

    def show_hits(self, hits: Sequence[Hit], tier: str, passages: Sequence[Passage]) -> None:
        self.clear_options()
        self.add_options(
            Option(hit_prompt(number, hit, tier, passage), id=hit.citation)
            for number, (hit, passage) in enumerate(zip(hits, passages, strict=True), 1)
        )
        if hits:
            self.highlighted = 0

    def show_documents(self, documents: Sequence[MatchedDocument]) -> None:
        from fisk_ai.knowledge.search import citation

        self.clear_options()
        self.add_options(
            Option(document_prompt(document), id=citation(document.path, 0))
            for document in documents
        )
        if documents:
            self.highlighted = 0
