from fisk_ai.util.redact import redact_url


def test_userinfo_is_removed() -> None:
    assert redact_url("nats://ops:hunter2@nats.example:4222") == "nats://nats.example:4222"


def test_query_values_are_hidden_and_names_kept() -> None:
    redacted = redact_url("https://mcp.example.net/mcp/?apiKey=abc123&region=eu")
    assert redacted == "https://mcp.example.net/mcp/?apiKey=REDACTED&region=REDACTED"


def test_a_bare_query_item_is_treated_as_a_value() -> None:
    assert redact_url("https://host/path?abc123") == "https://host/path?REDACTED"


def test_the_fragment_is_removed() -> None:
    assert redact_url("https://host/path#token=abc") == "https://host/path"


def test_userinfo_is_found_without_a_scheme() -> None:
    assert redact_url("ops:hunter2@nats.example:4222") == "nats.example:4222"


def test_an_address_without_secrets_is_unchanged() -> None:
    assert redact_url("nats://127.0.0.1:4222") == "nats://127.0.0.1:4222"


def test_an_unparseable_url_is_hidden_whole() -> None:
    assert redact_url("nats://[::1:4222") == "REDACTED"
