"""The resume hint names what a resume needs to reach the same conversation again, quoted so a
shell runs it as printed."""

import shlex

from fisk_ai.presentation import resume_command, resume_flags, resume_hint


def test_a_run_under_the_defaults_is_resumed_by_its_id_alone() -> None:
    flags = resume_flags(config="agent.yaml")

    assert resume_hint("S1", flags) == "resume with: fisk run --resume S1"


def test_a_named_config_and_state_dir_are_in_the_hint() -> None:
    flags = resume_flags(config="ops/agent.yaml", state_dir="/var/lib/fisk/runs")

    assert resume_hint("S1", flags) == (
        "resume with: fisk run --config ops/agent.yaml --state-dir /var/lib/fisk/runs --resume S1"
    )


def test_a_path_with_a_space_reads_back_as_one_argument() -> None:
    flags = resume_flags(config="my agent.yaml", state_dir="my runs")

    command = resume_hint("S1", flags).removeprefix("resume with: ")

    assert shlex.split(command) == [
        *("fisk", "run", "--config", "my agent.yaml", "--state-dir", "my runs", "--resume", "S1")
    ]


def test_a_remote_agent_is_named_by_its_context_and_identity() -> None:
    flags = resume_flags(config="agent.yaml", nats_context="prod", identity="fleet")

    assert resume_hint("T1", flags) == (
        "resume with: fisk run --nats-context prod --identity fleet --resume T1"
    )


def test_the_hint_says_the_command_that_resumes() -> None:
    flags = resume_flags(config="ops.yaml")

    assert resume_hint("S1", flags) == f"resume with: {resume_command('S1', flags)}"
