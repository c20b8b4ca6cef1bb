"""The PII guard writes the placeholders the Go fisk-ai writes, so a journal or a model prompt
reads the same from both: Go's credential pass names API keys, NATS seeds, NATS credentials and
bearer tokens (``[API_KEY-REDACTED]``...), its ferret-scan pass writes ``[SECRET-REDACTED]`` for
the rest (docs/compatibility.md, PII)."""

import pytest

from fisk_ai.agent.pii import redact, scanner

TOKEN = "Zq81xWv4Lm0pRt7Ys3Kd9Nb2Hc6Jf5Ga1Ue8Io"
SEED = "SU" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567" * 2
NATS_USER_JWT = (
    "-----BEGIN NATS USER JWT-----\n"
    "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJqdGkiOiJaWVgifQ.c2lnbmVk\n"
    "------END NATS USER JWT------"
)
NKEY_SEED_BLOCK = f"-----BEGIN USER NKEY SEED-----\n{SEED[:58]}\n------END USER NKEY SEED------"


def redacted(text: str) -> str:
    return redact(text, scanner().scan(text))


@pytest.mark.parametrize(
    "key",
    [
        "sk-or-v1-" + TOKEN.lower() + "0123",
        "sk-ant-api03-" + TOKEN,
        "sk-proj-" + TOKEN,
        "sk-" + TOKEN,
        "xoxb-12345678901-" + TOKEN[:24],
        "github_pat_" + TOKEN,
        "ghp_" + TOKEN[:36],
    ],
    ids=["openrouter", "anthropic", "openai-project", "openai", "slack", "github-pat", "github"],
)
def test_a_provider_key_is_an_api_key(key: str) -> None:
    assert redacted(f"use {key} for the call") == "use [API_KEY-REDACTED] for the call"


def test_a_bare_nkey_seed_is_a_nats_seed() -> None:
    assert redacted(f"the seed is {SEED[:58]}") == "the seed is [NATS_SEED-REDACTED]"


def test_the_seed_block_of_a_credentials_file_is_a_nats_seed() -> None:
    assert redacted(f"creds:\n{NKEY_SEED_BLOCK}\n") == "creds:\n[NATS_SEED-REDACTED]\n"


def test_the_jwt_block_of_a_credentials_file_is_nats_credentials() -> None:
    assert redacted(f"creds:\n{NATS_USER_JWT}\n") == "creds:\n[NATS_CREDENTIALS-REDACTED]\n"


def test_a_whole_credentials_file_is_its_two_blocks_named_as_go_names_them() -> None:
    text = f"{NATS_USER_JWT}\n\n************************* IMPORTANT *************************\n\n"
    text += NKEY_SEED_BLOCK
    assert redacted(text).startswith("[NATS_CREDENTIALS-REDACTED]\n")
    assert redacted(text).endswith("\n[NATS_SEED-REDACTED]")


def test_a_bearer_token_keeps_its_word_and_is_a_bearer_token() -> None:
    assert redacted(f"Authorization: Bearer {TOKEN}") == (
        "Authorization: Bearer [BEARER_TOKEN-REDACTED]"
    )


@pytest.mark.parametrize(
    "secret",
    [
        "AKIA" + TOKEN[:16].upper(),
        "glpat-" + TOKEN[:20],
        "AIza" + (TOKEN * 2)[:35],
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlX2hlcmU",
    ],
    ids=["aws", "gitlab", "google", "jwt"],
)
def test_what_go_finds_with_ferret_scan_stays_a_secret(secret: str) -> None:
    assert redacted(f"found {secret} here") == "found [SECRET-REDACTED] here"


def test_a_private_key_block_stays_a_secret() -> None:
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + TOKEN + "\n-----END RSA PRIVATE KEY-----"
    assert redacted(f"key:\n{key}") == "key:\n[SECRET-REDACTED]"
