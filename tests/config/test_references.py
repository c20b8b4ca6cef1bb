from __future__ import annotations

import pytest

from fisk_ai.config import ConfigError, resolve_references
from fisk_ai.config.references import reference_problem, referenced_names

WHERE = 'MCP server "docs" header Authorization'


def test_set_variables_are_substituted() -> None:
    resolved = resolve_references(
        "Bearer ${DOCS_TOKEN}", {"DOCS_TOKEN": "s3cret-value"}, where=WHERE
    )
    assert resolved == "Bearer s3cret-value"


def test_several_references_mix_with_literal_text() -> None:
    environ = {"HOME": "/home/op", "NAME": "fs"}
    assert resolve_references("${HOME}/cache/${NAME}", environ, where=WHERE) == "/home/op/cache/fs"


def test_a_dollar_name_without_braces_is_literal() -> None:
    assert resolve_references("$HOME/x", {"HOME": "/h"}, where=WHERE) == "$HOME/x"


def test_an_unset_variable_names_the_variable_and_where() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_references("Bearer ${DOCS_TOKEN}", {}, where=WHERE)
    message = str(caught.value)
    assert "DOCS_TOKEN" in message
    assert WHERE in message
    assert "\n" not in message


def test_a_variable_set_to_empty_is_set() -> None:
    assert resolve_references("a${EMPTY}b", {"EMPTY": ""}, where=WHERE) == "ab"


def test_an_unclosed_reference_is_a_problem() -> None:
    assert reference_problem("Bearer ${DOCS_TOKEN") is not None


def test_an_invalid_name_is_a_problem() -> None:
    assert reference_problem("${1ABC}") is not None
    assert reference_problem("${}") is not None


def test_well_formed_references_are_no_problem() -> None:
    assert reference_problem("https://h/mcp/s/${ZAPIER_KEY}/mcp?x=$y") is None


def test_referenced_names_lists_each_variable() -> None:
    assert referenced_names("${A}:${B_2}") == ["A", "B_2"]


def test_resolving_a_malformed_reference_is_an_error() -> None:
    with pytest.raises(ConfigError, match="without a closing"):
        resolve_references("${DOCS_TOKEN", {"DOCS_TOKEN": "x"}, where=WHERE)
