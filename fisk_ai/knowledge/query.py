"""From what a person or the model typed to what FTS5 is asked.

Search takes free text and asks for any of its words, as the Go original does: the text is cut on
everything that is not a letter or a decimal digit, words under two characters are dropped (and
reported), each word is quoted so no FTS5 operator can hide in it, and the first forty are OR-ed
together. A word written twice is asked for twice, which weighs it twice in BM25, as in Go.

Enumerate has a small closed language, the Go original's: bare words (all must appear somewhere
in a document, not necessarily in one chunk), ``"quoted phrases"`` (a doubled quote inside one
is a literal quote), a leading ``-`` to exclude, and ``heading:`` or ``body:`` to look in one
part of a chunk. Everything else is refused with a sentence saying what to write instead:

- ``OR``, ``AND``, ``NOT`` and ``NEAR`` in any case, because FTS5 would silently answer a
  different question (and a lowercase ``or`` would become a word every document has);
- ``*`` anywhere, because a prefix against a stemmed index can find fewer documents as the
  prefix grows, and an infix one is read by FTS5 as two terms;
- a field other than ``heading:`` and ``body:`` (``title:``), or a field with no word;
- a bare ``-``, a query of exclusions only (there is nothing to exclude from), and an
  unbalanced quote (where it would close changes the answer).

An unquoted term of one character is not queried and is reported; at most forty terms are
compiled, and the words after them are reported as not queried.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from fisk_ai.knowledge.chunking import WHITE_SPACE
from fisk_ai.knowledge.errors import QueryError

__all__ = [
    "MAX_SEARCH_TERMS",
    "MIN_TERM_CHARACTERS",
    "WORD",
    "EnumerateQuery",
    "NotQueried",
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
# What to write instead of each operator, which is refused in any case: a lowercase "and" means
# the same to the person who typed it, and would otherwise become a word to match.
_OPERATORS = {
    "and": "words side by side must all appear already, so write them side by side: deprecated api",
    "or": "alternatives are not supported; run one query per term and compare the answers",
    "not": "write a leading minus to exclude a word: -deprecated",
    "near": "proximity is not supported; a quoted phrase needs its words adjacent in one "
    'section: "retention policy"',
}


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


@dataclass(frozen=True)
class SearchQuery:
    """The FTS5 expression for a free-text search ("" when no word survived), the words it
    asks for, and the words dropped as too short."""

    expression: str
    terms: tuple[str, ...]
    dropped: tuple[str, ...]


def _search_words(text: str) -> list[str]:
    """The runs of letters and decimal digits, as Go's ``unicode.IsLetter``/``IsDigit`` cut them
    (a superscript or a roman numeral is not a digit there)."""
    kept = "".join(ch if ch.isalpha() or ch.isdecimal() else " " for ch in text)
    return kept.split()


def search_query(text: str) -> SearchQuery:
    terms: list[str] = []
    dropped: list[str] = []
    for word in _search_words(text):
        if len(word) < MIN_TERM_CHARACTERS:
            dropped.append(word)
        elif len(terms) < MAX_SEARCH_TERMS:
            terms.append(word)
    return SearchQuery(" OR ".join(_quote(term) for term in terms), tuple(terms), tuple(dropped))


class Scope(enum.Enum):
    """Which part of a chunk a term must appear in."""

    ANY = "any"
    HEADING = "heading"
    BODY = "body"


_SCOPE_COLUMNS = {Scope.ANY: "", Scope.HEADING: "heading_path:", Scope.BODY: "body:"}
_SCOPE_PREFIXES = {Scope.ANY: "", Scope.HEADING: "heading:", Scope.BODY: "body:"}
_SCOPES = {"heading": Scope.HEADING, "body": Scope.BODY}


class NotQueried(enum.Enum):
    """Why a term of the query was not asked of the index."""

    TOO_SHORT = "shorter than two characters"
    OVER_LIMIT = "beyond the 40-term limit"


@dataclass(frozen=True)
class Term:
    """One term of an enumerate query: the text FTS5 is asked for (without its minus or field),
    whether it was a quoted phrase, excluded, and where it must appear."""

    surface: str
    phrase: bool = False
    excluded: bool = False
    scope: Scope = Scope.ANY

    @property
    def words(self) -> tuple[str, ...]:
        """The words of the term as the tokenizer cuts them, for highlighting a match."""
        return tuple(WORD.findall(self.surface))

    def phrase_expression(self) -> str:
        """The term as one quoted FTS5 phrase, in no column."""
        return _quote(self.surface)

    def expression(self) -> str:
        """The term as one FTS5 expression: its phrase, in its column."""
        return _SCOPE_COLUMNS[self.scope] + self.phrase_expression()

    def shown(self) -> str:
        """The term as the compiled line shows it: ``-heading:"word"``."""
        minus = "-" if self.excluded else ""
        return f'{minus}{_SCOPE_PREFIXES[self.scope]}"{self.surface}"'


@dataclass(frozen=True)
class EnumerateQuery:
    """A compiled enumerate query: the terms asked of the index, in the order written, and the
    ones that were not, each with why."""

    terms: tuple[Term, ...]
    not_queried: tuple[tuple[str, NotQueried], ...] = ()

    @property
    def included(self) -> tuple[Term, ...]:
        return tuple(term for term in self.terms if not term.excluded)

    @property
    def excluded(self) -> tuple[Term, ...]:
        return tuple(term for term in self.terms if term.excluded)

    @property
    def empty(self) -> bool:
        return not self.terms

    def compiled(self) -> str:
        """What runs, in one line, as the Go original prints it: each term is its own
        per-document query, the included ones first."""
        return " AND ".join(term.shown() for term in (*self.included, *self.excluded))


@dataclass(frozen=True)
class _Token:
    text: str
    quoted: bool


def _tokens(query: str) -> list[_Token]:
    """The query cut at white space outside quotes; a quoted run is one token, in which a
    doubled quote stands for one quote."""
    tokens: list[_Token] = []
    current: list[str] = []
    quoted = False

    def end_token(*, was_quoted: bool) -> None:
        text = "".join(current)
        current.clear()
        if not was_quoted:
            text = text.strip(WHITE_SPACE)
        if text:
            tokens.append(_Token(text, was_quoted))

    index = 0
    while index < len(query):
        character = query[index]
        if character == '"' and quoted:
            if query.startswith('""', index):
                current.append('"')
                index += 2
                continue
            end_token(was_quoted=True)
            quoted = False
        elif character == '"':
            end_token(was_quoted=False)
            quoted = True
        elif character in WHITE_SPACE and not quoted:
            end_token(was_quoted=False)
        else:
            current.append(character)
        index += 1
    if quoted:
        raise QueryError(
            'the query has an unbalanced quote; close the phrase, as in "retention policy"'
        )
    end_token(was_quoted=False)
    return tokens


def _refuse_unsupported(text: str) -> None:
    advice = _OPERATORS.get(text.lower())
    if advice is not None:
        raise QueryError(f'"{text}" is not an operator in a knowledge_enumerate query; {advice}')
    if "*" in text:
        raise QueryError(
            f'"{text}" uses *, which a knowledge_enumerate query does not support; write the '
            "whole word: words are matched by their stem already, so deprecated finds "
            "deprecate and deprecation"
        )


def _term(token: _Token) -> Term | str:
    """The term of one token, or the word itself when it is too short to query."""
    _refuse_unsupported(token.text)
    if token.quoted:
        return Term(token.text, phrase=True)
    rest = token.text
    excluded = rest.startswith("-")
    if excluded:
        rest = rest[1:]
        if not rest:
            raise QueryError(
                "a bare - excludes nothing; put it against the word to exclude, as in -deprecated"
            )
    scope = Scope.ANY
    field, colon, value = rest.partition(":")
    if colon:
        found = _SCOPES.get(field.lower())
        if found is None:
            raise QueryError(
                f'"{field}:" is not a field a knowledge_enumerate query knows; heading: and '
                "body: are the only two"
            )
        if not value:
            raise QueryError(f'"{rest}" names a field but no word; write it as {field}:word')
        scope, rest = found, value
    _refuse_unsupported(rest)
    if len(rest) < MIN_TERM_CHARACTERS:
        return rest
    return Term(rest, excluded=excluded, scope=scope)


def parse_enumerate(query: str) -> EnumerateQuery:
    """Compile an enumerate query; raise QueryError, in a sentence the model can act on, for
    what the language refuses."""
    terms: list[Term] = []
    not_queried: list[tuple[str, NotQueried]] = []
    for token in _tokens(query):
        if len(terms) >= MAX_SEARCH_TERMS:
            not_queried.append((token.text, NotQueried.OVER_LIMIT))
            continue
        term = _term(token)
        if isinstance(term, str):
            not_queried.append((term, NotQueried.TOO_SHORT))
        else:
            terms.append(term)
    if not any(not term.excluded for term in terms) and terms:
        raise QueryError(
            "a query of exclusions only has nothing to exclude from; add a word to match, as "
            "in api -deprecated"
        )
    return EnumerateQuery(tuple(terms), tuple(not_queried))
