"""A fake fisk application: an executable Python script that answers ``--fisk-introspect``.

Build a model with ``application`` / ``command`` / ``flag`` / ``arg`` (or take ``sample_model``),
then ``write_fake_app(tmp_path, model)`` and use the returned path as ``application_path``.

At run time the script finds the leaf command named by the leading argv words and does what the
command's ``fake_action`` says (fisk-ai ignores that key, as it ignores any key it does not know):

- ``echoes()`` (the default): print one JSON line ``{"argv": [...], "env": {...}, "cwd": "..."}``
  with the argv after the script path and the script's whole environment, then exit with the
  given status.
- ``prints_bytes(n)``: print ``output_pattern(n)`` to stdout.
- ``interleaves(lines)``: alternate ``out i`` on stdout and ``err i`` on stderr, flushing each.
- ``hangs(pid_file, detach=False)``: start a child that sleeps, write the child's pid to
  ``pid_file`` (atomically), print ``waiting`` and sleep. With ``detach`` the child starts its
  own session, leaving the process group while still holding the output pipe. To learn the pid
  while the command is still running, make ``pid_file`` with ``open_pid_fifo`` and await
  ``read_pid``.
- ``blocks_first_run(pid_file, marker)``: on the first run (while ``marker`` does not exist)
  create ``marker``, write the script's own pid to ``pid_file`` as ``hangs`` does, print
  ``started`` and wait until ``release(pid)`` (SIGUSR1), then print ``released`` and exit 0.
  Every later run prints ``ran again`` and exits 0 at once: a crashed run's repeat is quick.

Any action can be wrapped in ``logged(action, runs_log)``: each run then appends its argv as one
JSON line to ``runs_log`` before doing anything else, and ``runs_of(runs_log)`` reads them back,
so a test can count how often a command really ran.

``behaviour`` makes the script misbehave at introspection instead: ``hang-on-introspect``,
``fail-on-introspect`` (exit 3 after printing to stderr), ``malformed-introspect``,
``silent-introspect`` (prints nothing), ``array-introspect`` (prints ``[]``) and
``huge-introspect`` (prints a valid document of ``HUGE_DOCUMENT_BYTES`` bytes).

Helpers: ``sample_model()`` is a ready application (global ``--context``, denied, hidden, nested
and gated commands); ``output_pattern(n)`` is what ``prints_bytes(n)`` prints;
``wait_for_exit(pid)`` waits for any process to end; ``kill_quietly(pid)`` cleans up after a test.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

HUGE_DOCUMENT_BYTES = 16 * 1024 * 1024 + 1
_PATTERN = "abcdefghijklmnopqrstuvwxyz0123456789\n"

BEHAVIOURS = (
    "echo",
    "hang-on-introspect",
    "fail-on-introspect",
    "malformed-introspect",
    "silent-introspect",
    "array-introspect",
    "huge-introspect",
)

_SCRIPT = """#!{python}
import json
import os
import signal
import stat
import subprocess
import sys
import time

MODEL = json.loads({model!r})
BEHAVIOUR = {behaviour!r}
PATTERN = {pattern!r}
HUGE = {huge!r}


def introspect():
    if BEHAVIOUR == "hang-on-introspect":
        time.sleep(3600)
    elif BEHAVIOUR == "fail-on-introspect":
        sys.stderr.write("fake: introspection is broken today\\n")
        sys.exit(3)
    elif BEHAVIOUR == "malformed-introspect":
        sys.stdout.write('{{"name": "app", ')
    elif BEHAVIOUR == "silent-introspect":
        pass
    elif BEHAVIOUR == "array-introspect":
        sys.stdout.write("[]\\n")
    elif BEHAVIOUR == "huge-introspect":
        head, tail = '{{"name":"app","help":"', '"}}'
        sys.stdout.write(head + "x" * (HUGE - len(head) - len(tail)) + tail)
    else:
        sys.stdout.write(json.dumps(MODEL) + "\\n")


def find_command(argv):
    commands, found = MODEL.get("commands") or [], None
    for word in argv:
        match = next((c for c in commands if c.get("name") == word), None)
        if match is None:
            break
        found, commands = match, match.get("commands") or []
    return found


def pattern(size):
    return (PATTERN * (size // len(PATTERN) + 1))[:size]


def write_pid(pid_file, pid):
    if os.path.exists(pid_file) and stat.S_ISFIFO(os.stat(pid_file).st_mode):
        with open(pid_file, "w") as handle:
            handle.write(str(pid))
    else:
        partial = pid_file + ".partial"
        with open(partial, "w") as handle:
            handle.write(str(pid))
        os.replace(partial, pid_file)


def block_first_run(action):
    if os.path.exists(action["marker"]):
        sys.stdout.write("ran again\\n")
        return 0
    open(action["marker"], "w").close()

    def released(signum, frame):
        sys.stdout.write("released\\n")
        sys.stdout.flush()
        os._exit(0)

    signal.signal(signal.SIGUSR1, released)
    sys.stdout.write("started\\n")
    sys.stdout.flush()
    write_pid(action["pid_file"], os.getpid())
    while True:
        signal.pause()


def main():
    argv = sys.argv[1:]
    if argv == ["--fisk-introspect"]:
        introspect()
        return 0
    command = find_command(argv) or {{}}
    action = command.get("fake_action") or {{"kind": "echo"}}
    kind = action["kind"]
    if action.get("runs_log"):
        with open(action["runs_log"], "a") as handle:
            handle.write(json.dumps(argv) + "\\n")
    if kind == "block_first_run":
        return block_first_run(action)
    if kind == "print_bytes":
        sys.stdout.write(pattern(action["bytes"]))
    elif kind == "interleave":
        for index in range(action["lines"]):
            sys.stdout.write("out %d\\n" % index)
            sys.stdout.flush()
            sys.stderr.write("err %d\\n" % index)
            sys.stderr.flush()
    elif kind == "hang":
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(3600)"],
            start_new_session=action["detach"],
        )
        pid_file = action["pid_file"]
        if os.path.exists(pid_file) and stat.S_ISFIFO(os.stat(pid_file).st_mode):
            with open(pid_file, "w") as handle:
                handle.write(str(child.pid))
        else:
            partial = pid_file + ".partial"
            with open(partial, "w") as handle:
                handle.write(str(child.pid))
            os.replace(partial, pid_file)
        sys.stdout.write("waiting\\n")
        sys.stdout.flush()
        time.sleep(3600)
    else:
        record = {{"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}}
        sys.stdout.write(json.dumps(record) + "\\n")
        return action.get("exit_code", 0)
    return 0


sys.exit(main())
"""


def write_fake_app(
    directory: Path, model: Mapping[str, Any], *, name: str = "app", behaviour: str = "echo"
) -> Path:
    """Write the executable fake application ``directory/name`` for ``model``; return its path."""
    if behaviour not in BEHAVIOURS:
        raise ValueError(f"unknown fake behaviour {behaviour!r}; choose one of {BEHAVIOURS}")
    path = directory / name
    path.write_text(
        _SCRIPT.format(
            python=sys.executable,
            model=json.dumps(model),
            behaviour=behaviour,
            pattern=_PATTERN,
            huge=HUGE_DOCUMENT_BYTES,
        )
    )
    path.chmod(0o755)
    return path


def output_pattern(size: int) -> str:
    """What ``prints_bytes(size)`` prints."""
    return (_PATTERN * (size // len(_PATTERN) + 1))[:size]


async def wait_for_exit(pid: int, within: float = 10.0) -> bool:
    """Whether process ``pid`` (not necessarily our child) ended within ``within`` seconds.

    Waits on a pidfd, so no polling; a zombie counts as ended.
    """
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ended.done():
            ended.set_result(None)

    loop.add_reader(pidfd, readable)
    try:
        await asyncio.wait_for(ended, within)
        return True
    except TimeoutError:
        return False
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)


def open_pid_fifo(path: Path) -> int:
    """Make ``path`` a FIFO for ``hangs`` and return its read end, opened before the fake runs."""
    os.mkfifo(path)
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK)


async def read_pid(fifo_fd: int, within: float = 10.0) -> int:
    """The pid ``hangs`` writes into a FIFO from ``open_pid_fifo``; closes the descriptor."""
    loop = asyncio.get_running_loop()
    received = bytearray()
    finished: asyncio.Future[None] = loop.create_future()

    def on_readable() -> None:
        chunk = os.read(fifo_fd, 64)
        if chunk:
            received.extend(chunk)
        elif not finished.done():
            finished.set_result(None)

    loop.add_reader(fifo_fd, on_readable)
    try:
        await asyncio.wait_for(finished, within)
    finally:
        loop.remove_reader(fifo_fd)
        os.close(fifo_fd)
    return int(received)


def kill_quietly(pid: int) -> None:
    """SIGKILL ``pid`` if it still exists; for cleaning up after a test."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


def echoes(exit_code: int = 0) -> dict[str, Any]:
    return {"kind": "echo", "exit_code": exit_code}


def prints_bytes(size: int) -> dict[str, Any]:
    return {"kind": "print_bytes", "bytes": size}


def interleaves(lines: int) -> dict[str, Any]:
    return {"kind": "interleave", "lines": lines}


def hangs(pid_file: Path, *, detach: bool = False) -> dict[str, Any]:
    return {"kind": "hang", "pid_file": str(pid_file), "detach": detach}


def blocks_first_run(pid_file: Path, marker: Path) -> dict[str, Any]:
    return {"kind": "block_first_run", "pid_file": str(pid_file), "marker": str(marker)}


def logged(action: Mapping[str, Any], runs_log: Path) -> dict[str, Any]:
    """``action``, with every run of the command recorded in ``runs_log``."""
    return {**action, "runs_log": str(runs_log)}


def runs_of(runs_log: Path) -> list[list[str]]:
    """The argv of every run ``logged`` recorded in ``runs_log``, oldest first."""
    if not runs_log.exists():
        return []
    return [json.loads(line) for line in runs_log.read_text().splitlines() if line]


def release(pid: int) -> None:
    """Let a ``blocks_first_run`` command that is waiting finish its run."""
    os.kill(pid, signal.SIGUSR1)


def flag(
    name: str,
    help: str = "",
    *,
    boolean: bool = False,
    negatable: bool = False,
    required: bool = False,
    hidden: bool = False,
    cumulative: bool = False,
    default: Sequence[str] = (),
    completions: Sequence[str] = (),
) -> dict[str, Any]:
    model: dict[str, Any] = {
        "name": name,
        "help": help,
        "boolean": boolean,
        "cumulative": cumulative,
    }
    optional = {
        "negatable": negatable,
        "required": required,
        "hidden": hidden,
        "default": list(default),
        "completions": list(completions),
    }
    model.update({key: value for key, value in optional.items() if value})
    return model


def arg(
    name: str,
    help: str = "",
    *,
    required: bool = False,
    cumulative: bool = False,
    default: Sequence[str] = (),
) -> dict[str, Any]:
    model: dict[str, Any] = {"name": name, "help": help, "cumulative": cumulative}
    if required:
        model["required"] = True
    if default:
        model["default"] = list(default)
    return model


def command(
    name: str,
    help: str = "",
    *,
    help_long: str = "",
    tags: Sequence[str] = (),
    flags: Sequence[Mapping[str, Any]] = (),
    args: Sequence[Mapping[str, Any]] = (),
    commands: Sequence[Mapping[str, Any]] = (),
    hidden: bool = False,
    schema: Mapping[str, Any] | Literal["auto"] | None = "auto",
    action: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A command. A leaf gets a ``restricted_schema`` derived from its flags and args unless
    ``schema`` gives one, or is None to leave it out (as a fisk older than 0.9 would)."""
    model: dict[str, Any] = {"name": name, "help": help}
    if help_long:
        model["help_long"] = help_long
    if hidden:
        model["hidden"] = True
    if tags:
        model["tags"] = list(tags)
    if flags:
        model["flags"] = [dict(item) for item in flags]
    if args:
        model["args"] = [dict(item) for item in args]
    if commands:
        model["commands"] = [dict(item) for item in commands]
    if action is not None:
        model["fake_action"] = dict(action)
    if schema == "auto":
        if not commands:
            model["restricted_schema"] = derived_schema(flags, args)
    elif schema is not None:
        model["restricted_schema"] = dict(schema)
    return model


def application(
    name: str = "app",
    *,
    commands: Sequence[Mapping[str, Any]] = (),
    flags: Sequence[Mapping[str, Any]] = (),
    help: str = "A fake fisk application",
    version: str = "1.0.0",
) -> dict[str, Any]:
    model: dict[str, Any] = {"name": name, "help": help, "version": version}
    if flags:
        model["flags"] = [dict(item) for item in flags]
    if commands:
        model["commands"] = [dict(item) for item in commands]
    return model


def derived_schema(
    flags: Sequence[Mapping[str, Any]], args: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The restricted schema fisk would precompute for plain string and boolean parameters."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for parameter in [*flags, *args]:
        value: dict[str, Any] = (
            {"type": "boolean"} if parameter.get("boolean") else {"type": "string"}
        )
        if parameter.get("cumulative"):
            value = {"type": "array", "items": value}
        value["description"] = parameter.get("help", "")
        properties[parameter["name"]] = value
        if parameter.get("required"):
            required.append(parameter["name"])
    schema: dict[str, Any] = {
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
    }
    if required:
        schema["required"] = required
    return schema


def sample_model() -> dict[str, Any]:
    """An application with a global ``--context``, a read-only ``status``, a denied ``secrets``,
    a hidden ``debug dump``, a nested ``stream ls`` / ``stream rm`` (``ai:confirm``) and a
    ``cache purge`` tagged ``impact:rw``."""
    return application(
        "ops",
        flags=[
            flag("context", "Fleet context to operate on"),
            flag("help", "Show help", boolean=True),
            flag("trace", "Trace internals", boolean=True, hidden=True),
        ],
        commands=[
            command("status", "Show fleet status", tags=["ai:read_only"]),
            command("secrets", "Print secrets", tags=["ai:deny"]),
            command("debug", "Debugging", hidden=True, commands=[command("dump", "Dump state")]),
            command(
                "stream",
                "Manage streams",
                commands=[
                    command("ls", "List streams", tags=["ai:read_only"]),
                    command(
                        "rm",
                        "Remove a stream",
                        tags=["impact:rw", "ai:confirm"],
                        flags=[flag("force", "Do not prompt", boolean=True)],
                        args=[arg("stream", "Stream name", required=True)],
                    ),
                ],
            ),
            command(
                "cache",
                "Caches",
                commands=[command("purge", "Purge the cache", tags=["impact:rw"])],
            ),
        ],
    )
