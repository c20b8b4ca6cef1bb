"""Suite-wide guards: no test reaches beyond this machine."""

from __future__ import annotations

import compileall
import ipaddress
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.patience import DEADLINE

REPO_ROOT = Path(__file__).resolve().parent.parent

# pytest keeps the assertion-rewritten test modules only where bytecode may be written. Under the
# machine's PYTHONDONTWRITEBYTECODE every worker rewrote and compiled all of them again, about
# 7 s of CPU per worker on each run; kept, a later run loads them.
sys.dont_write_bytecode = False

# Scripts the tests start (fake fisk applications, the examples) find this interpreter first.
os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"


@pytest.hookimpl(optionalhook=True)
def pytest_configure(config: pytest.Config) -> None:
    """Bring the package's bytecode up to date once, before any test starts a `fisk` process.

    With ``PYTHONDONTWRITEBYTECODE`` set (as on the project's CI machine) no `fisk` process
    writes the bytecode it compiled, so each one compiled every module it imported again, some
    0.1 s of CPU a start. A module whose bytecode is current is only looked at.
    """
    compileall.compile_dir(Path(__file__).resolve().parent.parent / "fisk_ai", quiet=1)


# A test still running after this many seconds is hung on something no wait of its own guards:
# pytest-timeout fails it with every thread's stack, where a hang would hold the whole run until
# CI's own limit and say nothing. It spans the test's fixtures, so it is a few deadlines long.
TEST_CEILING = 2.5 * DEADLINE


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TEST_CEILING))


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """How many workers ``-n auto`` starts: one per core and one more.

    Much of the suite waits on a child process (fisk, nats-server, tmux) or a socket, so a spare
    worker keeps the cores busy: on the 2-core machines three workers finish sooner than two.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own override of the count; its default hook reads it
    if hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:
        cores = os.cpu_count() or 1
    return cores + 1


def _is_local(address: Any) -> bool:
    if isinstance(address, tuple) and address:
        host = address[0]
    else:
        return True  # unix sockets and other families stay on this machine
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _no_internet(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded_connect(self: socket.socket, address: Any) -> Any:
        if not _is_local(address):
            raise AssertionError(f"a test tried to reach {address!r} beyond this machine")
        return real_connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> Any:
        if not _is_local(address):
            raise AssertionError(f"a test tried to reach {address!r} beyond this machine")
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    yield


# What the developer's terminal and shell say about themselves, which would otherwise change
# what a test sees: the theme the workstation picks, colours, widths, the multiplexer it reports
# to, the editor it opens, and the flags `fisk` reads from the environment.
TERMINAL_VARIABLES = (
    "COLORFGBG",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLUMNS",
    "LINES",
    "TERM_PROGRAM",
    "TERM_PROGRAM_VERSION",
    "TMUX",
    "TMUX_PANE",
    "ZELLIJ",
    "ZELLIJ_PANE_ID",
    "ZELLIJ_SESSION_NAME",
    "VISUAL",
    "EDITOR",
)
FISK_VARIABLES = (
    "NO_TUI",
    "NO_STREAM",
    "VERBOSE",
    "TOOL_OUTPUT",
    "THINKING",
    "HTTP_DEBUG",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_CUSTOM_HEADERS",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
)
_XDG_DIRECTORIES = {
    "XDG_CONFIG_HOME": ".config",
    "XDG_STATE_HOME": ".local/state",
    "XDG_DATA_HOME": ".local/share",
    "XDG_CACHE_HOME": ".cache",
}
TEST_TERM = "xterm-256color"
# npx keeps the packages it fetched and the registry it reaches under the developer's home; a
# test that runs npx keeps using them rather than fetching everything again into a fresh home.
_DEVELOPER_HOME = Path.home()
_NPM_SETTINGS = {
    "npm_config_cache": _DEVELOPER_HOME / ".npm",
    "npm_config_userconfig": _DEVELOPER_HOME / ".npmrc",
}


def textual_setting(variable: str) -> bool:
    """Whether ``variable`` is one of Textual's settings (the snapshot plugin's own variables,
    which carry its temporary directory to the test, are not)."""
    return variable.startswith("TEXTUAL_") and not variable.startswith("TEXTUAL_SNAPSHOT_")


@pytest.fixture(autouse=True)
def _hermetic_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every test starts from the same environment, whatever the developer's shell holds:
    ``HOME`` and every ``XDG_*`` directory are fresh, so nothing a test runs reads or writes
    the developer's state (the prompt history, sessions, NATS contexts); the terminal looks
    like a plain dark xterm; Textual's own settings are unset. A test sets its own on top.

    Textual read ``TEXTUAL_ANIMATIONS`` when it was imported, before this runs (the snapshot
    plugin imports it), so every app built in the test process gets its animation level from
    the constant pinned here; ``TEXTUAL_*`` unset covers the processes a test starts."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for variable in [
        name for name in os.environ if name.startswith("XDG_") or textual_setting(name)
    ]:
        monkeypatch.delenv(variable)
    for variable, directory in _XDG_DIRECTORIES.items():
        (home / directory).mkdir(parents=True)
        monkeypatch.setenv(variable, str(home / directory))
    for variable in (*TERMINAL_VARIABLES, *FISK_VARIABLES):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("TERM", TEST_TERM)
    for variable, path in _NPM_SETTINGS.items():
        if variable not in os.environ and path.exists():
            monkeypatch.setenv(variable, str(path))
    textual_constants = sys.modules.get("textual.constants")
    if textual_constants is not None:
        monkeypatch.setattr(textual_constants, "TEXTUAL_ANIMATIONS", "none")


@pytest.fixture
def tmux_environment(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment of a tmux server of the test's own: no TMUX variables, its socket under
    the test's directory."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("TMUX")}
    environment["TMUX_TMPDIR"] = str(tmp_path / "tmux")
    (tmp_path / "tmux").mkdir()
    yield environment
