"""Every code reference in README.md and docs/*.md names a file that exists, and a name in it.

A reference is a path to a Python file of this repository: one from the root (`fisk_ai/...py`,
`tests/...py`, `bench/...py`, anywhere in the text, commands included), or, in backticks, one
relative to the package (`serve/local.py`, `pii_checks/normalize.py`), which must end exactly one
file under fisk_ai/. A reference may name a definition in its file, in any of the forms the docs
use:

- `tests/x.py::test_name` or `fisk_ai/x.py:function`;
- "`name` in `path.py`" and "`name` (`path.py`)";
- "`path.py` (`test_one`, `test_two`)";
- a table row whose first cell is the path: the backticked names in the second cell before its
  first colon ("| `fisk_ai/serve/server.py` | `Server`, `Work`: runs the turns ... |").

A plain text search stands for the definition: `def NAME`, `class NAME`, or `NAME =` / `NAME:` at
the start of a line (a constant, an enum member), or NAME in the module's `__all__`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.conftest import REPO_ROOT

DOCUMENTS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
PACKAGE = REPO_ROOT / "fisk_ai"

IDENTIFIER = r"[A-Za-z_]\w*"
# A name as the docs write it: `name`, or `name(arguments)` for a function.
NAME_IN_BACKTICKS = rf"`({IDENTIFIER})(?:\([^`]*\))?`"
ROOTED_PATH = r"(?:fisk_ai|tests|bench)/[\w/.-]*?\.py"
RELATIVE_PATH = r"(?:[a-z_][\w-]*/)+[\w-]+\.py"
PATH_IN_BACKTICKS = rf"`({ROOTED_PATH}|{RELATIVE_PATH})`"

ROOTED_REFERENCE = re.compile(rf"(?<![\w/.-])({ROOTED_PATH})(?![\w/])(?:::?({IDENTIFIER}))?")
RELATIVE_REFERENCE = re.compile(rf"`({RELATIVE_PATH})(?:::?({IDENTIFIER}))?`")
NAME_BEFORE_PATH = re.compile(rf"{NAME_IN_BACKTICKS}\s+(?:in\s+|\()\**{PATH_IN_BACKTICKS}")
NAMES_AFTER_PATH = re.compile(
    rf"{PATH_IN_BACKTICKS}\s*\(((?:{NAME_IN_BACKTICKS},\s*)*{NAME_IN_BACKTICKS})\)"
)
TABLE_ROW = re.compile(rf"^\|\s*{PATH_IN_BACKTICKS}(?:\s*\([^)|]*\))?\s*\|([^|]*)\|", re.MULTILINE)
NAME_IN_TEXT = re.compile(NAME_IN_BACKTICKS)
EXPORTS = re.compile(r"^__all__[^=\n]*=\s*[\[(]([^\])]*)[\])]", re.MULTILINE)


@dataclass(frozen=True)
class CodeReference:
    """A path as a document writes it, and the definition it names in that file, if any."""

    line: int
    path: str
    name: str | None = None


def code_references(text: str) -> list[CodeReference]:
    """Every code reference in a document's text, in the order they appear."""

    def line_of(match: re.Match[str]) -> int:
        return text.count("\n", 0, match.start()) + 1

    found: list[tuple[int, CodeReference]] = []
    for pattern in (ROOTED_REFERENCE, RELATIVE_REFERENCE):
        for match in pattern.finditer(text):
            if pattern is RELATIVE_REFERENCE and re.match(ROOTED_PATH, match[1]):
                continue
            found.append((match.start(), CodeReference(line_of(match), match[1], match[2])))
    for match in NAME_BEFORE_PATH.finditer(text):
        found.append((match.start(), CodeReference(line_of(match), match[2], match[1])))
    for match in NAMES_AFTER_PATH.finditer(text):
        for name in NAME_IN_TEXT.findall(match[2]):
            found.append((match.start(), CodeReference(line_of(match), match[1], name)))
    for match in TABLE_ROW.finditer(text):
        for name in NAME_IN_TEXT.findall(match[2].split(":", 1)[0]):
            found.append((match.start(), CodeReference(line_of(match), match[1], name)))
    return [reference for _, reference in sorted(found, key=lambda item: item[0])]


@cache
def package_files() -> tuple[str, ...]:
    return tuple(path.relative_to(REPO_ROOT).as_posix() for path in PACKAGE.rglob("*.py"))


def files_named(path: str) -> list[str]:
    """The repository files a written path can mean: itself from the root, or for a path
    relative to the package, every file under fisk_ai/ it ends."""
    if (REPO_ROOT / path).is_file():
        return [path]
    if re.fullmatch(ROOTED_PATH, path):
        return []
    return [candidate for candidate in package_files() if candidate.endswith(f"/{path}")]


def defines(source: str, name: str) -> bool:
    """Whether a module's source defines ``name``, or exports it in ``__all__`` (a module that
    re-exports a name is where its callers import it from)."""
    definition = re.compile(
        rf"^[ \t]*(?:(?:async[ \t]+)?def|class)[ \t]+{name}\b|^[ \t]*{name}[ \t]*(?::|=(?!=))",
        re.MULTILINE,
    )
    if definition.search(source) is not None:
        return True
    exported = EXPORTS.search(source)
    return exported is not None and re.search(rf"[\"']{name}[\"']", exported[1]) is not None


def problem_with(reference: CodeReference) -> str | None:
    """What is wrong with a reference, or None when its file and its name exist."""
    candidates = files_named(reference.path)
    if not candidates:
        return f"`{reference.path}` is no file of this repository"
    if len(candidates) > 1:
        return f"`{reference.path}` could be any of {', '.join(candidates)}"
    if reference.name is None:
        return None
    if not defines((REPO_ROOT / candidates[0]).read_text(), reference.name):
        return f"`{reference.name}` is not defined in {candidates[0]}"
    return None


def document_problems(documents: list[Path]) -> list[str]:
    return [
        f"{document.relative_to(REPO_ROOT)}:{reference.line}: {problem}"
        for document in documents
        for reference in code_references(document.read_text())
        if (problem := problem_with(reference)) is not None
    ]


def test_every_code_reference_in_the_docs_names_a_file_and_a_definition_that_exist() -> None:
    problems = document_problems(DOCUMENTS)
    assert not problems, "stale code references:\n" + "\n".join(problems)


def test_the_docs_are_read_for_code_references() -> None:
    references = [
        reference for document in DOCUMENTS for reference in code_references(document.read_text())
    ]
    assert len(references) > 100
    assert any(reference.name is not None for reference in references)


def test_a_path_to_a_file_that_does_not_exist_is_a_problem() -> None:
    (reference,) = code_references("The stores are in `fisk_ai/agent/stores.py`.")
    assert problem_with(reference) == "`fisk_ai/agent/stores.py` is no file of this repository"


def test_a_name_its_file_does_not_define_is_a_problem() -> None:
    references = code_references("(`no_such_wait` in `tests/patience.py`)")
    (named,) = [reference for reference in references if reference.name is not None]
    assert problem_with(named) == "`no_such_wait` is not defined in tests/patience.py"


def test_a_path_relative_to_the_package_names_the_one_file_it_ends() -> None:
    (reference,) = code_references("the prompts channel (`serve/prompts/hosting.py`)")
    assert files_named(reference.path) == ["fisk_ai/serve/prompts/hosting.py"]
    assert problem_with(reference) is None


def test_a_name_is_read_from_every_form_the_docs_write_it_in() -> None:
    text = "\n".join(
        [
            "python -m pytest tests/patience.py::slowdown",
            "`DEADLINE` in `tests/patience.py`",
            "`settled(pilot)` (`tests/tui/settle.py`)",
            "`tests/tui/settle.py` (`pinned`, `settled`)",
            "| `fisk_ai/serve/server.py` | `Server`, `Work`: runs `Channel` turns |",
        ]
    )
    names = {(reference.path, reference.name) for reference in code_references(text)}
    assert {
        ("tests/patience.py", "slowdown"),
        ("tests/patience.py", "DEADLINE"),
        ("tests/tui/settle.py", "settled"),
        ("tests/tui/settle.py", "pinned"),
        ("fisk_ai/serve/server.py", "Server"),
        ("fisk_ai/serve/server.py", "Work"),
    } <= names
    assert ("fisk_ai/serve/server.py", "Channel") not in names


def test_a_name_a_module_exports_counts_as_defined_there() -> None:
    source = (
        'from fisk_ai.serve.local import RunOptions\n\n__all__ = ["RunOptions", "hosted_run"]\n'
    )
    assert defines(source, "RunOptions")
    assert not defines(source, "TelemetryReport")
