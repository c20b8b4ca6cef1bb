"""The suite's hang guard: one bound, stretched by FISK_TEST_SLOWDOWN on a slow machine."""

import pytest

from tests.patience import SLOWDOWN_VARIABLE, slowdown


def test_without_the_variable_the_guard_is_not_stretched() -> None:
    assert slowdown({}) == 1.0


def test_the_variable_multiplies_the_guard() -> None:
    assert slowdown({SLOWDOWN_VARIABLE: "2.5"}) == 2.5


@pytest.mark.parametrize("text", ["fast", "0", "-1"])
def test_a_factor_that_is_not_a_positive_number_is_refused_naming_the_variable(text: str) -> None:
    with pytest.raises(ValueError, match=SLOWDOWN_VARIABLE):
        slowdown({SLOWDOWN_VARIABLE: text})
