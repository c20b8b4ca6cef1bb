from __future__ import annotations

import string

import pytest

from fisk_ai.util.ids import KSUID_EPOCH, ksuid_timestamp, new_ksuid

BASE62 = set(string.digits + string.ascii_letters)


def test_a_ksuid_is_27_base62_characters() -> None:
    ksuid = new_ksuid()

    assert len(ksuid) == 27
    assert set(ksuid) <= BASE62


def test_a_ksuid_carries_the_second_it_was_made() -> None:
    assert ksuid_timestamp(new_ksuid(now=1_750_000_000.9)) == 1_750_000_000


def test_later_ksuids_sort_after_earlier_ones() -> None:
    earlier = [new_ksuid(now=1_750_000_000) for _ in range(20)]
    later = [new_ksuid(now=1_750_000_001) for _ in range(20)]

    assert max(earlier) < min(later)


def test_ksuids_made_in_the_same_second_differ() -> None:
    assert len({new_ksuid(now=1_750_000_000) for _ in range(100)}) == 100


def test_the_first_second_of_the_epoch_is_padded_to_full_width() -> None:
    ksuid = new_ksuid(now=KSUID_EPOCH)

    assert len(ksuid) == 27
    assert ksuid_timestamp(ksuid) == KSUID_EPOCH


def test_a_time_before_the_epoch_is_refused() -> None:
    with pytest.raises(ValueError, match="outside the range"):
        new_ksuid(now=KSUID_EPOCH - 1)


@pytest.mark.parametrize("text", ["short", "!" * 27, "z" * 27])
def test_text_that_is_not_a_ksuid_has_no_timestamp(text: str) -> None:
    with pytest.raises(ValueError):
        ksuid_timestamp(text)
