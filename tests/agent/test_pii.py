import dataclasses
import subprocess
import sys

import pytest

from fisk_ai.agent.events import WarningEvent, WarningKind
from fisk_ai.agent.hooks import Deny, Hooks
from fisk_ai.agent.loop import AgentError
from fisk_ai.agent.pii import (
    SCAN_FAILED_OUTPUT,
    WITHHELD_OUTPUT,
    Check,
    PiiError,
    PiiGuard,
    Scanner,
    card_valid,
    guarded_hooks,
    iban_valid,
    luhn_valid,
    redact,
    scanner,
    ssn_valid,
)
from fisk_ai.agent.pii_checks.validators import aba_routing_valid, birth_date_valid, vin_valid
from fisk_ai.agent.runner import PromptDenied
from fisk_ai.config.models import PiiMode
from fisk_ai.llm.types import ToolResultBlock, ToolUseBlock
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.records import Meta, ToolResult
from fisk_ai.tools.base import ExecDeps, Outcome
from tests.agent.conftest import SETTINGS, FakeTool, make_runner, payloads, toolset
from tests.agent.pii_corpus import HOSTILE_OUTPUTS
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer, call, calls

CALL = ToolUseBlock("t1", "lookup", "{}")
NATS_SEED = "SUAMLK2ZNL35WSMW37E7UD4VZ7ELPKW7DHC3BWBSD2GCZ7IUQQXZIORRBU"
PRIVATE_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
NATS_CREDS = (
    "-----BEGIN NATS USER JWT-----\n"
    "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJqdGkiOiJBQkNERUYifQ.c2lnbmF0dXJlX2hlcmU\n"
    "------END NATS USER JWT------"
)


def kinds(text: str) -> list[Check]:
    return [finding.check for finding in scanner().scan(text)]


@pytest.mark.parametrize(
    ("text", "check"),
    [
        ("card 4111 1111 1111 1111 on file", Check.CREDIT_CARD),
        ("paid with 4242-4242-4242-4242", Check.CREDIT_CARD),
        ("amex 378282246310005", Check.CREDIT_CARD),
        ("mc 5555555555554444.", Check.CREDIT_CARD),
        ("mail jane.doe+ops@example.co.uk today", Check.EMAIL),
        ("ring +44 20 7946 0958", Check.PHONE),
        ("ring (415) 555-2671", Check.PHONE),
        ("ring +1-202-555-0143", Check.PHONE),
        ("iban GB82 WEST 1234 5698 7654 32", Check.IBAN),
        ("iban DE89370400440532013000", Check.IBAN),
        ("ssn 123-45-6789", Check.SSN),
        ("key AKIAIOSFODNN7EXAMPLE", Check.SECRET),
        ("gh ghp_" + "a1B2c3D4e5" * 4, Check.SECRET),
        ("ANTHROPIC_API_KEY=sk-ant-api03-" + "Zx9" * 14, Check.SECRET),
        ("Authorization: Bearer abcDEF123456ghiJKL789", Check.SECRET),
        ("slack xoxb-1234567890-abcdefghijkl", Check.SECRET),
        (f"seed {NATS_SEED}", Check.SECRET),
        (PRIVATE_KEY, Check.SECRET),
        (NATS_CREDS, Check.SECRET),
        ("db password: hunter2hunter2", Check.SECRET),
        ("OPENAI_API_KEY=sk-proj-" + "Ab1" * 12, Check.SECRET),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", Check.SECRET),
        ("role arn:aws:iam::123456789012:role/deploy", Check.CLOUD_RESOURCE),
        ("aws account id: 123456789012", Check.CLOUD_RESOURCE),
        (
            "/subscriptions/0b1f6471-1bf0-4dda-aec3-111122223333/resourceGroups/rg-prod",
            Check.CLOUD_RESOURCE,
        ),
        ("projects/acme-prod-42/zones/us-east1-b/instances/vm-1", Check.CLOUD_RESOURCE),
        ("instance i-0abcdef1234567890 stopped", Check.CLOUD_RESOURCE),
        ("routing number 021000021", Check.BANK_ACCOUNT),
        ("account number: 000123456789", Check.BANK_ACCOUNT),
        ("sort code 40-47-84", Check.BANK_ACCOUNT),
        ("SSN 123456789", Check.SSN),
        ("date of birth: 1984-03-12", Check.DATE_OF_BIRTH),
        ("born on March 12, 1984", Check.DATE_OF_BIRTH),
        ("driver's license number D1234567", Check.DRIVERS_LICENSE),
        ("MRN: 00482913", Check.MEDICAL_ID),
        ("NHS number 943 476 5919", Check.MEDICAL_ID),
        ("your verification code is 482913", Check.OTP),
        ("passport number 533380006", Check.PASSPORT),
        ("ship to 221B Baker Street, London", Check.PHYSICAL_ADDRESS),
        ("lives at 742 Evergreen Terrace, Springfield, OR 97403", Check.PHYSICAL_ADDRESS),
        ("P.O. Box 1234", Check.PHYSICAL_ADDRESS),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x (output cut short", Check.SECRET),
        (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBF0=\n=Ab1c\n"
            "-----END PGP PRIVATE KEY BLOCK-----",
            Check.SECRET,
        ),
        ("write to john_doe@example.com", Check.EMAIL),
        ("car 1HGCM82633A004352", Check.VIN),
        ("VIN WVWZZZ1JZXW000001", Check.VIN),
    ],
)
def test_each_check_finds_its_kind(text: str, check: Check) -> None:
    assert kinds(text) == [check]


@pytest.mark.parametrize(
    "text",
    [
        "4111111111111112",  # sixteen digits failing Luhn
        "order 1234567812345670",  # passes Luhn, but no card network issues it
        "GB82WEST12345698765433",  # IBAN shape, wrong check digits
        "000-12-3456 666-12-3456 900-12-3456",  # never-issued SSN areas
        "pkg@1.2.3 and root@localhost",
        "version 1.2.3 built 2026-12-01 10:28:41 on 192.168.10.20",
        "request 550e8400-e29b-41d4-a716-446655440000",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "max_tokens=500000 exit_code=0 pid 12345678 at 1733050121",
        "call 555-2671",
        "the token is short",
        "born to run, passport photo, the account settings, security code review",
        "released on 1984-03-12",  # a date with no birth word in front of it
        "build 8C74ECD82AF603FBF ok",  # uppercase hex passing the VIN check digit
        "1HGCM82633A004353",  # a VIN shape failing its check digit
        "parcel 9400 4231 4299 1660 0856 90",  # a card number inside a tracking number
        "ISBN 978-0-306-40615-7, invoice INV-2026-004512, semver v1.2.3-rc.1+build.7",
        "src/app/main.py:120:14: E501, color #1a2b3c, took 12ms",
        "12 steps down the road, 3 ways to drive",
        "api_key: ${API_KEY} password: <redacted> token: null",
        "Authorization: Bearer YOUR_TOKEN_HERE_PLEASE",
    ],
)
def test_look_alikes_are_left_alone(text: str) -> None:
    assert kinds(text) == []


def test_validators() -> None:
    assert luhn_valid("4111111111111111")
    assert not luhn_valid("4111111111111112")
    assert not card_valid("1234567812345670")
    assert iban_valid("GB82 WEST 1234 5698 7654 32")
    assert not iban_valid("GB82 WEST 1234 5698 7654 33")
    assert ssn_valid("123-45-6789")
    assert not ssn_valid("123-00-6789")
    assert vin_valid("1HGCM82633A004352")
    assert not vin_valid("1HGCM82633A004353")
    assert aba_routing_valid("021000021")
    assert not aba_routing_valid("021000022")
    assert birth_date_valid("March 12, 1984")
    assert not birth_date_valid("1984-02-30")
    assert not birth_date_valid("2999-01-01")


def test_each_check_redacts_to_its_typed_placeholder() -> None:
    text = (
        "DOB 1984-03-12, passport number 533380006, MRN: 00482913, "
        "ship to 221B Baker Street, car 1HGCM82633A004352, your verification code is 482913"
    )
    assert redact(text, scanner().scan(text)) == (
        "DOB [DATE-OF-BIRTH-REDACTED], passport number [PASSPORT-REDACTED], "
        "MRN: [MEDICAL-ID-REDACTED], ship to [PHYSICAL-ADDRESS-REDACTED], "
        "car [VIN-REDACTED], your verification code is [OTP-REDACTED]"
    )


@pytest.mark.parametrize("name", sorted(HOSTILE_OUTPUTS))
def test_a_hostile_64_kib_output_is_scanned_to_the_end(name: str) -> None:
    # Linear now; how long each takes is bench/telemetry.py's to say (a regression would show
    # there first, and here as a scan that does not come back).
    text = HOSTILE_OUTPUTS[name]
    findings = scanner().scan(text)
    assert all(0 <= finding.start < finding.end <= len(text) for finding in findings)


def test_importing_the_guard_loads_no_phone_library() -> None:
    # The library loads when a run builds its scanner; a run with the guard off never does.
    code = "import sys, fisk_ai.agent.pii; print('phonenumbers' in sys.modules)"
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert shown.strip() == "False"


def test_redact_replaces_each_finding_with_its_typed_placeholder() -> None:
    text = "mail jane@example.com, card 4111 1111 1111 1111, Bearer abcDEF123456ghiJKL789"
    assert redact(text, scanner().scan(text)) == (
        "mail [EMAIL-REDACTED], card [CREDIT-CARD-REDACTED], Bearer [BEARER_TOKEN-REDACTED]"
    )


def test_a_character_that_lowercases_to_two_shifts_no_redaction() -> None:
    text = "İİİ passport number 533380006, MRN: 00482913"
    assert redact(text, scanner().scan(text)) == (
        "İİİ passport number [PASSPORT-REDACTED], MRN: [MEDICAL-ID-REDACTED]"
    )


def test_a_private_key_is_one_secret_not_its_parts() -> None:
    assert kinds(f"before {PRIVATE_KEY} after") == [Check.SECRET]


async def test_redact_rewrites_a_prompt_and_warns_once() -> None:
    sink = RecordingSink()
    guard = PiiGuard(PiiMode.REDACT, sink, scanner())

    assert await guard.on_prompt("mail jane@example.com") == "mail [EMAIL-REDACTED]"
    assert await guard.on_prompt("ring +44 20 7946 0958") == "ring [PHONE-REDACTED]"
    assert await guard.on_prompt("nothing here") == "nothing here"

    warnings = sink.of(WarningEvent)
    assert len(warnings) == 1
    assert warnings[0].kind == WarningKind.PII_FOUND
    assert warnings[0].params == ("email",)
    assert "jane@example.com" not in warnings[0].error


async def test_redact_rewrites_new_checks_in_a_prompt_and_a_tool_output() -> None:
    guard = PiiGuard(PiiMode.REDACT, RecordingSink(), scanner())

    assert await guard.on_prompt("my passport number 533380006, born on March 12, 1984") == (
        "my passport number [PASSPORT-REDACTED], born on [DATE-OF-BIRTH-REDACTED]"
    )
    redacted = await guard.on_tool_result(
        CALL, Outcome("owner: arn:aws:iam::123456789012:role/ops\nvin 1HGCM82633A004352")
    )
    assert redacted == Outcome("owner: [CLOUD-RESOURCE-REDACTED]\nvin [VIN-REDACTED]")


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("the sms said your verification code is 482913", "otp"),
        ("driver's license number D1234567", "drivers_license"),
        ("routing number 021000021", "bank_account"),
    ],
)
async def test_reject_refuses_new_checks_in_a_prompt_and_a_tool_output(
    text: str, named: str
) -> None:
    guard = PiiGuard(PiiMode.REJECT, RecordingSink(), scanner())

    denied = await guard.on_prompt(text)
    assert isinstance(denied, Deny)
    assert named in denied.reason
    assert await guard.on_tool_result(CALL, Outcome(text)) == Outcome(WITHHELD_OUTPUT)


async def test_reject_denies_a_prompt_and_withholds_a_tool_output() -> None:
    guard = PiiGuard(PiiMode.REJECT, RecordingSink(), scanner())

    denied = await guard.on_prompt("card 4111 1111 1111 1111")
    assert isinstance(denied, Deny)
    assert "credit_card" in denied.reason
    assert "4111" not in denied.reason
    withheld = await guard.on_tool_result(CALL, Outcome("ssn 123-45-6789"))
    assert withheld == Outcome(WITHHELD_OUTPUT)
    assert await guard.on_tool_result(CALL, Outcome("clean")) == Outcome("clean")


class BrokenScanner(Scanner):
    def __init__(self) -> None:
        super().__init__(())

    def scan(self, text: str) -> list[object]:  # type: ignore[override]
        raise RuntimeError("regex engine gone")


async def test_a_failed_scan_is_a_hit() -> None:
    sink = RecordingSink()
    guard = PiiGuard(PiiMode.REDACT, sink, BrokenScanner())

    assert await guard.on_tool_result(CALL, Outcome("anything")) == Outcome(SCAN_FAILED_OUTPUT)
    assert isinstance(await guard.on_prompt("anything"), Deny)
    (warning,) = sink.of(WarningEvent)
    assert "regex engine gone" in warning.error


async def test_the_guard_runs_after_the_callers_hooks_and_reads_their_rewrite() -> None:
    async def callers(prompt: str) -> str:
        return prompt + " reply to ops@example.com"

    async def callers_tool(call: ToolUseBlock, outcome: Outcome) -> Outcome:
        return Outcome(outcome.output + " jane@example.com")

    hooks = guarded_hooks(
        Hooks(user_prompt_submit=(callers,), post_tool_use=(callers_tool,)),
        PiiMode.REDACT,
        RecordingSink(),
    )

    assert await hooks.submit_prompt("hi") == "hi reply to [EMAIL-REDACTED]"
    assert await hooks.after_tool(CALL, Outcome("mail")) == Outcome("mail [EMAIL-REDACTED]")


def test_off_installs_nothing() -> None:
    mine = Hooks()
    assert guarded_hooks(mine, PiiMode.OFF, RecordingSink()) is mine


def test_a_scanner_that_will_not_build_fails_the_run(store: FileSessionStore) -> None:
    def broken() -> Scanner:
        raise ValueError("bad pattern")

    with pytest.raises(PiiError, match=r"harness\.pii\.mode"):
        guarded_hooks(None, PiiMode.REDACT, RecordingSink(), broken)


async def test_a_card_number_in_a_tool_output_reaches_model_and_journal_redacted(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    async def leaky(arguments: str, deps: ExecDeps) -> Outcome:
        return Outcome("customer card 4111 1111 1111 1111, mail jane@example.com")

    provider = ScriptedProvider([calls(call("t1", "lookup")), answer("done")])
    async with make_runner(
        provider=provider, tools=toolset(FakeTool("lookup", leaky)), store=store, events=sink
    ) as runner:
        result = await runner.start("look up the customer")

    sent = repr(provider.requests[1].messages)
    assert "4111" not in sent
    assert "[CREDIT-CARD-REDACTED]" in sent
    expected = "customer card [CREDIT-CARD-REDACTED], mail [EMAIL-REDACTED]"
    records = payloads(await store.read(result.session_id))
    assert [p.result for p in records if isinstance(p, ToolResult)] == [
        ToolResultBlock("t1", expected)
    ]
    assert [w.kind for w in sink.of(WarningEvent)] == [WarningKind.PII_FOUND]


async def test_a_prompt_is_redacted_before_the_journal_and_the_model(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    provider = ScriptedProvider([answer("ok")])
    async with make_runner(provider=provider, tools=toolset(), store=store, events=sink) as runner:
        result = await runner.start("my iban is DE89370400440532013000")

    assert "DE89" not in repr(provider.requests[0].messages)
    (meta,) = [p for p in payloads(await store.read(result.session_id)) if isinstance(p, Meta)]
    assert meta.prompt == "my iban is [IBAN-REDACTED]"


async def test_reject_refuses_the_prompt_in_a_run(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    settings = dataclasses.replace(SETTINGS, pii_mode=PiiMode.REJECT)
    provider = ScriptedProvider([answer("ok")])
    runner = make_runner(
        provider=provider, tools=toolset(), store=store, events=sink, settings=settings
    )
    with pytest.raises(PromptDenied):
        await runner.start("ssn 123-45-6789")
    assert provider.calls == 0


async def test_off_lets_everything_through(store: FileSessionStore, sink: RecordingSink) -> None:
    settings = dataclasses.replace(SETTINGS, pii_mode=PiiMode.OFF)
    provider = ScriptedProvider([answer("ok")])
    async with make_runner(
        provider=provider, tools=toolset(), store=store, events=sink, settings=settings
    ) as runner:
        await runner.start("mail jane@example.com")
    assert "jane@example.com" in repr(provider.requests[0].messages)
    assert sink.of(WarningEvent) == []


def test_the_runner_refuses_to_start_without_a_scanner(
    store: FileSessionStore, sink: RecordingSink, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fisk_ai.agent import pii

    def broken() -> Scanner:
        raise ValueError("bad pattern")

    monkeypatch.setattr(pii, "scanner", broken)
    monkeypatch.setattr(pii.guarded_hooks, "__defaults__", (broken,))
    with pytest.raises(AgentError, match=r"harness\.pii\.mode"):
        make_runner(provider=ScriptedProvider(), tools=toolset(), store=store, events=sink)
