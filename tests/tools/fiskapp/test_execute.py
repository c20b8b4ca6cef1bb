import asyncio
from pathlib import Path

import pytest

from fisk_ai.tools.environment import tool_environment
from fisk_ai.tools.fiskapp.execute import (
    TRUNCATION_MARKER,
    OutputCapture,
    exit_code_of,
    run_command,
)
from tests.fakes.fiskapp import (
    application,
    command,
    hangs,
    interleaves,
    kill_quietly,
    open_pid_fifo,
    output_pattern,
    prints_bytes,
    read_pid,
    wait_for_exit,
    write_fake_app,
)


def test_output_under_the_limit_is_kept_whole() -> None:
    capture = OutputCapture(limit=10)
    capture.write(b"0123456789")

    assert capture.result() == ("0123456789", False)


def test_output_over_the_limit_keeps_head_and_tail_around_a_marker() -> None:
    capture = OutputCapture(limit=10)
    capture.write(b"abcdefghijk")

    assert capture.result() == ("abcde" + TRUNCATION_MARKER + "ghijk", True)


def test_small_writes_capture_the_same_as_one_large_write() -> None:
    stream = output_pattern(1000).encode()
    whole, pieces = OutputCapture(limit=64), OutputCapture(limit=64)
    whole.write(stream)
    for start in range(0, len(stream), 7):
        pieces.write(stream[start : start + 7])

    assert pieces.result() == whole.result()
    assert whole.result()[0].endswith(stream[-32:].decode())


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    capture = OutputCapture()
    capture.write(b"ok \xff\xfe")

    assert capture.result() == ("ok \ufffd\ufffd", False)


def test_a_signal_death_reads_as_128_plus_the_signal() -> None:
    assert exit_code_of(-9) == 137
    assert exit_code_of(3) == 3


def app_with(tmp_path: Path, leaf_action: dict[str, object]) -> Path:
    return write_fake_app(tmp_path, application(commands=[command("go", action=leaf_action)]))


async def test_stdout_and_stderr_keep_their_interleaving(tmp_path: Path) -> None:
    app = app_with(tmp_path, interleaves(3))

    run = await run_command(str(app), ["go"], env=tool_environment())

    assert run.output == "out 0\nerr 0\nout 1\nerr 1\nout 2\nerr 2\n"
    assert (run.exit_code, run.truncated, run.timed_out) == (0, False, False)


async def test_large_output_is_cut_to_head_and_tail(tmp_path: Path) -> None:
    app = app_with(tmp_path, prints_bytes(200_000))
    expected = output_pattern(200_000)

    run = await run_command(str(app), ["go"], env=tool_environment())

    assert run.truncated
    assert run.output == expected[:32768] + TRUNCATION_MARKER + expected[-32768:]


async def test_a_non_zero_exit_is_an_ordinary_result(tmp_path: Path) -> None:
    app = write_fake_app(
        tmp_path, application(commands=[command("go", action={"kind": "echo", "exit_code": 4})])
    )

    run = await run_command(str(app), ["go"], env=tool_environment())

    assert run.exit_code == 4
    assert not run.timed_out


async def test_a_program_that_cannot_start_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        await run_command(str(tmp_path / "missing"), [], env=tool_environment())


async def test_a_grandchild_holding_the_pipe_does_not_hang_the_caller(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    app = app_with(tmp_path, hangs(pid_file, detach=True))

    run = await run_command(str(app), ["go"], env=tool_environment(), timeout=1.5, drain_grace=0.2)

    detached_pid = int(pid_file.read_text())
    kill_quietly(detached_pid)
    assert run.timed_out
    assert run.output.startswith("waiting\n")


async def test_cancelling_the_call_kills_the_command_and_its_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    fifo_fd = open_pid_fifo(pid_file)
    app = app_with(tmp_path, hangs(pid_file))
    call = asyncio.create_task(run_command(str(app), ["go"], env=tool_environment()))

    child_pid = await read_pid(fifo_fd)
    call.cancel()
    try:
        with pytest.raises(asyncio.CancelledError):
            await call
        assert await wait_for_exit(child_pid)
    finally:
        kill_quietly(child_pid)
