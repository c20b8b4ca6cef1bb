"""The conformance table in docs/ names only tests that exist."""

import ast
import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
TABLE = REPOSITORY / "docs" / "conformance.md"
TEST_REFERENCE = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?`")
DOC_PAGE = re.compile(r"\b([a-z0-9-]+\.md)\b")


def named_tests() -> list[tuple[str, str | None]]:
    return [
        (match.group(1), match.group(2))
        for match in TEST_REFERENCE.finditer(TABLE.read_text(encoding="utf-8"))
    ]


def defined_test_names(test_file: Path) -> set[str]:
    tree = ast.parse(test_file.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def test_the_table_names_tests() -> None:
    assert named_tests(), "docs/conformance.md names no test file"


def test_every_test_file_the_table_names_exists() -> None:
    missing = sorted({path for path, _ in named_tests() if not (REPOSITORY / path).is_file()})
    assert missing == []


def test_every_test_the_table_names_is_defined_in_its_file() -> None:
    undefined = [
        f"{path}::{name}"
        for path, name in named_tests()
        if name is not None
        and (REPOSITORY / path).is_file()
        and name not in defined_test_names(REPOSITORY / path)
    ]
    assert undefined == []


def test_every_docs_page_the_table_names_exists() -> None:
    pages = set(DOC_PAGE.findall(TABLE.read_text(encoding="utf-8")))
    assert sorted(page for page in pages if not (TABLE.parent / page).is_file()) == []
