"""An embeddings block is checked when the knowledge index opens: each key it cannot work
without is refused in a sentence naming that key."""

from __future__ import annotations

import pytest

from fisk_ai import config
from fisk_ai.errors import FiskError
from fisk_ai.knowledge.embeddings import check_embeddings


def test_an_embeddings_block_without_base_url_says_it_is_required() -> None:
    settings = config.Embeddings(model="text-embedding-3-small")

    with pytest.raises(FiskError) as refused:
        check_embeddings(settings)

    assert str(refused.value) == (
        "harness.knowledge.embeddings.base_url is required when the embeddings block is "
        "present; set it or remove the block"
    )


def test_an_embeddings_block_without_model_says_it_is_required() -> None:
    settings = config.Embeddings(base_url="https://api.openai.com/v1")

    with pytest.raises(FiskError) as refused:
        check_embeddings(settings)

    assert str(refused.value) == (
        "harness.knowledge.embeddings.model is required when the embeddings block is "
        "present; set it or remove the block"
    )


def test_an_embeddings_block_with_base_url_and_model_passes() -> None:
    check_embeddings(config.Embeddings(base_url="https://api.openai.com/v1", model="m"))
