from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import nats
import pytest

from fisk_ai.broker.context import (
    DEFAULT_NATS_URL,
    NatsContextError,
    connect_options,
    jetstream_options,
    load_context,
)
from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from fisk_ai.errors import FiskError

SECRET = "s3cret-never-printed"


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


def write_context(config_home: Path, name: str, body: Any) -> Path:
    path = config_home / "nats" / "context" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body if isinstance(body, str) else json.dumps(body))
    return path


def select(config_home: Path, name: str) -> None:
    (config_home / "nats" / "context.txt").write_text(f"{name}\n")


def test_a_named_context_is_read(config_home: Path) -> None:
    path = write_context(
        config_home,
        "production",
        {
            "description": "the fleet",
            "url": "nats://a.example:4222,nats://b.example:4222",
            "user": "ops",
            "password": SECRET,
            "inbox_prefix": "_INBOX.ops",
            "jetstream_domain": "hub",
            "tls_first": True,
        },
    )
    context = load_context("production")
    assert context.name == "production"
    assert context.path == path
    assert context.servers == ("nats://a.example:4222", "nats://b.example:4222")
    assert context.user == "ops"
    assert context.password == SECRET
    assert context.inbox_prefix == "_INBOX.ops"
    assert context.jetstream_domain == "hub"
    assert context.tls_first is True


def test_an_empty_url_means_the_default_server(config_home: Path) -> None:
    write_context(config_home, "local", {"url": "", "token": ""})
    context = load_context("local")
    assert context.url == DEFAULT_NATS_URL
    assert context.token is None


def test_fields_this_client_has_no_use_for_are_ignored(config_home: Path) -> None:
    write_context(config_home, "fancy", {"url": "nats://x:4222", "color_scheme": "dark", "x": 1})
    assert load_context("fancy").url == "nats://x:4222"


def test_the_selected_context_is_read_when_no_name_is_given(config_home: Path) -> None:
    write_context(config_home, "staging", {"url": "nats://staging:4222"})
    select(config_home, "staging")
    context = load_context(None)
    assert context.name == "staging"
    assert context.url == "nats://staging:4222"


def test_without_xdg_config_home_the_home_config_folder_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    write_context(tmp_path / ".config", "home", {"url": "nats://home:4222"})
    assert load_context("home").url == "nats://home:4222"


def test_an_absolute_path_names_a_context_file(tmp_path: Path) -> None:
    path = tmp_path / "elsewhere.json"
    path.write_text(json.dumps({"url": "nats://elsewhere:4222"}))
    context = load_context(str(path))
    assert context.name == "elsewhere"
    assert context.url == "nats://elsewhere:4222"


def test_a_missing_context_names_the_file_and_the_settings(config_home: Path) -> None:
    with pytest.raises(NatsContextError) as raised:
        load_context("nowhere")
    message = str(raised.value)
    assert str(config_home / "nats" / "context" / "nowhere.json") in message
    assert "nats_context" in message
    assert "--nats-context" in message


def test_no_selected_context_names_the_settings(config_home: Path) -> None:
    with pytest.raises(NatsContextError, match=r"none is selected.*--nats-context"):
        load_context(None)


def test_a_context_name_that_leaves_the_folder_is_refused(config_home: Path) -> None:
    with pytest.raises(NatsContextError, match="not a NATS context name"):
        load_context("../secrets")


def test_a_file_that_is_not_json_names_the_file(config_home: Path) -> None:
    path = write_context(config_home, "broken", '{"url": "nats://x:4222",')
    with pytest.raises(NatsContextError, match="not valid JSON") as raised:
        load_context("broken")
    assert str(path) in str(raised.value)


def test_a_file_holding_something_other_than_an_object_is_malformed(config_home: Path) -> None:
    write_context(config_home, "list", "[1, 2]")
    with pytest.raises(NatsContextError, match="must hold a JSON object"):
        load_context("list")


def test_a_field_of_the_wrong_kind_is_named_without_its_value(config_home: Path) -> None:
    path = write_context(config_home, "typed", {"token": 918273645, "tls_first": "yes"})
    with pytest.raises(NatsContextError) as raised:
        load_context("typed")
    message = str(raised.value)
    assert str(path) in message
    assert '"token" must be a string' in message
    assert '"tls_first" must be true or false' in message
    assert "918273645" not in message


def test_the_repr_shows_no_secret(config_home: Path) -> None:
    write_context(
        config_home,
        "secretive",
        {
            "url": f"nats://ops:{SECRET}@a.example:4222",
            "token": SECRET,
            "password": SECRET,
            "user_seed": SECRET,
        },
    )
    context = load_context("secretive")
    assert SECRET not in repr(context)
    assert SECRET not in str(context)
    assert "a.example:4222" in repr(context)


def test_connect_options_carry_user_password_and_servers(config_home: Path) -> None:
    write_context(
        config_home,
        "users",
        {"url": "nats://a:4222, nats://b:4222", "user": "ops", "password": SECRET},
    )
    options = connect_options(load_context("users"))
    assert options["servers"] == ["nats://a:4222", "nats://b:4222"]
    assert options["user"] == "ops"
    assert options["password"] == SECRET


def test_connect_options_carry_the_inbox_prefix_and_tls_first(config_home: Path) -> None:
    write_context(config_home, "tuned", {"inbox_prefix": "_INBOX.me", "tls_first": True})
    options = connect_options(load_context("tuned"))
    assert options["inbox_prefix"] == "_INBOX.me"
    assert options["tls_handshake_first"] is True


def test_a_token_from_the_environment_is_read_at_connect(
    config_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_context(config_home, "fromenv", {"token": "env://FISK_TEST_NATS_TOKEN"})
    context = load_context("fromenv")
    monkeypatch.setenv("FISK_TEST_NATS_TOKEN", SECRET)
    assert connect_options(context)["token"] == SECRET


def test_an_unset_variable_is_named(config_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FISK_TEST_NATS_TOKEN", raising=False)
    write_context(config_home, "fromenv", {"token": "env://FISK_TEST_NATS_TOKEN"})
    with pytest.raises(NatsContextError, match="FISK_TEST_NATS_TOKEN"):
        connect_options(load_context("fromenv"))


def test_a_token_from_a_file_is_read_at_connect(config_home: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(f"{SECRET}\n")
    write_context(config_home, "fromfile", {"token": f"file://{token_file}"})
    assert connect_options(load_context("fromfile"))["token"] == SECRET


def test_a_secret_store_reference_is_refused(config_home: Path) -> None:
    write_context(config_home, "vault", {"password": "op://vault/nats/password", "user": "u"})
    with pytest.raises(NatsContextError, match=r'"password" from a secret store'):
        connect_options(load_context("vault"))


def test_a_socks_proxy_is_refused_rather_than_ignored(config_home: Path) -> None:
    path = write_context(config_home, "proxied", {"socks_proxy": "socks5://proxy:1080"})
    with pytest.raises(NatsContextError, match='"socks_proxy"') as raised:
        connect_options(load_context("proxied"))
    assert str(path) in str(raised.value)


def test_a_certificate_without_its_key_is_refused(config_home: Path, tmp_path: Path) -> None:
    write_context(config_home, "halfcert", {"cert": str(tmp_path / "client.pem")})
    with pytest.raises(NatsContextError, match='"cert" without "key"'):
        connect_options(load_context("halfcert"))


def test_a_missing_creds_file_is_named(config_home: Path, tmp_path: Path) -> None:
    missing = tmp_path / "user.creds"
    write_context(config_home, "creds", {"creds": str(missing)})
    with pytest.raises(NatsContextError, match=r'"creds".*user\.creds.*not a readable file'):
        connect_options(load_context("creds"))


def test_creds_paths_expand_the_home_folder(
    config_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    write_context(config_home, "tilde", {"creds": "~/keys/user.creds", "ca": "$HOME/ca.pem"})
    context = load_context("tilde")
    assert context.creds == str(tmp_path / "keys" / "user.creds")
    assert context.ca == f"{tmp_path}/ca.pem"


def test_creds_without_the_nkeys_package_say_what_to_install(
    config_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "nkeys", None)
    creds = tmp_path / "user.creds"
    creds.write_text("not really creds")
    write_context(config_home, "creds", {"creds": str(creds)})
    with pytest.raises(NatsContextError, match="pip install nkeys"):
        connect_options(load_context("creds"))


def test_jetstream_options_carry_the_domain(config_home: Path) -> None:
    write_context(config_home, "leaf", {"jetstream_domain": "hub"})
    assert jetstream_options(load_context("leaf")) == {"domain": "hub"}


def test_errors_about_a_url_never_show_its_password(config_home: Path) -> None:
    write_context(
        config_home, "leaky", {"url": f"nats://ops:{SECRET}@a:4222", "socks_proxy": "socks5://p"}
    )
    with pytest.raises(NatsContextError) as raised:
        connect_options(load_context("leaky"))
    assert SECRET not in str(raised.value)


@pytest.mark.skipif(locate_server_binary() is None, reason="no nats-server binary")
async def test_connect_options_reach_a_real_server(config_home: Path) -> None:
    async with EmbeddedBroker() as broker:
        write_context(config_home, "embedded", {"url": broker.url, "token": broker.token})
        options = connect_options(load_context("embedded"))

        async def ignore(error: Exception) -> None:
            pass

        client = await nats.connect(**options, allow_reconnect=False, error_cb=ignore)
        try:
            assert client.is_connected
        finally:
            await client.close()


@pytest.mark.parametrize(
    ("body", "carries"),
    [
        ({"url": "nats://127.0.0.1:4222"}, False),
        ({}, False),
        ({"url": "nats://127.0.0.1:4222", "cert": "/c.pem"}, False),
        ({"token": "t"}, True),
        ({"user": "u", "password": "p"}, True),
        ({"creds": "/x.creds"}, True),
        ({"nkey": "/x.nk"}, True),
        ({"user_jwt": "j", "user_seed": "s"}, True),
        ({"cert": "/c.pem", "key": "/k.pem"}, True),
        ({"url": "nats://a:4222,nats://u:p@b:4222"}, True),
        ({"url": "u:p@b:4222"}, True),
    ],
)
def test_whether_a_context_carries_credentials(
    config_home: Path, body: dict[str, Any], carries: bool
) -> None:
    write_context(config_home, "c", body)
    assert load_context("c").carries_credentials is carries


async def test_connecting_without_credentials_is_warned_once(config_home: Path) -> None:
    from fisk_ai.serve.connection import connect_transport

    write_context(config_home, "open", {"url": "nats://127.0.0.1:1"})
    warnings: list[str] = []
    with pytest.raises(FiskError, match="cannot connect"):
        await connect_transport("open", name="t", warn_unauthenticated=warnings.append)
    (warning,) = warnings
    assert 'NATS context "open" carries no credentials' in warning
    assert "docs/serving.md" in warning


async def test_connecting_with_credentials_is_not_warned(config_home: Path) -> None:
    from fisk_ai.serve.connection import connect_transport

    write_context(config_home, "closed", {"url": "nats://127.0.0.1:1", "token": "t"})
    warnings: list[str] = []
    with pytest.raises(FiskError, match="cannot connect"):
        await connect_transport("closed", name="t", warn_unauthenticated=warnings.append)
    assert warnings == []
