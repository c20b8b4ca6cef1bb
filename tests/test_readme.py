"""The README's setup commands are the ones CI runs, word for word."""

import re

from tests.conftest import REPO_ROOT


def test_ci_runs_the_readme_setup_commands() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    setup = readme.split("## Setup", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```\n(.+?)\n```", setup)
    assert len(commands) == 2
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    for command in commands:
        assert command in ci.splitlines()
