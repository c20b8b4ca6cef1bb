from __future__ import annotations

from datetime import timedelta

import pytest

from fisk_ai.config import (
    A2aExposure,
    CaptureMessages,
    Config,
    ConfigError,
    ConfirmOverMcp,
    Mode,
    PiiMode,
    StoreBackend,
    parse,
)
from fisk_ai.config.models import usable_cpu_count


def parsed(text: str) -> Config:
    return parse(text, Mode.LENIENT)


def refusal(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse(text, Mode.LENIENT)
    assert "\n" not in str(caught.value)
    return caught.value


def test_harness_tool_timeout_defaults_to_five_minutes() -> None:
    assert parsed("identity: a").harness.tool_timeout == timedelta(minutes=5)


def test_harness_tool_timeout_zero_means_no_limit_and_is_kept() -> None:
    assert parsed("harness: {tool_timeout: 0s}").harness.tool_timeout == timedelta(0)


def test_budget_defaults() -> None:
    budget = parsed("identity: a").llm.budget
    assert budget.max_tokens == 500000
    assert budget.max_output_tokens == 0
    assert budget.max_iterations == 50
    assert budget.call_timeout == timedelta(seconds=120)


def test_budget_refuses_negatives() -> None:
    error = refusal("llm: {budget: {max_output_tokens: -1}}")
    assert error.key == "llm.budget.max_output_tokens"


def test_budget_refuses_a_zero_iteration_cap() -> None:
    error = refusal("llm: {budget: {max_iterations: 0}}")
    assert "at least 1" in str(error)


def test_provider_defaults_to_anthropic() -> None:
    assert parsed("identity: a").llm.provider == "anthropic"


def test_thinking_absent_is_none() -> None:
    assert parsed("llm: {model: m}").llm.thinking is None


def test_thinking_enabled_true_asks_for_thinking() -> None:
    thinking = parsed("llm: {thinking: {enabled: true}}").llm.thinking
    assert thinking is not None
    assert thinking.enabled


def test_thinking_enabled_false_asks_for_it_off() -> None:
    thinking = parsed("llm: {thinking: {enabled: false}}").llm.thinking
    assert thinking is not None
    assert not thinking.enabled


def test_thinking_written_without_a_value_is_absent() -> None:
    assert parsed("llm:\n  thinking:\n").llm.thinking is None


def test_sample_ratio_absent_stays_none() -> None:
    assert parsed("telemetry: {enabled: true}").telemetry.sample_ratio is None


def test_sample_ratio_zero_stays_zero() -> None:
    assert parsed("telemetry: {sample_ratio: 0}").telemetry.sample_ratio == 0.0


def test_sample_ratio_out_of_range_is_not_read_while_telemetry_is_off() -> None:
    assert parsed("telemetry: {sample_ratio: 1.5}").telemetry.sample_ratio == 1.5


def test_sample_ratio_above_one_is_refused_when_telemetry_is_enabled() -> None:
    error = refusal("telemetry: {enabled: true, sample_ratio: 1.5}")
    assert error.key == "telemetry.sample_ratio"
    assert "between 0 and 1" in str(error)


def test_capture_defaults_to_delta_messages() -> None:
    capture = parsed("identity: a").telemetry.capture
    assert capture.messages is CaptureMessages.DELTA
    assert not capture.enabled


def test_a2a_defaults() -> None:
    a2a = parsed("expose: {agent: {a2a: {serve_tools: true}}}").expose.agent.a2a
    assert a2a is not None
    assert a2a.tool_timeout == timedelta(seconds=30)
    assert a2a.request_timeout == timedelta(seconds=120)
    assert a2a.max_concurrent_tools == usable_cpu_count()
    assert a2a.prompts is None


def test_an_absent_a2a_block_has_the_same_defaults_as_an_empty_one() -> None:
    assert A2aExposure().request_timeout == timedelta(seconds=120)


def test_a2a_concurrency_out_of_range_is_refused() -> None:
    error = refusal("expose: {agent: {a2a: {max_concurrent_tools: 2000}}}")
    assert error.key == "expose.agent.a2a.max_concurrent_tools"


def test_prompts_defaults() -> None:
    a2a = parsed("expose: {agent: {a2a: {prompts: {}}}}").expose.agent.a2a
    assert a2a is not None
    assert a2a.prompts is not None
    assert a2a.prompts.workers == 1
    assert not a2a.prompts.elicit


def test_mcp_exposure_defaults() -> None:
    mcp = parsed("expose: {agent: {mcp: {}}}").expose.agent.mcp
    assert mcp is not None
    assert mcp.confirm_over_mcp is ConfirmOverMcp.AUTO
    assert mcp.max_concurrent_tools == 2
    assert mcp.tool_timeout == timedelta(seconds=30)


def test_mcp_concurrency_zero_means_the_default() -> None:
    mcp = parsed("expose: {agent: {mcp: {max_concurrent_tools: 0}}}").expose.agent.mcp
    assert mcp is not None
    assert mcp.max_concurrent_tools == 2


def test_mcp_concurrency_negative_is_refused() -> None:
    error = refusal("expose: {agent: {mcp: {max_concurrent_tools: -1}}}")
    assert error.key == "expose.agent.mcp.max_concurrent_tools"


def test_confirm_over_mcp_ignores_case() -> None:
    mcp = parsed("expose: {agent: {mcp: {confirm_over_mcp: Always}}}").expose.agent.mcp
    assert mcp is not None
    assert mcp.confirm_over_mcp is ConfirmOverMcp.ALWAYS


def test_confirm_over_mcp_outside_the_vocabulary_lists_the_choices() -> None:
    error = refusal("expose: {agent: {mcp: {confirm_over_mcp: sometimes}}}")
    assert "auto, always, never" in str(error)


def test_jobs_defaults() -> None:
    jobs = parsed("expose: {agent: {jobs: {}}}").expose.agent.jobs
    assert jobs is not None
    assert (jobs.queue, jobs.task_type, jobs.workers, jobs.max_payload) == (
        "FISK_AI",
        "fisk-ai:run",
        1,
        524288,
    )


def test_slack_defaults() -> None:
    slack = parsed("expose: {agent: {slack: {}}}").expose.agent.slack
    assert slack is not None
    assert (slack.workers, slack.context_lines, slack.no_progress) == (5, 20, False)
    assert slack.answer_grace == timedelta(seconds=30)
    assert (slack.max_waiting, slack.max_coalesced) == (10, 5)


def test_mcp_client_timeout_defaults_to_thirty_seconds() -> None:
    client = parsed("mcp_clients: [{name: fs, command: npx}]").mcp_clients[0]
    assert client.timeout == timedelta(seconds=30)


def test_knowledge_defaults() -> None:
    knowledge = parsed("identity: a").harness.knowledge
    assert (knowledge.top_k, knowledge.max_injected_tokens) == (5, 6000)
    assert knowledge.embeddings is None


def test_knowledge_top_k_above_twenty_is_refused() -> None:
    error = refusal("harness: {knowledge: {top_k: 21}}")
    assert "between 1 and 20" in str(error)


def test_an_embeddings_block_setting_only_a_timeout_parses() -> None:
    # As the Go fisk-ai parses it: the endpoint's keys are checked when the index is opened.
    embeddings = parsed("harness: {knowledge: {embeddings: {timeout: 5s}}}").harness.knowledge
    assert embeddings.embeddings is not None
    assert embeddings.embeddings.timeout == timedelta(seconds=5)


def test_an_embeddings_block_without_base_url_is_refused_when_the_index_opens() -> None:
    from fisk_ai.errors import FiskError
    from fisk_ai.knowledge.embeddings import check_embeddings

    embeddings = parsed("harness: {knowledge: {embeddings: {timeout: 5s}}}").harness.knowledge
    assert embeddings.embeddings is not None
    with pytest.raises(FiskError, match=r"harness\.knowledge\.embeddings\.base_url"):
        check_embeddings(embeddings.embeddings)


def test_embeddings_timeout_defaults_to_thirty_seconds() -> None:
    embeddings = parsed(
        "harness: {knowledge: {embeddings: {base_url: 'http://127.0.0.1:1/v1', model: e}}}"
    ).harness.knowledge.embeddings
    assert embeddings is not None
    assert embeddings.timeout == timedelta(seconds=30)


def test_pii_defaults_to_redact() -> None:
    assert parsed("identity: a").harness.pii.mode is PiiMode.REDACT


def test_memory_defaults_to_the_file_backend() -> None:
    memory = parsed("harness: {memory: {enabled: true}}").harness.memory
    assert memory.backend is StoreBackend.FILE
    assert not memory.read_only


def test_tool_filter_patterns_are_compiled() -> None:
    config = parsed("include: {tools: ['^say', '^think']}")
    assert [p.pattern for p in config.include.tool_patterns] == ["^say", "^think"]
    assert config.include.tool_patterns[0].search("say_hello")


def test_a_key_written_without_a_value_keeps_its_default() -> None:
    assert parsed("llm:\n  provider:\n").llm.provider == "anthropic"


def test_config_is_read_only() -> None:
    config = parsed("identity: a")
    with pytest.raises(ValueError, match="frozen"):
        config.identity = "b"  # type: ignore[misc]


def test_reasoning_effort_is_trimmed_and_lowercased() -> None:
    assert parsed("llm: {reasoning_effort: ' XHigh '}").llm.reasoning_effort == "xhigh"


@pytest.mark.parametrize("effort", ["very high", "high!", "level2", "x" * 33])
def test_reasoning_effort_that_no_provider_could_take_is_refused(effort: str) -> None:
    error = refusal(f"llm: {{reasoning_effort: '{effort}'}}")
    assert error.key == "llm.reasoning_effort"


def test_reasoning_effort_may_hold_underscores_and_hyphens() -> None:
    assert parsed("llm: {reasoning_effort: extra_high-max}").llm.reasoning_effort == (
        "extra_high-max"
    )


def test_an_unquoted_off_in_a_choice_key_is_the_word() -> None:
    assert parsed("harness: {pii: {mode: off}}").harness.pii.mode.value == "off"


def test_yes_in_a_boolean_key_is_refused_naming_the_key() -> None:
    error = refusal("harness:\n  no_bell: yes\n")
    assert error.key == "harness.no_bell"
    assert error.line == 2
    assert "true or false" in str(error)


def test_a_number_in_a_text_key_is_the_text_as_written() -> None:
    assert parsed("system_prompt: 0x1F").system_prompt == "0x1F"
