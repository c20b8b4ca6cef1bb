from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from fisk_ai.config import (
    Config,
    ConfigError,
    FileMemoryOptions,
    FileSessionsOptions,
    JetStreamMemoryOptions,
    Mode,
    decode_options,
    load,
    parse,
    require_something_to_serve,
)

AGENT_MINIMUM = "llm: {model: claude-sonnet-5}\nsystem_prompt: Tell jokes.\n"


def parsed(text: str, mode: Mode = Mode.LENIENT, *, base_dir: Path | None = None) -> Config:
    return parse(textwrap.dedent(text), mode, base_dir=base_dir)


def refusal(text: str, mode: Mode = Mode.LENIENT) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse(textwrap.dedent(text), mode)
    message = str(caught.value)
    assert "\n" not in message, message
    return caught.value


# Stage one: strict unmarshal


def test_unknown_top_level_key_names_the_key_and_line() -> None:
    error = refusal("""\
        system_prompt: hi
        sytem_prompt: hi
    """)
    assert str(error) == (
        'agent.yaml line 2: unknown key "sytem_prompt" (did you mean "system_prompt"?)'
    )


def test_unknown_nested_key_suggests_the_close_one() -> None:
    error = refusal("""\
        harness:
          no_tui: true
          memroy:
            enabled: true
    """)
    assert str(error) == 'agent.yaml line 3: unknown key "harness.memroy" (did you mean "memory"?)'
    assert error.key == "harness.memroy"
    assert error.line == 3


def test_unknown_key_inside_a_list_item_names_the_index() -> None:
    error = refusal("""\
        mcp_clients:
          - name: fs
            command: npx
          - name: docs
            url: https://mcp.example.net/mcp
            header: {}
    """)
    assert 'unknown key "mcp_clients[1].header"' in str(error)
    assert '(did you mean "headers"?)' in str(error)
    assert error.line == 6


def test_unknown_key_in_an_options_block_names_the_key() -> None:
    error = refusal("""\
        harness:
          memory:
            enabled: true
            backend: jetstream
            options:
              bukcet: agent-memory
    """)
    assert str(error).startswith('agent.yaml line 6: unknown key "harness.memory.options.bukcet"')
    assert '(did you mean "bucket"?)' in str(error)


def test_options_for_another_backend_name_the_backend_in_use() -> None:
    error = refusal("""\
        harness:
          sessions:
            options:
              stream: FISK_SESSIONS
    """)
    assert str(error) == (
        'agent.yaml line 4: unknown key "harness.sessions.options.stream" '
        "for the file sessions backend"
    )


def test_duplicate_top_level_key_names_both_lines() -> None:
    error = refusal("""\
        system_prompt: one
        identity: a
        system_prompt: two
    """)
    assert str(error) == (
        'agent.yaml line 3: duplicate key "system_prompt" (first written on line 1)'
    )


def test_duplicate_nested_key_is_refused() -> None:
    error = refusal("""\
        llm:
          model: a
          budget:
            max_tokens: 5
            max_tokens: 6
    """)
    assert 'duplicate key "llm.budget.max_tokens"' in str(error)
    assert error.line == 5


def test_duplicate_key_in_json_is_refused() -> None:
    error = refusal('{"llm": {"model": "a", "model": "b"}}')
    assert 'duplicate key "llm.model"' in str(error)


def test_json_configuration_parses_like_yaml() -> None:
    config = parsed('{"llm": {"model": "m"}, "system_prompt": "p"}', Mode.AGENT)
    assert config.llm.model == "m"


def test_wrong_type_names_the_key_line_and_expected_type() -> None:
    error = refusal("""\
        llm:
          budget:
            max_tokens: lots
    """)
    assert str(error) == (
        'agent.yaml line 3: "llm.budget.max_tokens" must be a whole number, not the text "lots"'
    )


def test_a_quoted_boolean_is_not_a_boolean() -> None:
    error = refusal('harness: {no_tui: "true"}')
    assert '"harness.no_tui" must be true or false' in str(error)


def test_a_list_where_a_block_belongs_is_refused() -> None:
    error = refusal("llm: [a, b]")
    assert str(error) == 'agent.yaml line 1: "llm" must be a mapping of keys, not a list'


def test_a_bad_duration_names_the_key_and_a_good_example() -> None:
    error = refusal("""\
        harness:
          tool_timeout: 5 minutes
    """)
    message = str(error)
    assert message.startswith('agent.yaml line 2: "harness.tool_timeout" is not a duration')
    assert '"5m"' in message


def test_a_duration_without_a_unit_is_refused() -> None:
    error = refusal("mcp_clients: [{name: fs, command: x, timeout: 30}]")
    assert '"mcp_clients[0].timeout"' in str(error)
    assert "needs a unit" in str(error)


def test_a_bad_regex_names_its_index_and_line() -> None:
    error = refusal("""\
        include:
          tools:
            - ^say
            - ^think
            - "(unclosed"
    """)
    message = str(error)
    assert message.startswith(
        'agent.yaml line 5: "include.tools[2]" is not a valid regular expression'
    )


def test_a_missing_required_key_is_named() -> None:
    error = refusal("""\
        identity: t
        mcp_clients:
          - command: server
    """)
    assert str(error) == 'agent.yaml line 3: "mcp_clients[0].name" is required'


def test_invalid_yaml_names_the_line() -> None:
    error = refusal("llm:\n  model: a\n bad: [\n")
    assert str(error).startswith("agent.yaml line ")
    assert "not valid YAML" in str(error)


def test_a_file_that_is_not_a_mapping_is_refused() -> None:
    error = refusal("- one\n- two\n")
    assert str(error) == "agent.yaml line 1: the file must be a mapping of settings, not a list"


def test_an_empty_file_is_refused() -> None:
    error = refusal("# nothing here\n")
    assert str(error) == (
        "agent.yaml holds no settings; it needs at least llm.model and system_prompt"
    )


def test_the_source_name_leads_every_message() -> None:
    with pytest.raises(ConfigError, match=r"^ops/agent\.yaml line 1: "):
        parse("bogus: 1", Mode.LENIENT, source="ops/agent.yaml")


# load


def test_load_reads_the_file_and_keeps_where_it_came_from(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(AGENT_MINIMUM)
    config = load(path, Mode.AGENT)
    assert config.source == str(path)
    assert config.base_dir == tmp_path


def test_load_of_a_missing_file_names_the_path_and_the_flag(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as caught:
        load(missing, Mode.AGENT)
    assert str(missing) in str(caught.value)
    assert "--config" in str(caught.value)


def test_load_of_a_directory_names_the_flag(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--config"):
        load(tmp_path, Mode.AGENT)


def test_load_errors_name_the_file_as_given(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text("identity: x\nidentity: y\n")
    with pytest.raises(ConfigError, match=rf"^{path} line 2: duplicate key"):
        load(path, Mode.LENIENT)


# Stage two: prepare


def test_identity_is_derived_from_an_absolute_application_path() -> None:
    config = parsed("application_path: /usr/bin/nats")
    assert config.identity == "nats"
    assert not config.identity_named


def test_identity_derivation_takes_the_whole_base_name() -> None:
    config = parsed("application_path: /opt/bin/my_tool-2/")
    assert config.identity == "my_tool-2"


def test_a_derived_identity_that_is_not_valid_is_refused_naming_identity() -> None:
    error = refusal("application_path: ./my.agent")
    assert error.key == "identity"
    assert error.line == 1
    assert '"my.agent"' in str(error)
    assert "set identity" in str(error)


def test_a_written_identity_spares_an_application_whose_name_is_not_one() -> None:
    config = parsed("identity: cowsay\napplication_path: ./cowsay.py")
    assert config.identity == "cowsay"


def test_identity_defaults_to_fisk_ai_without_an_application() -> None:
    config = parsed("system_prompt: hi")
    assert config.identity == "fisk-ai"
    assert not config.identity_named


def test_a_written_identity_is_named() -> None:
    config = parsed("identity: worker\napplication_path: /usr/bin/nats")
    assert config.identity == "worker"
    assert config.identity_named


def test_identity_outside_the_charset_is_refused() -> None:
    error = refusal("identity: my agent")
    assert error.key == "identity"
    assert "letters, digits" in str(error)


def test_relative_application_path_resolves_against_the_config_directory(tmp_path: Path) -> None:
    config = parsed("identity: cowsay\napplication_path: ./bin/cowsay.py", base_dir=tmp_path)
    assert config.application_path == str(tmp_path / "bin" / "cowsay.py")


def test_relative_application_path_resolves_against_the_loaded_file(tmp_path: Path) -> None:
    (tmp_path / "agents").mkdir()
    path = tmp_path / "agents" / "agent.yaml"
    path.write_text("application_path: ../tools/cowsay\n")
    config = load(path, Mode.LENIENT)
    assert config.application_path == str(tmp_path / "tools" / "cowsay")


def test_a_bare_application_name_is_left_for_path_lookup(tmp_path: Path) -> None:
    config = parsed("application_path: nats", base_dir=tmp_path)
    assert config.application_path == "nats"


def test_global_flags_are_trimmed_undashed_and_deduplicated() -> None:
    config = parsed("""\
        application_path: nats
        global_flags: [" --context", context, -user, server]
    """)
    assert config.global_flags == ["context", "user", "server"]


def test_blank_global_flags_are_dropped() -> None:
    config = parsed("application_path: nats\nglobal_flags: [context, '--', ' ', '']")
    assert config.global_flags == ["context"]


def test_blank_confirm_tags_are_dropped() -> None:
    config = parsed("harness: {confirm_tags: [impact:rw, '', '  ']}")
    assert config.harness.confirm_tags == ["impact:rw"]


def test_mcp_builtins_are_trimmed_deduplicated_and_blanks_dropped() -> None:
    config = parsed("""\
        harness: {knowledge: {enabled: true}}
        expose: {agent: {mcp: {builtins: [' knowledge_search', '', knowledge_search]}}}
    """)
    assert config.expose.agent.mcp is not None
    assert [b.value for b in config.expose.agent.mcp.builtins] == ["knowledge_search"]


def test_mcp_builtins_of_only_blanks_need_no_knowledge() -> None:
    config = parsed("expose: {agent: {mcp: {builtins: ['', ' ']}}}")
    assert config.expose.agent.mcp is not None
    assert config.expose.agent.mcp.builtins == []


def test_confirm_tags_are_trimmed_and_deduplicated() -> None:
    config = parsed("harness: {confirm_tags: [' ai:destructive ', impact:rw, ai:destructive]}")
    assert config.harness.confirm_tags == ["ai:destructive", "impact:rw"]


def test_remote_tool_alias_defaults_to_the_name() -> None:
    config = parsed("remote_tools: [{name: peer}]")
    assert config.remote_tools[0].alias == "peer"


def test_remote_tool_include_tags_is_a_warning() -> None:
    config = parsed("""\
        remote_tools:
          - name: peer
            include:
              tags: [scope:system]
    """)
    assert len(config.warnings) == 1
    assert "remote_tools[0].include.tags" in config.warnings[0]
    assert "line 4" in config.warnings[0]


def test_remote_agents_is_accepted_and_said_to_do_nothing() -> None:
    config = parsed("remote_agents: [{name: peer}]")
    assert len(config.warnings) == 1
    assert '"remote_agents" does nothing' in config.warnings[0]
    assert "remote_tools" in config.warnings[0]


def test_mcp_client_alias_defaults_to_the_name() -> None:
    config = parsed("mcp_clients: [{name: docs, url: 'https://mcp.example.net/mcp'}]")
    assert config.mcp_clients[0].alias == "docs"


def test_file_memory_directory_defaults_under_the_identity() -> None:
    config = parsed("identity: jokes\nharness: {memory: {enabled: true}}")
    assert config.harness.memory.backend_options == FileMemoryOptions(directory="memory/jokes")


def test_jetstream_memory_prefix_absent_becomes_the_identity() -> None:
    config = parsed("""\
        identity: jokes
        harness:
          memory:
            backend: jetstream
            options: {bucket: agent-memory}
    """)
    options = config.harness.memory.backend_options
    assert isinstance(options, JetStreamMemoryOptions)
    assert options.prefix == "jokes"


def test_jetstream_memory_prefix_empty_stays_flat() -> None:
    config = parsed("""\
        identity: jokes
        harness:
          memory:
            backend: jetstream
            options: {bucket: agent-memory, prefix: ""}
    """)
    options = config.harness.memory.backend_options
    assert isinstance(options, JetStreamMemoryOptions)
    assert options.prefix == ""


def test_jetstream_memory_needs_a_bucket() -> None:
    error = refusal("harness: {memory: {backend: jetstream}}")
    assert str(error) == (
        'agent.yaml line 1: "harness.memory.options.bucket" is required '
        "by the jetstream memory backend"
    )


def test_unknown_memory_backend_lists_the_known_ones() -> None:
    error = refusal("harness:\n  memory:\n    backend: redis\n")
    assert str(error) == (
        'agent.yaml line 3: "harness.memory.backend" is "redis", '
        "which is not one of file, jetstream"
    )


def test_backend_names_ignore_case() -> None:
    config = parsed("harness: {sessions: {backend: JetStream, options: {stream: FISK_SESSIONS}}}")
    assert config.harness.sessions.backend.value == "jetstream"


def test_knowledge_directory_defaults_under_the_identity() -> None:
    config = parsed("identity: docs")
    assert config.harness.knowledge.directory == "knowledge/docs"


def test_sessions_default_under_xdg_state_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    config = parsed("identity: a")
    options = config.harness.sessions.backend_options
    assert options == FileSessionsOptions(directory=str(tmp_path / "fisk-ai" / "runs"))


def test_sessions_default_under_the_home_state_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    config = parsed("identity: a")
    options = config.harness.sessions.backend_options
    expected = tmp_path / ".local" / "state" / "fisk-ai" / "runs"
    assert options == FileSessionsOptions(directory=str(expected))


def test_jobs_nats_context_defaults_to_the_top_level_one() -> None:
    config = parsed("nats_context: production\nexpose: {agent: {jobs: {}}}")
    assert config.expose.agent.jobs is not None
    assert config.expose.agent.jobs.nats_context == "production"


# Stage three: validate for a mode


def test_agent_mode_requires_llm_model() -> None:
    error = refusal("system_prompt: hi", Mode.AGENT)
    assert error.key == "llm.model"
    assert "fisk run" in str(error)


def test_agent_mode_requires_a_system_prompt() -> None:
    error = refusal("llm: {model: m}", Mode.AGENT)
    assert error.key == "system_prompt"


def test_agent_mode_waives_the_system_prompt_when_mcp_is_exposed() -> None:
    config = parsed("llm: {model: m}\nexpose: {agent: {mcp: {}}}", Mode.AGENT)
    assert config.expose.agent.mcp is not None


def test_agent_mode_requires_nats_context_for_remote_tools() -> None:
    error = refusal(AGENT_MINIMUM + "remote_tools: [{name: peer}]\n", Mode.AGENT)
    assert error.key == "nats_context"


def test_lenient_mode_accepts_what_agent_mode_refuses() -> None:
    config = parsed("identity: a")
    assert config.llm.model == ""


def test_global_flags_without_an_application_are_refused_in_every_mode() -> None:
    error = refusal("global_flags: [context]")
    assert error.key == "global_flags"
    assert "application_path" in str(error)


def test_remote_tool_exclude_tags_is_refused() -> None:
    error = refusal("remote_tools: [{name: peer, exclude: {tags: [x]}}]")
    assert error.key == "remote_tools[0].exclude.tags"


def test_remote_tool_alias_outside_the_charset_is_refused() -> None:
    error = refusal("remote_tools: [{name: peer, alias: 'a b'}]")
    assert error.key == "remote_tools[0].alias"


def test_mcp_client_with_both_command_and_url_is_refused() -> None:
    error = refusal("mcp_clients: [{name: fs, command: npx, url: 'http://127.0.0.1/mcp'}]")
    assert "both command and url" in str(error)


def test_mcp_client_with_neither_command_nor_url_is_refused() -> None:
    error = refusal("mcp_clients: [{name: fs}]")
    assert error.key == "mcp_clients[0]"


def test_mcp_clients_sharing_a_name_are_refused() -> None:
    error = refusal("""\
        mcp_clients:
          - {name: fs, command: npx}
          - {name: fs, alias: other, command: npx}
    """)
    assert error.key == "mcp_clients[1].name"
    assert error.line == 3


def test_mcp_clients_sharing_an_effective_alias_are_refused() -> None:
    error = refusal("""\
        mcp_clients:
          - {name: fs, command: npx}
          - {name: files, alias: fs, command: npx}
    """)
    assert error.key == "mcp_clients[1]"
    assert 'alias "fs"' in str(error)


def test_an_unclosed_reference_is_refused_at_parse() -> None:
    error = refusal("""\
        mcp_clients:
          - name: docs
            url: https://mcp.example.net/mcp
            headers:
              Authorization: Bearer ${DOCS_TOKEN
    """)
    assert error.key == "mcp_clients[0].headers.Authorization"
    assert error.line == 5


def test_references_are_not_resolved_at_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DOCS_TOKEN", raising=False)
    config = parsed("""\
        mcp_clients:
          - name: docs
            url: https://mcp.example.net/mcp/?apiKey=${DOCS_TOKEN}
    """)
    assert config.mcp_clients[0].url.endswith("${DOCS_TOKEN}")


def test_a_dollar_without_braces_is_literal() -> None:
    config = parsed("mcp_clients: [{name: fs, command: npx, env: {HOME_DIR: $HOME/x}}]")
    assert config.mcp_clients[0].env["HOME_DIR"] == "$HOME/x"


def test_mcp_builtins_need_knowledge() -> None:
    error = refusal("expose: {agent: {mcp: {builtins: [knowledge_search]}}}")
    assert error.key == "expose.agent.mcp.builtins"
    assert "harness.knowledge.enabled" in str(error)


SERVE_JOBS = textwrap.dedent("""\
    identity: worker
    nats_context: production
    system_prompt: Inspect NATS.
    llm: {model: m}
    expose: {agent: {jobs: {}}}
""")


def test_serve_mode_accepts_a_jobs_worker() -> None:
    config = parsed(SERVE_JOBS, Mode.SERVE)
    assert config.expose.agent.jobs is not None


def test_serve_mode_parses_a_file_enabling_no_endpoint() -> None:
    config = parsed("identity: worker\nexpose: {agent: {a2a: {request_timeout: 30s}}}", Mode.SERVE)
    assert config.expose.agent.a2a is not None


def test_the_serve_command_refuses_a_file_enabling_no_endpoint() -> None:
    config = parsed("identity: worker", Mode.SERVE)
    with pytest.raises(ConfigError) as caught:
        require_something_to_serve(config)
    assert "nothing to serve" in str(caught.value)
    assert caught.value.key == "expose.agent"


def test_an_a2a_block_with_request_timeout_and_other_keys_is_accepted_by_serve() -> None:
    config = parsed(
        "expose: {agent: {jobs: {}, a2a: {request_timeout: 30s, max_concurrent_tools: 4}}}\n"
        "identity: w\nnats_context: n\nsystem_prompt: p\nllm: {model: m}",
        Mode.SERVE,
    )
    assert config.expose.agent.a2a is not None


def test_serve_mode_requires_a_named_identity() -> None:
    error = refusal(
        "application_path: /usr/bin/nats\nnats_context: p\n"
        "expose: {agent: {a2a: {serve_tools: true}}}",
        Mode.SERVE,
    )
    assert error.key == "identity"


def test_serve_tools_needs_an_application_and_a_context() -> None:
    error = refusal("identity: w\nexpose: {agent: {a2a: {serve_tools: true}}}", Mode.SERVE)
    assert "application_path" in str(error)
    error = refusal(
        "identity: w\napplication_path: nats\nexpose: {agent: {a2a: {serve_tools: true}}}",
        Mode.SERVE,
    )
    assert '"nats_context"' in str(error)


def test_serving_only_tools_needs_no_prompt_or_model() -> None:
    config = parsed(
        "identity: w\napplication_path: nats\nnats_context: p\n"
        "expose: {agent: {a2a: {serve_tools: true}}}",
        Mode.SERVE,
    )
    assert config.system_prompt == ""


def test_prompts_need_a_prompt_and_a_model() -> None:
    error = refusal(
        "identity: w\nnats_context: p\nsystem_prompt: x\nexpose: {agent: {a2a: {prompts: {}}}}",
        Mode.SERVE,
    )
    assert "llm.model" in str(error)
    assert "expose.agent.a2a.prompts" in str(error)


def test_jobs_need_a_nats_context() -> None:
    error = refusal(
        "identity: w\nsystem_prompt: x\nllm: {model: m}\nexpose: {agent: {jobs: {}}}",
        Mode.SERVE,
    )
    assert "nats_context" in str(error)


def test_slack_needs_a_system_prompt() -> None:
    error = refusal("identity: w\nllm: {model: m}\nexpose: {agent: {slack: {}}}", Mode.SERVE)
    assert '"system_prompt" is required by expose.agent.slack' in str(error)


def test_an_a2a_block_enabling_nothing_is_refused_by_serve() -> None:
    text = SERVE_JOBS.replace(
        "expose: {agent: {jobs: {}}}", "expose: {agent: {jobs: {}, a2a: {tool_timeout: 5s}}}"
    )
    error = refusal(text, Mode.SERVE)
    assert error.key == "expose.agent.a2a"


def test_an_a2a_block_with_only_request_timeout_is_accepted_by_serve() -> None:
    text = SERVE_JOBS.replace(
        "expose: {agent: {jobs: {}}}", "expose: {agent: {jobs: {}, a2a: {request_timeout: 30s}}}"
    )
    config = parsed(text, Mode.SERVE)
    assert config.expose.agent.a2a is not None


def test_an_empty_presence_block_counts_as_present() -> None:
    text = SERVE_JOBS.replace("expose: {agent: {jobs: {}}}", "expose:\n  agent:\n    jobs:\n")
    config = parsed(text, Mode.SERVE)
    assert config.expose.agent.jobs is not None


# decode_options


def test_decode_options_refuses_a_typo_naming_the_path() -> None:
    with pytest.raises(ConfigError) as caught:
        decode_options(JetStreamMemoryOptions, {"bukcet": "m"}, path="harness.memory.options")
    assert str(caught.value) == (
        'unknown key "harness.memory.options.bukcet" (did you mean "bucket"?)'
    )


def test_decode_options_applies_defaults_to_an_absent_block() -> None:
    assert decode_options(FileMemoryOptions, None, path="harness.memory.options").directory == ""


def test_mcp_client_include_tags_is_a_warning_naming_the_key() -> None:
    config = parsed("""\
        mcp_clients:
          - name: fs
            command: npx
            include:
              tags: [read]
    """)
    assert config.warnings == [
        'agent.yaml line 5: "mcp_clients[0].include.tags" is ignored, since an MCP server\'s '
        "tool list carries no tags"
    ]


def test_mcp_client_exclude_tags_is_refused() -> None:
    error = refusal("mcp_clients: [{name: fs, command: npx, exclude: {tags: [write]}}]")
    assert error.key == "mcp_clients[0].exclude.tags"
    assert "exclude its tools by name instead" in str(error)
