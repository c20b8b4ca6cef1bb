"""Property: the bounded loader, and the readers routed through it, end every input in a value
or one sentence (issue 25, item 6). ``FISK_FUZZ_EXAMPLES`` sets the examples per property."""

from __future__ import annotations

from hypothesis import event, given
from hypothesis import strategies as st

from fisk_ai.errors import BoundedInputError
from fisk_ai.memory.store import parse as parse_memory
from fisk_ai.util.bounded import load_yaml, loads_json
from tests.fuzz.strategies import HOSTILE_FRAGMENTS, mutated

NUMBER_FRAGMENTS = ["1e999", "-1e999", "9" * 5000, "0x" + "f" * 5000, "1.0e+999", ".inf"]
YAML_FRAGMENTS = ["&a [*a]", "*a", "&a ", "<<: *a", "!!python/object:os.system ", "\t", "? "]
YAML_DOCUMENT = "description: &a [x, x]\nb: &b [*a, *a]\nc: {k: v, n: 12, f: 1.5}\n"
JSON_DOCUMENT = '{"a": [1, 2.5, "x", {"b": null}], "n": 12}'


def _spliced(base: str, fragments: list[str]) -> st.SearchStrategy[bytes]:
    @st.composite
    def build(draw: st.DrawFn) -> bytes:
        at = draw(st.integers(0, len(base)))
        return (base[:at] + draw(st.sampled_from(fragments)) + base[at:]).encode()

    return build()


def _sentence(refused: BoundedInputError, what: str) -> None:
    message = str(refused)
    assert message.startswith(what + " ")
    assert "\n" not in message
    message.encode("utf-8")


@given(mutated(JSON_DOCUMENT) | _spliced(JSON_DOCUMENT, NUMBER_FRAGMENTS) | st.binary(max_size=64))
def test_json_loads_or_is_refused_in_one_sentence(data: bytes) -> None:
    try:
        loads_json(data, what="the document")
    except BoundedInputError as refused:
        _sentence(refused, "the document")
        event("refused")
        return
    event("read")


@given(
    _spliced(YAML_DOCUMENT, NUMBER_FRAGMENTS + YAML_FRAGMENTS + HOSTILE_FRAGMENTS)
    | mutated(YAML_DOCUMENT)
    | st.binary(max_size=64)
)
def test_yaml_loads_or_is_refused_in_one_sentence(data: bytes) -> None:
    try:
        load_yaml(data, what="the document")
    except BoundedInputError as refused:
        _sentence(refused, "the document")
        event("refused")
        return
    event("read")


MEMORY_VALUE = "---\ndescription: how the fleet is built\nb: &b [x, x]\n---\n\nbody\n"


@given(_spliced(MEMORY_VALUE, NUMBER_FRAGMENTS + YAML_FRAGMENTS) | mutated(MEMORY_VALUE))
def test_a_memory_value_always_reads_as_a_description_and_a_body(data: bytes) -> None:
    description, body = parse_memory(data)
    assert "\n" not in description
    assert body.encode("utf-8", "surrogatepass")
    assert len(description) <= 500
    event("described" if description else "all body")
