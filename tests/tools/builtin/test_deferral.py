from fisk_ai.tools.builtin.deferral import TOOL_SEARCH_THRESHOLD, plan_definitions
from fisk_ai.tools.builtin.hitl import hitl_tools
from tests.tools.builtin.numbered_tools import app_tools

MODEL = "claude-sonnet-4-5"
"""A model that offers tool search."""


def test_a_small_set_is_sent_in_full() -> None:
    plan = plan_definitions(
        app_tools(TOOL_SEARCH_THRESHOLD - 1), supported=True, disabled=False, model=MODEL
    )

    assert not any(definition.defer_loading for definition in plan.definitions)
    assert not plan.tool_search
    assert not plan.sent_directly


def test_at_the_threshold_application_tools_are_deferred_and_builtins_are_not() -> None:
    tools = [*app_tools(TOOL_SEARCH_THRESHOLD - 3), *hitl_tools()]

    plan = plan_definitions(tools, supported=True, disabled=False, model=MODEL)

    deferred = {definition.name: definition.defer_loading for definition in plan.definitions}
    assert deferred["cmd0"]
    assert not deferred["ask_human_confirm"]
    assert plan.tool_search


def test_builtins_are_counted_toward_the_threshold() -> None:
    tools = [*app_tools(TOOL_SEARCH_THRESHOLD - 3), *hitl_tools()]

    plan = plan_definitions(tools, supported=False, disabled=False, model=MODEL)

    assert plan.sent_directly


def test_no_defer_keeps_a_tool_loaded() -> None:
    plan = plan_definitions(
        app_tools(TOOL_SEARCH_THRESHOLD, no_defer="cmd1"),
        supported=True,
        disabled=False,
        model=MODEL,
    )

    deferred = {definition.name: definition.defer_loading for definition in plan.definitions}
    assert not deferred["cmd1"]
    assert deferred["cmd2"]


def test_no_tool_search_sends_everything_directly() -> None:
    plan = plan_definitions(
        app_tools(TOOL_SEARCH_THRESHOLD), supported=True, disabled=True, model=MODEL
    )

    assert not any(definition.defer_loading for definition in plan.definitions)
    assert plan.sent_directly


def test_builtins_come_after_the_deferrable_tools() -> None:
    plan = plan_definitions(
        [*hitl_tools(), *app_tools(2)], supported=True, disabled=False, model=MODEL
    )

    assert [definition.name for definition in plan.definitions] == [
        "cmd0",
        "cmd1",
        "ask_human_confirm",
        "ask_human_select",
        "ask_human_input",
    ]
