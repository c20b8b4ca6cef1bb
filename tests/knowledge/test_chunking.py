"""Chunking: headings make the breadcrumb, blocks pack by bytes, fences stay whole."""

from __future__ import annotations

from fisk_ai.knowledge.chunking import PACK_BYTES, split_into_chunks


def test_headings_make_a_breadcrumb_kept_apart_from_the_body() -> None:
    chunked = split_into_chunks(
        "# Install\n\nintro\n\n## Linux\n\napt install\n\n# Use\n\nrun it\n"
    )

    assert chunked.title == "Install"
    assert [(c.heading_path, c.body) for c in chunked.chunks] == [
        ("Install", "intro"),
        ("Install > Linux", "apt install"),
        ("Use", "run it"),
    ]


def test_crlf_is_read_as_lf_and_text_before_a_heading_has_no_breadcrumb() -> None:
    chunked = split_into_chunks("preface\r\nline two\r\n\r\n#Next\r\nbody\r\n")

    assert [(c.heading_path, c.body) for c in chunked.chunks] == [
        ("", "preface\nline two"),
        ("Next", "body"),
    ]


def test_paragraphs_pack_up_to_the_target_size() -> None:
    paragraph = "word " * 100  # 500 bytes
    chunked = split_into_chunks("\n\n".join([paragraph.strip()] * 5))

    assert [len(c.body.encode()) for c in chunked.chunks] == [1000, 1000, 499]
    assert all(len(c.body.encode()) <= PACK_BYTES for c in chunked.chunks)


def test_a_fenced_block_is_never_split_even_when_large() -> None:
    fence = "```\n" + "\n".join(["# not a heading"] + ["x" * 80] * 30) + "\n```"
    chunked = split_into_chunks(f"# Code\n\nbefore\n\n{fence}\n\nafter\n")

    bodies = [c.body for c in chunked.chunks]
    assert fence in bodies
    assert all(c.heading_path == "Code" for c in chunked.chunks)


def test_a_long_paragraph_is_cut_in_byte_slices_on_character_boundaries() -> None:
    text = "é" * 1000  # 2000 bytes, two bytes a character
    chunked = split_into_chunks(text)

    assert "".join(c.body for c in chunked.chunks) == text
    assert all(len(c.body.encode()) <= PACK_BYTES for c in chunked.chunks)
    assert len(chunked.chunks) == 2
