"""NATS contexts: the connection profiles the nats CLI saves, read for nats_context and
--nats-context.

A context is a JSON file at ``$XDG_CONFIG_HOME/nats/context/<name>.json`` (``~/.config`` when the
variable is unset or empty); ``nats/context.txt`` beside that folder names the selected one. The
file is the nats CLI's, so fields this module has no use for (a description, a color scheme) are
ignored rather than refused, and a value that would change the connection but cannot be honored
here (a SOCKS proxy, an nsc lookup, a Windows certificate store) is refused when the connection is
prepared, so nothing is silently weakened.

Secrets stay out of every message: errors name the file and the field, never a value, and a
context's repr shows its URL redacted and no credential at all.
"""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from fisk_ai.errors import FiskError
from fisk_ai.util import jsonx
from fisk_ai.util.redact import redact_url

__all__ = [
    "DEFAULT_NATS_URL",
    "NatsContext",
    "NatsContextError",
    "connect_options",
    "context_dir",
    "context_path",
    "jetstream_options",
    "load_context",
    "nats_config_dir",
    "selected_context_name",
]

DEFAULT_NATS_URL = "nats://127.0.0.1:4222"

_CHOOSE_A_CONTEXT = "set nats_context or pass --nats-context"
_ENV_REFERENCE = "env://"
_FILE_REFERENCE = "file://"
# Secret stores the nats CLI can resolve and this module cannot.
_UNSUPPORTED_REFERENCE = re.compile(r"^(op|nsc)://|^data:", re.IGNORECASE)
_FORBIDDEN_NAME_CHARACTERS = re.compile(r"[\s/\\\x00-\x1f\x7f]")
_PATH_VARIABLE = re.compile(r"\$(\w+)|\$\{(\w+)\}")


class NatsContextError(FiskError):
    """A NATS context is missing, malformed or asks for something this client cannot do."""


class _ContextFile(BaseModel):
    """The fields of a nats CLI context file that change how a connection is made."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    description: str | None = None
    url: str | None = None
    token: str | None = None
    user: str | None = None
    password: str | None = None
    creds: str | None = None
    nkey: str | None = None
    user_jwt: str | None = None
    user_seed: str | None = None
    cert: str | None = None
    key: str | None = None
    ca: str | None = None
    tls_first: bool | None = None
    inbox_prefix: str | None = None
    jetstream_domain: str | None = None
    jetstream_api_prefix: str | None = None
    jetstream_event_prefix: str | None = None
    socks_proxy: str | None = None
    nsc: str | None = None
    windows_cert_store: str | None = None


@dataclass(frozen=True, repr=False)
class NatsContext:
    """One NATS context as read from its file; empty fields are None.

    ``creds``, ``nkey``, ``cert``, ``key`` and ``ca`` are file paths with ``~`` and ``$VAR``
    expanded as the nats CLI does. ``token``, ``password``, ``user_jwt``, ``user_seed``, ``creds``
    and ``nkey`` may instead be ``env://NAME`` references, and the secret fields ``file://PATH``
    references, resolved only by ``connect_options``.
    """

    name: str
    path: Path
    url: str = DEFAULT_NATS_URL
    description: str | None = None
    token: str | None = None
    user: str | None = None
    password: str | None = None
    creds: str | None = None
    nkey: str | None = None
    user_jwt: str | None = None
    user_seed: str | None = None
    cert: str | None = None
    key: str | None = None
    ca: str | None = None
    tls_first: bool = False
    inbox_prefix: str | None = None
    jetstream_domain: str | None = None
    jetstream_api_prefix: str | None = None
    jetstream_event_prefix: str | None = None
    socks_proxy: str | None = None
    nsc: str | None = None
    windows_cert_store: str | None = None

    @property
    def servers(self) -> tuple[str, ...]:
        """The server URLs, which the file writes as one comma-separated string."""
        return tuple(part.strip() for part in self.url.split(",") if part.strip())

    @property
    def carries_credentials(self) -> bool:
        """Whether a connection made from this context authenticates at all: a user, a creds
        file, an nkey, an inline JWT, a token, a client certificate, or a user in a URL."""
        if any((self.user, self.creds, self.nkey, self.user_jwt, self.token)):
            return True
        if self.cert and self.key:
            return True
        return any("@" in server.split("://", 1)[-1].split("/", 1)[0] for server in self.servers)

    @property
    def redacted_url(self) -> str:
        """The server URLs fit to print."""
        return ",".join(redact_url(server) for server in self.servers)

    def __repr__(self) -> str:
        return (
            f"NatsContext(name={self.name!r}, path={str(self.path)!r}, url={self.redacted_url!r})"
        )

    __str__ = __repr__


def nats_config_dir() -> Path:
    """The nats CLI's configuration folder: ``$XDG_CONFIG_HOME/nats``, else ``~/.config/nats``."""
    configured = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(configured) if configured else Path.home() / ".config"
    return base / "nats"


def context_dir() -> Path:
    """The folder holding one ``<name>.json`` per context."""
    return nats_config_dir() / "context"


def context_path(name: str) -> Path:
    """The file a context name refers to; an absolute path names a context file directly."""
    if Path(name).is_absolute():
        return Path(name)
    if not name or name in (".", "..") or _FORBIDDEN_NAME_CHARACTERS.search(name) or ".." in name:
        raise NatsContextError(
            f"{name!r} is not a NATS context name (a name has no spaces, slashes or '..'); "
            f"{_CHOOSE_A_CONTEXT} to a context listed by `nats context ls`"
        )
    return context_dir() / f"{name}.json"


def selected_context_name() -> str | None:
    """The context ``nats context select`` chose, or None when none is selected."""
    try:
        selected = (nats_config_dir() / "context.txt").read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as failure:
        raise NatsContextError(
            f"cannot read the selected NATS context from {nats_config_dir() / 'context.txt'}: "
            f"{_reason(failure)}; fix the file or {_CHOOSE_A_CONTEXT}"
        ) from None
    return selected or None


def load_context(name: str | None) -> NatsContext:
    """Read the context called ``name``, or the selected one when ``name`` is None or empty."""
    if not name:
        selected = selected_context_name()
        if selected is None:
            raise NatsContextError(
                f"no NATS context is named and none is selected in "
                f"{nats_config_dir() / 'context.txt'}; {_CHOOSE_A_CONTEXT}, "
                f"or select one with `nats context select`"
            )
        name = selected
    path = context_path(name)
    display_name = path.stem if Path(name).is_absolute() else name
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NatsContextError(
            f'NATS context "{display_name}" does not exist: there is no {path}; '
            f"{_CHOOSE_A_CONTEXT} to an existing context, or create it with `nats context add`"
        ) from None
    except (OSError, UnicodeDecodeError) as failure:
        raise NatsContextError(
            f"cannot read NATS context file {path}: {_reason(failure)}; fix its permissions "
            f"or {_CHOOSE_A_CONTEXT} to another context"
        ) from None
    try:
        parsed = _ContextFile.model_validate(jsonx.parse(text))
    except jsonx.JsonError as failure:
        raise NatsContextError(
            f"NATS context file {path} {failure}; fix it or recreate it with `nats context add`"
        ) from None
    except ValidationError as failure:
        raise NatsContextError(
            f"NATS context file {path} is malformed: {_describe_invalid_fields(failure)}; "
            f"fix it or recreate it with `nats context add`"
        ) from None
    return NatsContext(
        name=display_name,
        path=path,
        url=parsed.url or DEFAULT_NATS_URL,
        description=parsed.description or None,
        token=parsed.token or None,
        user=parsed.user or None,
        password=parsed.password or None,
        creds=_expand_path(parsed.creds),
        nkey=_expand_path(parsed.nkey),
        user_jwt=parsed.user_jwt or None,
        user_seed=parsed.user_seed or None,
        cert=_expand_path(parsed.cert),
        key=_expand_path(parsed.key),
        ca=_expand_path(parsed.ca),
        tls_first=bool(parsed.tls_first),
        inbox_prefix=parsed.inbox_prefix or None,
        jetstream_domain=parsed.jetstream_domain or None,
        jetstream_api_prefix=parsed.jetstream_api_prefix or None,
        jetstream_event_prefix=parsed.jetstream_event_prefix or None,
        socks_proxy=parsed.socks_proxy or None,
        nsc=parsed.nsc or None,
        windows_cert_store=parsed.windows_cert_store or None,
    )


def connect_options(context: NatsContext) -> dict[str, Any]:
    """Keyword arguments for nats-py's ``connect()`` that reach the server ``context`` describes.

    Credentials follow the nats CLI's precedence: a user name (with its password), else a creds
    file, else an nkey seed, else an inline user JWT with its seed; a token is sent beside any of
    them. References are resolved here, so a variable is read when a connection is made rather
    than when the file is parsed. The caller adds its own ``name``, callbacks and reconnect policy.
    """
    _refuse_unsupported(context)
    options: dict[str, Any] = {"servers": list(context.servers) or [DEFAULT_NATS_URL]}
    if context.user:
        options["user"] = context.user
        if context.password:
            options["password"] = _resolve_secret(context, "password", context.password)
    elif context.creds:
        options["user_credentials"] = _credentials(context)
    elif context.nkey:
        if context.nkey.startswith(_ENV_REFERENCE):
            options["nkeys_seed_str"] = _resolve_secret(context, "nkey", context.nkey)
        else:
            options["nkeys_seed"] = _existing_file(context, "nkey", context.nkey)
        _require_nkeys(context, "nkey")
    elif context.user_jwt:
        options["user_credentials"] = _inline_credentials(context, context.user_jwt)
    if context.token:
        options["token"] = _resolve_secret(context, "token", context.token)
    tls = _tls_context(context)
    if tls is not None:
        options["tls"] = tls
    if context.tls_first:
        options["tls_handshake_first"] = True
    if context.inbox_prefix:
        options["inbox_prefix"] = context.inbox_prefix
    return options


def jetstream_options(context: NatsContext) -> dict[str, Any]:
    """Keyword arguments for nats-py's ``jetstream()`` carrying the context's domain or API
    prefix, so streams and buckets are found where the context says they live."""
    options: dict[str, Any] = {}
    if context.jetstream_domain:
        options["domain"] = context.jetstream_domain
    if context.jetstream_api_prefix:
        options["prefix"] = context.jetstream_api_prefix
    return options


def _refuse_unsupported(context: NatsContext) -> None:
    unsupported = {
        "socks_proxy": "connecting through a SOCKS proxy",
        "nsc": "looking credentials up with nsc",
        "windows_cert_store": "reading certificates from the Windows certificate store",
    }
    for field_name, feature in unsupported.items():
        if getattr(context, field_name):
            raise NatsContextError(
                f'NATS context file {context.path} sets "{field_name}", but fisk-ai does not '
                f"support {feature}; remove it from the context or use a context without it"
            )
    if bool(context.cert) != bool(context.key):
        missing, present = ("key", "cert") if context.cert else ("cert", "key")
        raise NatsContextError(
            f'NATS context file {context.path} sets "{present}" without "{missing}"; a client '
            f'certificate needs both, so add "{missing}" or remove "{present}"'
        )


def _credentials(context: NatsContext) -> object:
    assert context.creds is not None
    if context.creds.startswith(_ENV_REFERENCE):
        credentials = _resolve_secret(context, "creds", context.creds)
        _require_nkeys(context, "creds")
        from nats.aio.client import RawCredentials

        return RawCredentials(credentials)
    path = _existing_file(context, "creds", context.creds)
    _require_nkeys(context, "creds")
    return path


def _inline_credentials(context: NatsContext, user_jwt_reference: str) -> object:
    user_jwt = _resolve_secret(context, "user_jwt", user_jwt_reference)
    if context.user_seed:
        seed = _resolve_secret(context, "user_seed", context.user_seed)
    else:
        raise NatsContextError(
            f'NATS context file {context.path} sets "user_jwt" without "user_seed"; add the '
            f'user\'s seed as "user_seed" or use a "creds" file instead'
        )
    _require_nkeys(context, "user_jwt")
    from nats.aio.client import RawCredentials

    # nats-py reads inline credentials in the layout of a creds file, so one is assembled.
    return RawCredentials(
        "-----BEGIN NATS USER JWT-----\n"
        f"{user_jwt}\n"
        "------END NATS USER JWT------\n\n"
        "-----BEGIN USER NKEY SEED-----\n"
        f"{seed}\n"
        "------END USER NKEY SEED------\n"
    )


def _require_nkeys(context: NatsContext, field_name: str) -> None:
    # nats-py signs the server's challenge with the nkeys package but does not depend on it.
    if importlib.util.find_spec("nkeys") is None:
        raise NatsContextError(
            f'NATS context file {context.path} authenticates with "{field_name}", which needs '
            f"the nkeys package; install it with `pip install nkeys`"
        )


def _resolve_secret(context: NatsContext, field_name: str, value: str) -> str:
    if _UNSUPPORTED_REFERENCE.match(value):
        raise NatsContextError(
            f'NATS context file {context.path} takes "{field_name}" from a secret store fisk-ai '
            f"cannot read; write the value, an env:// or a file:// reference there instead"
        )
    if value.startswith(_ENV_REFERENCE):
        variable = value.removeprefix(_ENV_REFERENCE)
        resolved = os.environ.get(variable, "") if variable else ""
        if not resolved:
            raise NatsContextError(
                f'NATS context file {context.path} takes "{field_name}" from the environment '
                f'variable "{variable}", which is not set; set {variable or "it"} or change the '
                f"context"
            )
        return resolved.rstrip("\r\n")
    if value.startswith(_FILE_REFERENCE):
        path = _existing_file(context, field_name, value.removeprefix(_FILE_REFERENCE))
        try:
            return Path(path).read_text(encoding="utf-8").rstrip("\r\n")
        except (OSError, UnicodeDecodeError) as failure:
            raise NatsContextError(
                f'cannot read "{field_name}" of NATS context file {context.path} from {path}: '
                f"{_reason(failure)}; fix the file or the reference"
            ) from None
    return value


def _existing_file(context: NatsContext, field_name: str, reference: str) -> str:
    path = _expand_path(reference.removeprefix(_FILE_REFERENCE)) or ""
    if _UNSUPPORTED_REFERENCE.match(path):
        raise NatsContextError(
            f'NATS context file {context.path} takes "{field_name}" from a secret store fisk-ai '
            f"cannot read; point it at a file instead"
        )
    if not Path(path).is_file():
        raise NatsContextError(
            f'"{field_name}" in NATS context file {context.path} names {path}, which is not a '
            f"readable file; fix the path in the context"
        )
    return path


def _tls_context(context: NatsContext) -> Any:
    if not (context.ca or context.cert):
        return None
    import ssl

    tls = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    if context.ca:
        ca_path = _existing_file(context, "ca", context.ca)
        try:
            tls.load_verify_locations(cafile=ca_path)
        except (OSError, ssl.SSLError) as failure:
            raise NatsContextError(
                f'"ca" in NATS context file {context.path} names {ca_path}, which is not a usable '
                f"CA certificate ({_reason(failure)}); fix the path in the context"
            ) from None
    if context.cert and context.key:
        cert_path = _existing_file(context, "cert", context.cert)
        key_path = _existing_file(context, "key", context.key)
        try:
            tls.load_cert_chain(certfile=cert_path, keyfile=key_path)
        except (OSError, ssl.SSLError) as failure:
            raise NatsContextError(
                f'"cert" and "key" in NATS context file {context.path} are not a usable client '
                f"certificate and key ({_reason(failure)}); fix the paths in the context"
            ) from None
    return tls


def _expand_path(value: str | None) -> str | None:
    """``~`` and ``$VAR`` expanded as the nats CLI expands them; an unset variable is left as
    written so the error for the missing file names it."""
    if not value:
        return None
    if value.startswith(_ENV_REFERENCE) or _UNSUPPORTED_REFERENCE.match(value):
        return value

    def substitute(match: re.Match[str]) -> str:
        variable = match.group(1) or match.group(2)
        return os.environ.get(variable, match.group(0))

    expanded = _PATH_VARIABLE.sub(substitute, value)
    return str(Path(expanded).expanduser()) if expanded.startswith("~") else expanded


def _describe_invalid_fields(failure: ValidationError) -> str:
    # Only field names and expected kinds: a pydantic message can quote the offending value.
    problems: list[str] = []
    for error in failure.errors(include_input=False, include_url=False):
        location = ".".join(str(part) for part in error["loc"])
        if error["type"] == "model_type":
            problems.append("the file must hold a JSON object")
        elif error["type"].startswith("bool"):
            problems.append(f'"{location}" must be true or false')
        else:
            problems.append(f'"{location}" must be a string')
    return ", ".join(dict.fromkeys(problems))


def _reason(failure: BaseException) -> str:
    if isinstance(failure, OSError) and failure.strerror:
        return failure.strerror
    return type(failure).__name__
