"""Inputs a careless operator, a hostile peer or a broken application might hand a reader."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

HOSTILE_FRAGMENTS = [
    "\\ud800",
    "\\udfff",
    "\\u0000",
    "[" * 120,
    "]" * 120,
    '{"a":' * 150,
    "NaN",
    "Infinity",
    "\x1b]0;x",
    "\u202e",
    "\x00",
    "\xff",
]

json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


def mutated(base: str) -> st.SearchStrategy[bytes]:
    """``base`` with a hostile fragment, random text or random bytes put somewhere in it."""
    insertion = st.sampled_from(HOSTILE_FRAGMENTS) | st.text(max_size=8)

    @st.composite
    def build(draw: st.DrawFn) -> bytes:
        at = draw(st.integers(0, len(base)))
        cut = draw(st.integers(0, 3))
        text = base[:at] + draw(insertion) + base[at + cut :]
        data = text.encode("utf-8", "surrogatepass")
        if draw(st.booleans()):
            data += draw(st.binary(max_size=8))
        return data

    return build()


def documents(base: dict[str, Any]) -> st.SearchStrategy[bytes]:
    """A valid document mutated, a random JSON value, or random bytes."""
    return st.one_of(
        mutated(json.dumps(base)),
        json_values.map(lambda value: json.dumps(value).encode()),
        st.builds(lambda value: json.dumps({**base, "x": value}).encode(), json_values),
        st.binary(max_size=64),
    )
