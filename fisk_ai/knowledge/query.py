"""From what a person or the model typed to what FTS5 is asked.

Search takes free text and asks for any of its words: the text is cut on everything that is not
a letter or digit, words under two characters are dropped (and reported), each word is quoted so
no FTS5 operator can hide in it, and at most forty are OR-ed together.

Enumerate has a small closed language: bare words (all must appear somewhere in a document, not
necessarily in one chunk), ``"quoted phrases"``, a leading ``-`` to exclude, and ``heading:`` or
``body:`` to look in one part of a chunk. ``OR``, ``AND``, ``NOT`` and ``NEAR`` are refused by
name, because FTS5 would silently answer a different question, and so is a trailing ``*``,
because a prefix against a stemmed index can find fewer documents as the prefix grows.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from fisk_ai.knowledge.errors import QueryError

__all__ = [
    "MAX_SEARCH_TERMS",
    "MIN_TERM_CHARACTERS",
    "WORD",
    "EnumerateQuery",
    "Scope",
    "SearchQuery",
    "Term",
    "parse_enumerate",
    "search_query",
]

MAX_SEARCH_TERMS = 40
MIN_TERM_CHARACTERS = 2
# A word as the unicode61 tokenizer cuts one: a run of letters and digits.
WORD = re.compile(r"[^\W_]+")
_OPERATORS = frozenset({"OR", "AND", "NOT", "NEAR"})
_TOKEN = re.compile(r'(-?)((?:heading|body):)?("([^"]*)"?|\S+)')


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


@dataclass(frozen=True)
class SearchQuery:
    """The FTS5 expression for a free-text search ("" when no word survived), the words it
    asks for, and the words dropped as too short."""

    expression: str
    terms: tuple[str, ...]
    dropped: tuple[str, ...]


def search_query(text: str) -> SearchQuery:
    terms: list[str] = []
    dropped: list[str] = []
    for word in WORD.findall(text):
        if len(word) < MIN_TERM_CHARACTERS:
            dropped.append(word)
        elif word.lower() not in (term.lower() for term in terms):
            terms.append(word)
    terms = terms[:MAX_SEARCH_TERMS]
    return SearchQuery(" OR ".join(_quote(term) for term in terms), tuple(terms), tuple(dropped))


class Scope(enum.Enum):
    """Which part of a chunk a term must appear in."""

    ANY = "any"
    HEADING = "heading"
    BODY = "body"


_SCOPE_COLUMNS = {Scope.ANY: "", Scope.HEADING: "heading_path : ", Scope.BODY: "body : "}


@dataclass(frozen=True)
class Term:
    """One term of an enumerate query, as written and as the words FTS5 will be asked for."""

    written: str
    words: tuple[str, ...]
    phrase: bool
    excluded: bool
    scope: Scope

    @property
    def queried(self) -> bool:
        """False when nothing of the term was long enough to ask for."""
        return bool(self.words)

    def phrase_expression(self) -> str:
        """The term's words as one quoted FTS5 phrase, in no column."""
        return _quote(" ".join(self.words))

    def expression(self) -> str:
        """The term as one FTS5 expression: its words as a phrase, in its column."""
        return _SCOPE_COLUMNS[self.scope] + self.phrase_expression()


@dataclass(frozen=True)
class EnumerateQuery:
    terms: tuple[Term, ...]

    @property
    def included(self) -> tuple[Term, ...]:
        return tuple(term for term in self.terms if term.queried and not term.excluded)

    @property
    def excluded(self) -> tuple[Term, ...]:
        return tuple(term for term in self.terms if term.queried and term.excluded)

    @property
    def empty(self) -> bool:
        return not self.included and not self.excluded

    def compiled(self) -> str:
        """What runs, in one line: each term is its own per-document query."""
        parts = [term.expression() for term in self.included]
        parts += [f"NOT {term.expression()}" for term in self.excluded]
        return " AND ".join(parts) + " (each term matched per document)" if parts else ""


def _refuse_operators(query: str) -> None:
    for word in re.findall(r'"[^"]*"|\S+', query):
        bare = word.lstrip("-")
        if bare in _OPERATORS or bare.startswith("NEAR("):
            raise QueryError(
                f"{bare.split('(')[0]} is not supported in a knowledge_enumerate query: every "
                "bare word must appear in a document already (AND), so drop it; to ask for "
                "either of two words, run one query per word; to exclude a word, write -word"
            )
        if not word.startswith('"') and bare.endswith("*"):
            raise QueryError(
                f'"{word}" ends with *, and prefix matching is not supported in a '
                "knowledge_enumerate query; write the whole word (stemming already matches "
                "its other forms)"
            )


def parse_enumerate(query: str) -> EnumerateQuery:
    """Parse an enumerate query; raise QueryError, in a sentence the model can act on, for an
    operator or a prefix."""
    _refuse_operators(query)
    terms: list[Term] = []
    for match in _TOKEN.finditer(query):
        minus, scope_prefix, token, phrase_text = match.groups()
        phrase = phrase_text is not None
        text = phrase_text if phrase else token
        words = tuple(WORD.findall(text))
        scope = Scope(scope_prefix.rstrip(":")) if scope_prefix else Scope.ANY
        if not phrase and len(words) == 1 and len(words[0]) < MIN_TERM_CHARACTERS:
            words = ()
        terms.append(Term(match.group(0), words, phrase, bool(minus), scope))
    return EnumerateQuery(tuple(terms))
