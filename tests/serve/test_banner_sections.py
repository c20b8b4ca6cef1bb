"""The banner of `fisk serve`: the guide's rows, and a section text that fits each channel."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any, cast

from nats.aio.client import Client as NatsClient

from fisk_ai import config
from fisk_ai.serve.banner import (
    JOBS_TOOL_NOTE,
    PROMPTS_TOOL_NOTE,
    SLACK_TOOL_NOTE,
    Started,
    banner,
)
from fisk_ai.serve.jobs.channel import JobsChannel, JobsOptions
from fisk_ai.serve.jobs.wire import QueueSettings

SECTION_TITLE = re.compile(r"  \S.*:")
AGENT = "identity: worker\nsystem_prompt: You count.\nllm: {model: claude-sonnet-5}\n"


def parsed(text: str) -> config.Config:
    return config.parse(AGENT + text, config.Mode.SERVE)


def jobs_started() -> Started:
    channel = JobsChannel(
        NatsClient(),
        cast(Any, None),
        JobsOptions(identity="worker"),
        QueueSettings(run_time=timedelta(minutes=10), tries=3, concurrency=10),
    )
    return Started(version="1.2.0", jobs=(channel, False))


def section(printed: str, title: str) -> list[str]:
    """The lines of the section called ``title``, up to the next section's title."""
    lines = printed.splitlines()
    rest = lines[lines.index(f"  {title}:") + 1 :]
    ends = [n for n, line in enumerate(rest) if SECTION_TITLE.fullmatch(line)]
    return rest[: ends[0]] if ends else rest


def test_the_jobs_section_says_what_a_job_runs() -> None:
    printed = banner(
        parsed("nats_context: stock\nexpose:\n  agent:\n    jobs: {}\n"), jobs_started()
    )
    assert section(printed, "Taking queued jobs")[-1] == f"    {JOBS_TOOL_NOTE}"
    assert PROMPTS_TOOL_NOTE not in printed


def test_the_slack_section_says_what_a_mention_runs() -> None:
    printed = banner(parsed("expose:\n  agent:\n    slack: {}\n"), Started(version="1.2.0"))
    assert section(printed, "Answering in Slack")[-1] == f"    {SLACK_TOOL_NOTE}"
    assert PROMPTS_TOOL_NOTE not in printed


def test_a_run_channel_with_memory_off_prints_no_memory_row() -> None:
    printed = banner(parsed("expose:\n  agent:\n    slack: {}\n"), Started(version="1.2.0"))
    top = printed.split("\n\n")[1]
    labels = [line.split(":")[0].strip() for line in top.splitlines()]
    assert labels == [
        "Endpoints",
        "Model",
        "Sessions",
        "Knowledge",
        "Telemetry",
        "Tool Directory",
        "Tool Timeout",
    ]
