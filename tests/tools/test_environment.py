import pytest

from fisk_ai.llm.registry import credential_env_names
from fisk_ai.telemetry.credentials import OTLP_CREDENTIAL_ENV_NAMES
from fisk_ai.tools.environment import tool_environment


def test_provider_and_otlp_credentials_are_removed() -> None:
    base = dict.fromkeys(credential_env_names() | OTLP_CREDENTIAL_ENV_NAMES, "secret")
    base["PATH"] = "/usr/bin"

    assert tool_environment(base) == {"PATH": "/usr/bin", "LLMFORMAT": "1"}


def test_every_anthropic_credential_is_scrubbed() -> None:
    base = {
        "ANTHROPIC_API_KEY": "k",
        "ANTHROPIC_AUTH_TOKEN": "t",
        "ANTHROPIC_IDENTITY_TOKEN": "i",
        "ANTHROPIC_WEBHOOK_SIGNING_KEY": "w",
        "ANTHROPIC_CUSTOM_HEADERS": "h",
        "HOME": "/home/op",
    }

    assert tool_environment(base) == {"HOME": "/home/op", "LLMFORMAT": "1"}


def test_the_slack_tokens_fisk_reads_never_reach_a_tool() -> None:
    base = {"SLACK_APP_TOKEN": "xapp-1", "SLACK_BOT_TOKEN": "xoxb-1", "USER": "op"}

    assert tool_environment(base) == {"USER": "op", "LLMFORMAT": "1"}


def test_extra_secret_names_are_removed_too() -> None:
    environment = tool_environment({"EMBEDDINGS_KEY": "k", "USER": "op"}, ["EMBEDDINGS_KEY"])

    assert environment == {"USER": "op", "LLMFORMAT": "1"}


def test_llmformat_is_set_even_when_the_operator_set_it_otherwise() -> None:
    assert tool_environment({"LLMFORMAT": "0"})["LLMFORMAT"] == "1"


def test_process_environment_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FISK_TEST_VISIBLE", "yes")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")

    environment = tool_environment()

    assert environment["FISK_TEST_VISIBLE"] == "yes"
    assert "ANTHROPIC_API_KEY" not in environment
