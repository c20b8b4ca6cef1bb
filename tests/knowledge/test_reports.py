"""How `fisk info` and the `fisk serve` banner report knowledge: as it really is."""

from __future__ import annotations

from pathlib import Path

from fisk_ai import config
from fisk_ai.cli.serve import knowledge_label
from fisk_ai.lineui.info import knowledge_section
from tests.knowledge.conftest import index, write_corpus


def _config(store: Path, extra: str = "") -> config.Config:
    return config.parse(
        "identity: ops\nsystem_prompt: hi\n"
        f"harness:\n  knowledge:\n    enabled: true\n    directory: {store}\n"
        f"    paths: [docs]\n{extra}",
        config.Mode.LENIENT,
    )


def _fields(cfg: config.Config) -> dict[str, str]:
    import asyncio

    section = asyncio.run(knowledge_section(cfg))
    assert section is not None and section.title == "Knowledge"
    return {field.label: field.value for field in section.fields}


def test_info_says_when_the_index_is_not_built(store: Path) -> None:
    fields = _fields(_config(store))

    assert fields["Index"] == "not built (fisk knowledge index builds it)"
    assert fields["Tier"] == "lexical (FTS5)"
    assert fields["Paths"] == "docs"
    assert "Embeddings" not in fields


def test_info_counts_what_the_index_holds(store: Path, tmp_path: Path) -> None:
    index(store, write_corpus(tmp_path / "docs", {"a.md": "# A\n\nalpha\n\n# B\n\nbeta\n"}))

    assert _fields(_config(store))["Index"] == "built, 1 documents, 2 chunks"


def test_info_shows_the_embeddings_endpoint_and_the_hybrid_tier(store: Path) -> None:
    cfg = _config(store, "    embeddings:\n      base_url: http://127.0.0.1:1\n      model: m\n")

    fields = _fields(cfg)
    assert fields["Embeddings"] == "m at http://127.0.0.1:1"
    assert fields["Tier"] == "hybrid (FTS5 + vectors, RRF)"


def test_info_has_no_section_with_knowledge_off() -> None:
    import asyncio

    cfg = config.parse("identity: ops\nsystem_prompt: hi\n", config.Mode.LENIENT)
    assert asyncio.run(knowledge_section(cfg)) is None


def test_the_banner_names_the_tier_and_directory_only_when_enabled(store: Path) -> None:
    assert knowledge_label(_config(store)) == f"enabled, lexical ({store})"
    off = config.parse("identity: ops\nsystem_prompt: hi\n", config.Mode.LENIENT)
    assert knowledge_label(off) == "disabled"


def test_the_banner_names_the_hybrid_tier_and_its_model(store: Path) -> None:
    cfg = _config(store, "    embeddings:\n      base_url: http://127.0.0.1:1\n      model: m\n")
    assert knowledge_label(cfg) == f"enabled, hybrid with m ({store})"
