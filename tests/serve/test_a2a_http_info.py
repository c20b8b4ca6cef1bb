"""`fisk info` reports the A2A HTTP endpoint as `fisk serve` would run it, or why it would not."""

from __future__ import annotations

from fisk_ai.config import Mode, parse
from fisk_ai.lineui.info import InfoReport, a2a_http_section, render_plain, with_section

PROMPTS = "    a2a:\n      prompts:\n        elicit: true\n"


def section_of(expose: str) -> dict[str, str]:
    cfg = parse(
        "identity: ops\nsystem_prompt: x\nllm:\n  model: m\nnats_context: test\n"
        "expose:\n  agent:\n" + expose,
        Mode.LENIENT,
    )
    section = a2a_http_section(cfg)
    assert section is not None
    return {field.label: field.value for field in section.fields}


def test_without_the_block_there_is_no_section() -> None:
    cfg = parse("system_prompt: x\nllm:\n  model: m\n", Mode.LENIENT)

    assert a2a_http_section(cfg) is None


def test_the_section_says_where_it_listens_and_who_may_call() -> None:
    fields = section_of(PROMPTS + "    a2a_http:\n      port: 8443\n      token_env: OPS_TOKEN\n")

    assert fields["Served"] == "yes, by fisk serve beside a2a/prompts"
    assert fields["Listen"] == "127.0.0.1, 8443"
    assert fields["Auth"] == "bearer token from OPS_TOKEN"
    assert fields["Questions"] == "input-required, answered by the next message"


def test_without_a_token_off_loopback_the_section_says_anyone_may_call() -> None:
    fields = section_of(PROMPTS + "    a2a_http:\n      address: 0.0.0.0\n")

    assert fields["Auth"] == "none: anyone reaching the address runs the agent"


def test_without_the_prompts_channel_the_section_says_it_is_not_served() -> None:
    fields = section_of("    a2a_http: {}\n")

    assert list(fields) == ["Served"]
    assert fields["Served"].startswith("no: ")


def test_the_card_url_is_the_public_url_when_set() -> None:
    fields = section_of(PROMPTS + "    a2a_http:\n      public_url: https://a.example/ops/\n")

    assert fields["Card URL"] == "https://a.example/ops/"


def test_the_plain_report_prints_the_section_under_its_title() -> None:
    cfg = parse(
        "identity: ops\nsystem_prompt: x\nllm:\n  model: m\nnats_context: test\n"
        "expose:\n  agent:\n" + PROMPTS + "    a2a_http: {}\n",
        Mode.LENIENT,
    )
    report = InfoReport(sections=(), tools=(), global_flags=(), prompt="", warnings=())

    printed = render_plain(with_section(report, a2a_http_section(cfg)))

    assert "A2A HTTP" in printed
    assert "127.0.0.1, any free port" in printed
