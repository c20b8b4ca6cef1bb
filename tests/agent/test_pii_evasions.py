# ruff: noqa: RUF001 - the look-alike characters are what these tests are about
"""Values written to slip past a scan of the raw text are found in its normalised view, and the
redaction lands on the original text, the look-alike characters with the value."""

import pytest

from fisk_ai.agent.pii import redact, scanner
from fisk_ai.agent.pii_checks.normalize import normalized
from fisk_ai.llm.types import ToolResultBlock
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.records import Meta, ToolResult
from fisk_ai.tools.base import ExecDeps, Outcome
from tests.agent.conftest import FakeTool, make_runner, payloads, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer, call, calls

ZERO_WIDTH_SPACE = "\u200b"
NO_BREAK_SPACE = "\u00a0"


def redacted(text: str) -> str:
    return redact(text, scanner().scan(text))


def test_a_zero_width_space_inside_a_key_does_not_hide_it() -> None:
    key = f"sk-ant-api03-Zq81xWv4{ZERO_WIDTH_SPACE}Lm0pRt7Ys3Kd9Nb2Hc6"
    assert redacted(f"key {key} set") == "key [API_KEY-REDACTED] set"


def test_zero_width_characters_inside_an_aws_key_id_do_not_hide_it() -> None:
    key = f"AKIA\u200dIOSF{ZERO_WIDTH_SPACE}ODNN7EXAMPLE"
    assert redacted(f"id={key}") == "id=[SECRET-REDACTED]"


def test_a_zero_width_joiner_inside_a_card_does_not_hide_it() -> None:
    assert redacted("card 4111\u200d1111\u2060 1111 1111 ok") == "card [CREDIT-CARD-REDACTED] ok"


def test_a_soft_hyphen_inside_an_email_does_not_hide_it() -> None:
    assert redacted("mail jane\u00ad.doe@exam\u00adple.com now") == "mail [EMAIL-REDACTED] now"


def test_a_card_in_fullwidth_digits_is_found() -> None:
    assert (
        redacted("pan ４１１１ １１１１ １１１１ １１１１ end") == "pan [CREDIT-CARD-REDACTED] end"
    )


def test_an_email_with_a_fullwidth_at_sign_is_found() -> None:
    assert redacted("From: jane.doe＠example.com") == "From: [EMAIL-REDACTED]"


@pytest.mark.parametrize(
    "card",
    [
        f"4111{NO_BREAK_SPACE}1111{NO_BREAK_SPACE}1111{NO_BREAK_SPACE}1111",
        "4111\u202f1111\u202f1111\u202f1111",
        "4111.1111.1111.1111",
        "4111 1111-1111.1111",
        "4111\u20131111\u20131111\u20131111",
        "5500-0000.0000 0004",
    ],
    ids=["no-break", "narrow-no-break", "dots", "mixed", "en-dash", "mixed-mastercard"],
)
def test_a_card_with_look_alike_or_mixed_separators_is_found(card: str) -> None:
    assert redacted(f"paid with {card} today") == "paid with [CREDIT-CARD-REDACTED] today"


def test_a_dotted_number_failing_luhn_is_left_alone() -> None:
    assert redacted("ref 4111.1111.1111.1112") == "ref 4111.1111.1111.1112"


@pytest.mark.parametrize(
    "line",
    [
        "aws_access_key_id = akiaiosfodnn7example",
        '"aws_access_key_id": "akiaiosfodnn7example"',
        "AWS key: akiaiosfodnn7example",
    ],
)
def test_a_lowercase_aws_key_id_after_its_context_word_is_a_secret(line: str) -> None:
    assert "akiaiosfodnn7example" not in redacted(line)
    assert "[SECRET-REDACTED]" in redacted(line)


def test_a_lowercase_akia_word_with_no_context_is_left_alone() -> None:
    assert redacted("slug akiaiosfodnn7example cached") == "slug akiaiosfodnn7example cached"


@pytest.mark.parametrize(
    "address",
    ["jürgen.müller@bücher.de", "анна@почта.рф", "info@xn--bcher-kva.example"],
)
def test_an_email_with_an_idn_domain_or_local_part_is_found(address: str) -> None:
    assert redacted(f"mail {address} for access") == "mail [EMAIL-REDACTED] for access"


@pytest.mark.parametrize(
    "address", ["用户@例子.公司", "ユーザー@例え.テスト", "홍길동@회사.한국", "li@例子。广告"]
)
def test_an_email_with_a_cjk_domain_or_local_part_is_found(address: str) -> None:
    assert redacted(f"連絡先 {address} まで") == "連絡先 [EMAIL-REDACTED] まで"


@pytest.mark.parametrize("text", ["@田中さん ありがとう", "メール@社内 です", "＠tanaka thanks"])
def test_an_at_sign_in_cjk_or_fullwidth_text_with_no_domain_is_left_alone(text: str) -> None:
    assert redacted(text) == text


def test_a_character_nfkc_expands_before_a_finding_shifts_no_redaction() -> None:
    # The ligature reads as two letters in the view; the offsets after it still land right.
    assert redacted("ﬁle ﬁx: mail jane@example.com ok") == "ﬁle ﬁx: mail [EMAIL-REDACTED] ok"


def test_text_with_nothing_to_normalise_is_its_own_view() -> None:
    assert normalized("plain ascii").unchanged
    assert normalized("日本語のログ").unchanged


def test_the_view_maps_a_span_back_over_removed_characters() -> None:
    text = f"a{ZERO_WIDTH_SPACE}b{ZERO_WIDTH_SPACE}c d"
    view = normalized(text)
    assert view.text == "abc d"
    assert view.original_span(0, 3) == (0, 5)
    assert view.original_span(4, 5) == (6, 7)


async def test_a_hidden_value_in_a_prompt_reaches_neither_the_journal_nor_the_model(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    provider = ScriptedProvider([answer("ok")])
    async with make_runner(provider=provider, tools=toolset(), store=store, events=sink) as runner:
        result = await runner.start("charge ４１１１ １１１１ １１１１ １１１１ now")

    assert "１１１１" not in repr(provider.requests[0].messages)
    (meta,) = [p for p in payloads(await store.read(result.session_id)) if isinstance(p, Meta)]
    assert meta.prompt == "charge [CREDIT-CARD-REDACTED] now"


async def test_a_hidden_value_in_a_tool_output_reaches_neither_the_journal_nor_the_model(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    async def leaky(arguments: str, deps: ExecDeps) -> Outcome:
        return Outcome(f"owner jane{ZERO_WIDTH_SPACE}.doe＠example.com, card 4111.1111.1111.1111")

    provider = ScriptedProvider([calls(call("t1", "lookup")), answer("done")])
    async with make_runner(
        provider=provider, tools=toolset(FakeTool("lookup", leaky)), store=store, events=sink
    ) as runner:
        result = await runner.start("who owns it")

    sent = repr(provider.requests[1].messages)
    assert "example.com" not in sent
    assert "4111" not in sent
    expected = "owner [EMAIL-REDACTED], card [CREDIT-CARD-REDACTED]"
    records = payloads(await store.read(result.session_id))
    assert [p.result for p in records if isinstance(p, ToolResult)] == [
        ToolResultBlock("t1", expected)
    ]
