from collections.abc import Callable

import pytest

from fisk_ai.util.registry import Registry

Factory = Callable[[], str]


class WidgetError(Exception):
    pass


def widgets() -> Registry[Factory]:
    def builtins(registry: Registry[Factory]) -> None:
        registry.register("round", lambda: "round")

    return Registry[Factory]("widget", key="shop.widget", error=WidgetError, builtins=builtins)


def test_the_built_ins_are_registered_on_the_first_read() -> None:
    assert widgets().names() == ["round"]


def test_a_registered_factory_is_found_by_name() -> None:
    registry = widgets()
    registry.register("square", lambda: "square")

    assert registry.lookup("square")() == "square"
    assert registry.names() == ["round", "square"]


def test_an_unknown_name_raises_the_owners_error_naming_the_key_and_the_choices() -> None:
    with pytest.raises(WidgetError) as raised:
        widgets().lookup("oval")

    assert str(raised.value) == "shop.widget 'oval' is not a known widget; use one of: round"


def test_registration_refuses_an_empty_name() -> None:
    with pytest.raises(ValueError, match="a widget needs a name"):
        widgets().register("", lambda: "")


def test_registration_refuses_a_missing_factory() -> None:
    with pytest.raises(ValueError, match="widget 'square' needs a factory"):
        widgets().register("square", None)


def test_registration_refuses_the_name_of_a_built_in_before_any_read() -> None:
    with pytest.raises(ValueError, match="widget 'round' is already registered"):
        widgets().register("round", lambda: "another")


def test_a_copy_registers_apart_from_its_original() -> None:
    original = widgets()
    copy = original.copy()
    copy.register("square", lambda: "square")

    assert original.names() == ["round"]
    assert copy.names() == ["round", "square"]
