"""Every agent.yaml key and the evidence that it is not inert (see test_nothing_inert.py).

A key is witnessed by ``effect(...)``: tests, named ``path::function``, that fail if the key set
to a non-default value stopped changing what a user sees (where the value travels through a
settings object first, the test that reads it off the configuration is cited beside the one that
shows what it does); or by ``refused(...)``: a key accepted only for compatibility with the Go
fisk-ai, whose loading is refused or warned about by a sentence naming it. ``gap(...)`` records a
key whose effect exists in the code but that no test proves yet; test_nothing_inert lists these
as an expected failure, so each one stays visible until a test closes it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Effect:
    """Tests that fail if the key had no effect."""

    tests: tuple[str, ...]


@dataclass(frozen=True)
class Refused:
    """A key refused or warned about on loading; the sentence holds ``says`` and the key."""

    says: str
    fatal: bool
    names: str = ""  # the key the sentence names when it is a parent block, not the key itself


@dataclass(frozen=True)
class Gap:
    """A key with an effect in the code that no test proves yet; where that effect is."""

    where: str


Witness = Effect | Refused | Gap


def effect(*tests: str) -> Effect:
    return Effect(tests)


def refused(says: str, *, fatal: bool, names: str = "") -> Refused:
    return Refused(says, fatal, names)


def gap(where: str) -> Gap:
    return Gap(where)


RUNNER = "tests/agent/test_runner.py"
SETTINGS = f"{RUNNER}::test_settings_come_from_the_configuration"
LLM_SETTINGS = f"{RUNNER}::test_every_llm_and_pii_key_reaches_the_run_settings"
RUN = "tests/e2e/test_run.py"
LLM_REQUEST = f"{RUN}::test_the_files_llm_keys_shape_the_request_the_model_receives"
A2A_BANNER = (
    "tests/e2e/test_serve_tools.py::"
    "test_the_files_a2a_keys_set_what_the_banner_says_each_endpoint_allows"
)
JOBS = (
    "tests/serve/jobs/test_channel.py::"
    "test_the_files_jobs_keys_choose_queue_task_type_context_and_payload_limit"
)
EMBEDDINGS = "tests/knowledge/test_hybrid.py::test_the_files_embeddings_keys_shape_every_request"
REMOTE_SELECTION = (
    "tests/serve/test_remote.py::"
    "test_a_hosts_include_and_exclude_choose_which_of_its_tools_are_imported"
)
INFO_SELECTION = "tests/e2e/test_info.py::test_include_and_exclude_choose_the_tools_by_name_and_tag"
LOOP = "tests/agent/test_loop.py"
SLACK = "tests/serve/slack/test_settings.py"
A2A_HTTP = "tests/serve/test_a2a_http.py"
MCP_CLIENT = "tests/mcp/test_client.py"
MCP_SERVED = "tests/e2e/test_mcp.py::test_every_mcp_key_shows_in_what_fisk_mcp_serves"
MEMORY = "tests/memory/test_hosting.py"
KNOWLEDGE_TOOLS = "tests/knowledge/test_tools.py"
KNOWLEDGE_RUN = (
    "tests/knowledge/test_agent.py::"
    "test_the_files_directory_top_k_and_token_budget_shape_what_the_tools_return"
)
TELEMETRY = "tests/telemetry/test_operator_surfaces.py"
TELEMETRY_FILE = f"{RUN}::test_the_files_telemetry_keys_reach_the_collector"
SERVE_TOOLS = "tests/serve/test_tools.py"

WITNESSES: dict[str, Witness] = {
    # Top level
    "identity": effect(
        "tests/config/test_funnel.py::test_file_memory_directory_defaults_under_the_identity"
    ),
    "application_path": effect("tests/e2e/test_info.py::test_cowsay_example_lists_say_and_think"),
    "nats_context": effect(f"{MEMORY}::test_the_jetstream_backend_binds_through_the_nats_context"),
    "system_prompt": effect(LLM_REQUEST),
    "include.tools": effect(INFO_SELECTION),
    "include.tags": effect(INFO_SELECTION),
    "exclude.tools": effect(INFO_SELECTION),
    "exclude.tags": effect(INFO_SELECTION),
    "global_flags": effect(
        "tests/e2e/test_info.py::test_gated_nested_command_denied_hidden_and_globals"
    ),
    "remote_agents": refused('"remote_agents" does nothing', fatal=False),
    "remote_agents[].name": refused(
        '"remote_agents" does nothing', fatal=False, names="remote_agents"
    ),
    "remote_agents[].alias": refused(
        '"remote_agents" does nothing', fatal=False, names="remote_agents"
    ),
    # remote_tools
    "remote_tools": effect(
        "tests/e2e/test_remote_tools.py::test_a_run_calls_the_peers_tool_and_counts_the_remote_call"
    ),
    "remote_tools[].name": effect(
        "tests/e2e/test_remote_tools.py::test_a_run_calls_the_peers_tool_and_counts_the_remote_call"
    ),
    "remote_tools[].alias": effect(
        "tests/e2e/test_remote_tools.py::test_info_lists_the_remote_tools_with_the_alias_as_source"
    ),
    "remote_tools[].include.tools": effect(REMOTE_SELECTION),
    "remote_tools[].include.tags": refused(
        "is ignored, since a remote agent's tool list carries no tags", fatal=False
    ),
    "remote_tools[].exclude.tools": effect(REMOTE_SELECTION),
    "remote_tools[].exclude.tags": refused(
        "cannot be used, since a remote agent's tool list carries no tags", fatal=True
    ),
    # mcp_clients
    "mcp_clients": effect("tests/e2e/test_mcp.py::test_the_model_calls_an_imported_mcp_tool"),
    "mcp_clients[].name": effect(
        "tests/e2e/test_mcp.py::test_info_reports_each_server_and_a_down_one_without_its_secret"
    ),
    "mcp_clients[].alias": effect(
        "tests/e2e/test_mcp_interop.py::test_the_client_imports_server_everything_over_stdio"
    ),
    "mcp_clients[].command": effect(
        f"{MCP_CLIENT}::test_stdio_server_tools_are_imported_and_called"
    ),
    "mcp_clients[].args": effect(f"{MCP_CLIENT}::test_stdio_server_tools_are_imported_and_called"),
    "mcp_clients[].env": effect(
        f"{MCP_CLIENT}::test_the_child_gets_its_env_and_never_the_provider_key"
    ),
    "mcp_clients[].url": effect(
        f"{MCP_CLIENT}::test_streamable_http_server_tools_are_imported_with_headers"
    ),
    "mcp_clients[].headers": effect(
        f"{MCP_CLIENT}::test_streamable_http_server_tools_are_imported_with_headers"
    ),
    "mcp_clients[].timeout": effect(
        f"{MCP_CLIENT}::test_a_server_that_never_answers_fails_within_its_timeout"
    ),
    "mcp_clients[].include.tools": effect(
        "tests/e2e/test_mcp.py::test_the_model_calls_an_imported_mcp_tool",
        "tests/e2e/test_mcp.py::test_info_reports_each_server_and_a_down_one_without_its_secret",
    ),
    "mcp_clients[].include.tags": refused(
        "is ignored, since an MCP server's tool list carries no tags", fatal=False
    ),
    "mcp_clients[].exclude.tools": effect(
        f"{MCP_CLIENT}::test_an_entrys_exclude_leaves_out_the_tools_it_names"
    ),
    "mcp_clients[].exclude.tags": refused(
        "cannot be used, since an MCP server's tool list carries no tags", fatal=True
    ),
    # expose.agent.tools
    "expose.agent.tools.include.tools": effect(
        f"{SERVE_TOOLS}::test_expose_agent_tools_narrows_the_selection",
        "tests/e2e/test_serve_tools.py::test_serve_prints_the_banner_answers_discover_and_drains_on_sigint",
    ),
    "expose.agent.tools.include.tags": effect(MCP_SERVED),
    "expose.agent.tools.exclude.tools": effect(
        f"{SERVE_TOOLS}::test_expose_agent_tools_narrows_the_selection", MCP_SERVED
    ),
    "expose.agent.tools.exclude.tags": effect(MCP_SERVED),
    # expose.agent.mcp
    "expose.agent.mcp": effect(
        "tests/e2e/test_mcp.py::test_fisk_mcp_refuses_a_configuration_without_the_block",
        "tests/e2e/test_mcp.py::test_fisk_mcp_serves_lists_calls_and_drains_on_interrupt",
    ),
    "expose.agent.mcp.port": effect(MCP_SERVED),
    "expose.agent.mcp.address": effect(MCP_SERVED),
    "expose.agent.mcp.instructions": effect(MCP_SERVED),
    "expose.agent.mcp.confirm_over_mcp": effect(
        MCP_SERVED, "tests/mcp/test_server.py::test_never_asks_even_a_client_that_could_answer"
    ),
    "expose.agent.mcp.builtins": effect(
        "tests/telemetry/test_call_spans.py::test_a_call_served_by_fisk_mcp_is_a_server_span_over_the_knowledge_search",
        "tests/mcp/test_server.py::test_knowledge_tools_are_served_only_as_builtins_names_them",
    ),
    "expose.agent.mcp.max_concurrent_tools": effect(
        MCP_SERVED, "tests/mcp/test_server.py::test_calls_past_the_limit_wait_for_a_slot"
    ),
    "expose.agent.mcp.tool_timeout": effect(
        MCP_SERVED,
        "tests/mcp/test_server.py::test_the_tool_timeout_stops_the_command_and_its_process_group",
    ),
    # expose.agent.a2a
    "expose.agent.a2a": effect(
        "tests/e2e/test_serve_tools.py::test_a_served_call_runs_the_command"
    ),
    "expose.agent.a2a.serve_tools": effect(
        "tests/e2e/test_serve_tools.py::test_a_served_call_runs_the_command"
    ),
    "expose.agent.a2a.prompts": effect(
        "tests/e2e/test_serve_prompts_wire.py::test_an_approval_answered_over_nats_runs_the_gated_command"
    ),
    "expose.agent.a2a.prompts.workers": effect(
        A2A_BANNER,
        "tests/serve/prompts/test_intake.py::test_a_prompt_with_every_worker_busy_is_refused_for_capacity",
    ),
    "expose.agent.a2a.prompts.elicit": effect(
        "tests/e2e/test_serve_prompts_wire.py::test_an_approval_answered_over_nats_runs_the_gated_command"
    ),
    "expose.agent.a2a.max_concurrent_tools": effect(
        A2A_BANNER, f"{SERVE_TOOLS}::test_a_call_with_every_slot_busy_is_refused_for_capacity"
    ),
    "expose.agent.a2a.tool_timeout": effect(
        A2A_BANNER, f"{SERVE_TOOLS}::test_tool_timeout_stops_the_command"
    ),
    "expose.agent.a2a.request_timeout": effect(
        "tests/serve/test_remote.py::test_the_request_timeout_is_floored_at_three_keepalive_intervals"
    ),
    # expose.agent.jobs
    "expose.agent.jobs": effect(
        "tests/e2e/test_serve_jobs.py::test_one_process_answers_prompts_and_jobs"
    ),
    "expose.agent.jobs.queue": effect(JOBS),
    "expose.agent.jobs.task_type": effect(JOBS),
    "expose.agent.jobs.workers": effect(JOBS),
    "expose.agent.jobs.nats_context": effect(JOBS),
    "expose.agent.jobs.max_payload": effect(JOBS),
    # expose.agent.a2a_http
    "expose.agent.a2a_http": effect(
        f"{A2A_HTTP}::test_the_card_names_the_agent_its_commands_and_the_url_it_answers_at"
    ),
    "expose.agent.a2a_http.address": effect(
        f"{A2A_HTTP}::test_without_a_token_off_loopback_the_operator_is_warned"
    ),
    "expose.agent.a2a_http.port": effect(f"{A2A_HTTP}::test_the_endpoint_listens_on_the_port_set"),
    "expose.agent.a2a_http.public_url": effect(f"{A2A_HTTP}::test_the_card_gives_the_public_url"),
    "expose.agent.a2a_http.token_env": effect(
        f"{A2A_HTTP}::test_with_a_token_a_call_without_it_is_refused_and_the_card_says_so"
    ),
    "expose.agent.a2a_http.plaintext_token": effect(
        f"{A2A_HTTP}::test_plaintext_token_lets_the_token_cross_plain_http_off_loopback"
    ),
    # expose.agent.slack
    "expose.agent.slack": effect(
        "tests/serve/slack/test_serve_command.py::test_fisk_serve_answers_a_mention_and_drains_on_interrupt"
    ),
    "expose.agent.slack.workers": effect(
        f"{SLACK}::test_workers_bounds_the_turns_running_at_once_and_the_rest_show_queued"
    ),
    "expose.agent.slack.context_lines": effect(
        f"{SLACK}::test_context_lines_bounds_the_conversation_a_turn_reads",
        f"{SLACK}::test_context_lines_zero_reads_nothing_around_the_mention",
    ),
    "expose.agent.slack.no_progress": effect(
        f"{SLACK}::test_no_progress_posts_the_answer_without_a_status_message"
    ),
    "expose.agent.slack.answer_grace": effect(
        f"{SLACK}::test_lines_behind_a_turn_that_ends_on_a_question_are_given_back"
    ),
    "expose.agent.slack.max_waiting": effect(
        f"{SLACK}::test_max_waiting_refuses_the_next_mention_with_a_short_reply"
    ),
    "expose.agent.slack.max_coalesced": effect(
        f"{SLACK}::test_max_coalesced_folds_one_persons_lines_into_one_follow_up_turn"
    ),
    # harness
    "harness.human_in_the_loop.enabled": effect(
        f"{RUN}::test_ten_tools_defer_the_application_behind_bm25_search",
        "tests/e2e/test_serve_tools.py::test_serve_prints_the_banner_answers_discover_and_drains_on_sigint",
    ),
    "harness.confirm_tags": effect(
        "tests/e2e/test_info.py::test_confirm_tags_gate_and_unmatched_entry_warns",
        f"{LOOP}::test_a_confirm_tags_entry_gates_like_ai_confirm",
    ),
    "harness.no_tui": effect(
        "tests/tui/test_config_before_screen.py::test_harness_no_tui_answers_in_lines_without_taking_the_screen"
    ),
    "harness.no_bell": effect(
        "tests/tui/test_bell.py::test_a_question_rings_the_bell_unless_the_file_says_no_bell"
    ),
    "harness.tool_timeout": effect(
        SETTINGS, f"{LOOP}::test_the_timeout_text_is_in_place_before_post_tool_use"
    ),
    "harness.memory.enabled": effect(
        "tests/memory/test_agent.py::test_the_tool_set_has_the_memory_tools_when_enabled"
    ),
    "harness.memory.backend": effect(
        f"{MEMORY}::test_the_jetstream_backend_binds_through_the_nats_context"
    ),
    "harness.memory.no_index": effect(
        "tests/memory/test_agent.py::test_no_index_leaves_the_index_out"
    ),
    "harness.memory.read_only": effect(
        "tests/e2e/test_memory.py::test_read_only_memory_offers_only_the_readers"
    ),
    "harness.memory.options": effect(
        f"{MEMORY}::test_the_jetstream_backend_binds_through_the_nats_context"
    ),
    "harness.memory.options.directory": effect(
        f"{MEMORY}::test_a_written_directory_is_where_the_file_backend_keeps_the_notes"
    ),
    "harness.memory.options.bucket": effect(
        f"{MEMORY}::test_a_missing_bucket_fails_before_any_run"
    ),
    "harness.memory.options.prefix": effect(f"{MEMORY}::test_an_explicit_empty_prefix_is_flat"),
    "harness.memory.options.no_require_read_before_update": effect(
        f"{MEMORY}::test_the_jetstream_backend_binds_through_the_nats_context"
    ),
    "harness.knowledge.enabled": effect(
        "tests/knowledge/test_agent.py::test_the_tools_and_the_note_come_only_when_knowledge_is_enabled"
    ),
    "harness.knowledge.paths": effect(
        "tests/knowledge/test_cli.py::test_index_then_search_then_show"
    ),
    "harness.knowledge.directory": effect(KNOWLEDGE_RUN),
    "harness.knowledge.top_k": effect(
        KNOWLEDGE_RUN, f"{KNOWLEDGE_TOOLS}::test_top_k_from_the_call_then_from_the_config"
    ),
    "harness.knowledge.max_injected_tokens": effect(
        KNOWLEDGE_RUN,
        f"{KNOWLEDGE_TOOLS}::test_enumerate_gets_a_quarter_of_the_budget_and_at_least_one",
    ),
    "harness.knowledge.embeddings": effect(
        EMBEDDINGS, "tests/knowledge/test_hybrid.py::test_hybrid_finds_the_passage_a_synonym_names"
    ),
    "harness.knowledge.embeddings.provider": effect(
        "tests/knowledge/test_local_embedder.py::test_info_names_the_local_embedder_and_the_manifest_model"
    ),
    "harness.knowledge.embeddings.base_url": effect(
        EMBEDDINGS,
        "tests/knowledge/test_agent.py::test_hosting_refuses_plain_http_embeddings_off_loopback",
    ),
    "harness.knowledge.embeddings.model": effect(
        EMBEDDINGS,
        "tests/knowledge/test_doctor.py::test_the_doctor_command_exits_1_on_a_model_mismatch",
    ),
    "harness.knowledge.embeddings.api_key_env": effect(EMBEDDINGS),
    "harness.knowledge.embeddings.timeout": effect(
        "tests/knowledge/test_hybrid.py::test_the_embeddings_timeout_bounds_an_endpoint_that_never_answers"
    ),
    "harness.knowledge.embeddings.query_prefix": effect(EMBEDDINGS),
    "harness.knowledge.embeddings.document_prefix": effect(EMBEDDINGS),
    "harness.sessions.backend": effect(
        "tests/e2e/test_session_jetstream.py::test_a_run_is_listed_shown_and_removed_from_the_stream"
    ),
    "harness.sessions.options": effect(
        "tests/e2e/test_session_jetstream.py::test_a_missing_stream_fails_the_command_with_the_fix"
    ),
    "harness.sessions.options.directory": effect(
        "tests/e2e/test_serve_jobs.py::test_a_job_beside_prompts_ends_completed_and_a_prompt_stays_open"
    ),
    "harness.sessions.options.stream": effect(
        "tests/e2e/test_session_jetstream.py::test_a_missing_stream_fails_the_command_with_the_fix"
    ),
    "harness.pii.mode": effect(
        LLM_SETTINGS,
        "tests/agent/test_pii.py::test_reject_refuses_the_prompt_in_a_run",
        "tests/agent/test_pii.py::test_off_lets_everything_through",
    ),
    # llm
    "llm.model": effect(LLM_REQUEST),
    "llm.provider": effect(f"{RUN}::test_the_files_llm_provider_chooses_who_answers"),
    "llm.budget.max_tokens": effect(
        SETTINGS, f"{LOOP}::test_the_token_budget_stops_a_turn_before_its_tool_batch"
    ),
    "llm.budget.max_output_tokens": effect(LLM_REQUEST),
    "llm.budget.max_iterations": effect(
        SETTINGS, f"{LOOP}::test_a_turn_stops_at_its_iteration_allowance"
    ),
    "llm.budget.call_timeout": effect(
        SETTINGS, "tests/llm/test_anthropic.py::test_a_call_past_its_timeout_names_call_timeout"
    ),
    "llm.thinking": effect(
        LLM_REQUEST, f"{RUNNER}::test_unset_thinking_sends_no_thinking_parameter"
    ),
    "llm.thinking.enabled": effect(LLM_REQUEST, SETTINGS),
    "llm.reasoning_effort": effect(LLM_REQUEST),
    "llm.no_prompt_cache": effect(
        LLM_REQUEST, f"{RUN}::test_cache_breakpoints_sit_on_the_last_system_block_and_the_request"
    ),
    "llm.no_tool_search": effect(
        LLM_SETTINGS, f"{LOOP}::test_a_large_tool_set_without_tool_search_warns_once"
    ),
    # telemetry
    "telemetry.enabled": effect(
        f"{TELEMETRY}::test_a_run_that_exports_says_how_many_spans_reached_the_collector"
    ),
    "telemetry.endpoint": effect(
        f"{TELEMETRY}::test_a_run_that_exports_says_how_many_spans_reached_the_collector"
    ),
    "telemetry.service_name": effect(TELEMETRY_FILE),
    "telemetry.sample_ratio": effect(f"{RUN}::test_a_files_sample_ratio_of_zero_exports_no_spans"),
    "telemetry.no_metrics": effect(TELEMETRY_FILE),
    "telemetry.capture.enabled": effect(TELEMETRY_FILE),
    "telemetry.capture.messages": effect(TELEMETRY_FILE),
    "telemetry.capture.max_bytes": effect(
        f"{RUN}::test_the_files_capture_max_bytes_cuts_what_each_span_carries"
    ),
}
