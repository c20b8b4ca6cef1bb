"""Claude Opus 4.1 and the models before it have no tool search: a large tool set goes to them
loaded, with no search tool, and the run says which setting kept it so."""

import pytest

from fisk_ai.llm.anthropic import (
    model_has_tool_search,
    plan_tool_search,
    tool_search_off,
)
from fisk_ai.llm.types import ToolDef
from fisk_ai.tools.builtin.deferral import plan_definitions
from tests.tools.builtin.numbered_tools import app_tools

SCHEMA = {"type": "object", "properties": {}}
OPUS_4_1 = "claude-opus-4-1-20250805"


def deferrable(count: int) -> list[ToolDef]:
    return [ToolDef(f"app_{n}", "an app tool", SCHEMA, defer_loading=True) for n in range(count)]


@pytest.mark.parametrize(
    "model",
    [
        OPUS_4_1,
        "claude-opus-4-20250514",
        "claude-opus-4-0",
        "claude-sonnet-4-20250514",
        "claude-3-7-sonnet-20250219",
        "claude-3-5-haiku-latest",
        "claude-3-opus-20240229",
        "claude-2.1",
        "claude-instant-1.2",
        "anthropic.claude-opus-4-1-20250805-v1:0",
        "claude-opus-4-1@20250805",
    ],
)
def test_claude_models_before_4_5_have_no_tool_search(model: str) -> None:
    assert not model_has_tool_search(model)


@pytest.mark.parametrize(
    "model",
    [
        "claude-sonnet-4-5-20250929",
        "claude-haiku-4-5-20251001",
        "claude-opus-4-5",
        "claude-sonnet-5",
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "a-gateway-alias",
    ],
)
def test_recent_and_unrecognized_models_keep_tool_search(model: str) -> None:
    assert model_has_tool_search(model)


def test_an_old_model_gets_every_tool_loaded_and_a_warning_naming_the_model() -> None:
    planned, warning = plan_tool_search(
        deferrable(12), [], supported=True, disabled=False, model=OPUS_4_1
    )
    assert not any(tool.defer_loading for tool in planned)
    assert warning is not None
    assert OPUS_4_1 in warning and "all 12 tools are sent to the model directly" in warning


def test_the_agent_plan_for_an_old_model_names_llm_model_as_the_setting() -> None:
    plan = plan_definitions(app_tools(12), supported=True, disabled=False, model=OPUS_4_1)
    assert not plan.tool_search
    assert plan.sent_directly
    assert plan.responsible_setting == "llm.model"


def test_the_reason_tool_search_is_off_is_the_setting_an_operator_changes() -> None:
    assert tool_search_off(supported=True, disabled=False, model="claude-sonnet-5") is None
    disabled = tool_search_off(supported=True, disabled=True, model=OPUS_4_1)
    old = tool_search_off(supported=True, disabled=False, model=OPUS_4_1)
    assert disabled is not None and disabled.setting == "llm.no_tool_search"
    assert old is not None and old.setting == "llm.model"
    assert "like every Claude model up to Opus 4.1" in old.reason
