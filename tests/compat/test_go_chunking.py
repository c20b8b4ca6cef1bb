"""Chunking as the Go fisk-ai chunks: the same text gives the same chunks, so the same citations.

The cases are Go's own chunking cases (its chunk_test.go) and the rules its chunker applies,
restated here; the two pages in data/ are the Go project's own documentation, whose chunk counts
under the Go chunker (28 and 45) were measured on the Go build and are what this project gave
wrongly before (29 and 47).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ai.knowledge.chunking import split_into_chunks

DATA = Path(__file__).parent / "data"


def bodies(text: str) -> list[tuple[str, str]]:
    return [(chunk.heading_path, chunk.body) for chunk in split_into_chunks(text).chunks]


def paragraph(size: int, letter: str = "a") -> str:
    """One paragraph of exactly ``size`` bytes."""
    return letter * size


def test_the_breadcrumb_stays_out_of_the_body() -> None:
    chunked = split_into_chunks(
        "# Design\n\n## Backpressure\n\nThe buffer fills and producers slow down.\n"
    )

    assert [(c.heading_path, c.body) for c in chunked.chunks] == [
        ("Design > Backpressure", "The buffer fills and producers slow down.")
    ]


def test_an_oversized_fence_is_one_chunk_that_opens_and_closes() -> None:
    fence = "```go\n" + "line of code that is fairly long to push past the target size\n" * 200
    chunks = split_into_chunks(f"# Code\n\n{fence}```\n").chunks

    fenced = [chunk.body for chunk in chunks if "```go" in chunk.body]
    assert len(fenced) == 1
    assert fenced[0].count("```") == 2


def test_a_hash_inside_a_fence_is_not_a_heading() -> None:
    chunks = split_into_chunks("# Real\n\n```\n# not a heading\n```\n\nbody\n").chunks

    assert {chunk.heading_path for chunk in chunks} == {"Real"}


def test_the_title_is_the_first_heading() -> None:
    chunked = split_into_chunks("# Top\n\nintro paragraph\n\n## A\n\nalpha\n\n## B\n\nbravo\n")

    assert chunked.title == "Top"
    assert [chunk.heading_path for chunk in chunked.chunks] == ["Top", "Top > A", "Top > B"]


@pytest.mark.parametrize("text", ["", "   \n\n  \n"])
def test_empty_or_blank_text_has_no_chunks(text: str) -> None:
    assert split_into_chunks(text).chunks == ()


def test_trailing_hashes_are_part_of_the_heading_text() -> None:
    assert bodies("## Install ##\n\nrun it\n") == [("Install ##", "run it")]


def test_seven_hashes_make_an_ordinary_line() -> None:
    assert bodies("# Top\n\n####### not a heading\n") == [("Top", "####### not a heading")]


def test_hashes_alone_make_an_ordinary_line() -> None:
    assert bodies("# Top\n\n##\n") == [("Top", "##")]


def test_a_heading_needs_no_space_after_its_marks() -> None:
    assert bodies("#Install\n\nrun it\n") == [("Install", "run it")]


def test_each_block_costs_two_bytes_beyond_its_own() -> None:
    # 598 + 2 and 599 + 2 make 1201, past the 1200-byte target: two chunks.
    first, second = paragraph(598), paragraph(599, "b")

    assert bodies(f"{first}\n\n{second}\n") == [("", first), ("", second)]


def test_blocks_that_cost_exactly_the_target_share_a_chunk() -> None:
    # 597 + 2 and 599 + 2 make exactly 1200.
    first, second = paragraph(597), paragraph(599, "b")

    assert bodies(f"{first}\n\n{second}\n") == [("", f"{first}\n\n{second}")]


def test_the_last_slice_of_a_long_paragraph_packs_with_the_next_block() -> None:
    long_paragraph = paragraph(2000)

    assert bodies(f"{long_paragraph}\n\nafter\n") == [
        ("", long_paragraph[:1200]),
        ("", f"{long_paragraph[1200:]}\n\nafter"),
    ]


def test_a_fence_left_open_runs_to_the_end_without_its_final_newline() -> None:
    assert bodies("# Code\n\n```\nopen fence\n") == [("Code", "```\nopen fence")]


def test_a_line_of_information_separators_is_text_as_go_reads_it() -> None:
    # Go's white space does not include U+001C..U+001F, so this line is a block, not a blank.
    assert bodies("# Top\n\n\x1c\n") == [("Top", "\x1c")]


# fmt: off
KNOWLEDGE_PAGE_SIZES = [
    884, 634, 129, 317, 1093, 1069, 567, 1143, 449, 1359, 761, 1129, 518, 694, 84, 628,
    297, 208, 1200, 1200, 694, 1126, 699, 1073, 549, 518, 153, 1418,
]
REFERENCE_PAGE_SIZES = [
    1069, 440, 701, 1225, 840, 895, 454, 112, 3762, 290, 322, 4241, 478, 381, 699, 981,
    1121, 1024, 370, 2552, 403, 449, 4339, 739, 266, 1351, 388, 457, 1355, 975, 896,
    1062, 688, 243, 1200, 1056, 215, 1200, 1200, 1200, 987, 659, 913, 1166, 1004,
]
# fmt: on


@pytest.mark.parametrize(
    ("page", "title", "sizes"),
    [
        ("upstream-knowledge-index.md", "Enabling knowledge", KNOWLEDGE_PAGE_SIZES),
        ("upstream-reference-index.md", "A minimal file", REFERENCE_PAGE_SIZES),
    ],
)
def test_an_upstream_page_chunks_as_the_go_build_chunks_it(
    page: str, title: str, sizes: list[int]
) -> None:
    text = (DATA / page).read_bytes().decode("utf-8")
    chunked = split_into_chunks(text)

    assert chunked.title == title
    # The counts (28 and 45) are the Go build's; the byte sizes pin each chunk, hard-split
    # slices (exactly 1200 bytes, on Go's grid since no cut falls inside a character) included.
    assert [len(chunk.body.encode()) for chunk in chunked.chunks] == sizes


def test_a_cut_inside_a_character_moves_back_to_its_first_byte() -> None:
    # Go would cut this at byte 1200, the middle of a euro sign; the cut moves to byte 1199 and
    # the next slice still starts the second 1200 bytes of Go's grid, with the whole sign.
    text = "é" + "€" * 600

    chunks = split_into_chunks(text).chunks

    assert [len(chunk.body.encode()) for chunk in chunks] == [1199, 603]
    assert "".join(chunk.body for chunk in chunks) == text
