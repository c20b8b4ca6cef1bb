"""One leaf command of a fisk application, offered to the model as a tool."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from fisk_ai.llm.types import ToolDef
from fisk_ai.tools.base import ExecDeps, ExecRecord, Kind, Outcome, Presentation
from fisk_ai.tools.environment import tool_environment
from fisk_ai.tools.fiskapp.argv import ArgvError, render_argv
from fisk_ai.tools.fiskapp.execute import run_command
from fisk_ai.tools.fiskapp.model import CommandModel, FlagModel
from fisk_ai.tools.gating import confirm_trigger
from fisk_ai.tools.prepared import PreparedCall, prepare_call
from fisk_ai.tools.tags import NO_DEFER, Behavior, inspect_tags
from fisk_ai.tools.validation import ArgumentsError, parse_arguments
from fisk_ai.util.durations import format_duration


@dataclass(frozen=True, eq=False)
class FiskCommandTool:
    """A leaf command run as ``app_path <command path> <globals> <flags> -- <positionals>``.

    ``input_schema`` is the command's precomputed schema with the exposed global flags merged in;
    it is this tool's own copy, never the application model's.
    """

    command: CommandModel
    command_path: tuple[str, ...]
    app_path: str
    input_schema: Mapping[str, Any]
    global_flags: tuple[FlagModel, ...] = ()
    secret_env_names: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return "_".join(self.command_path)

    @property
    def command_line(self) -> str:
        """The command path as an operator types it: ``stream rm``."""
        return " ".join(self.command_path)

    @property
    def description(self) -> str:
        return self.command.help or self.command.help_long

    @property
    def model_description(self) -> str:
        help_text = _combined_help(self.command.help, self.command.help_long)
        if not self.tags:
            return help_text
        tag_line = "Tags: " + ", ".join(self.tags)
        return f"{help_text}\n\n{tag_line}" if help_text else tag_line

    @property
    def tags(self) -> tuple[str, ...]:
        return self.command.tags

    @property
    def kind(self) -> Kind:
        return Kind.APPLICATION

    @property
    def presentation(self) -> Presentation:
        return Presentation.COMMAND

    @property
    def mcp_exposable(self) -> bool:
        return True

    @property
    def a2a_exposable(self) -> bool:
        return True

    def behavior(self) -> Behavior:
        return inspect_tags(self.name, self.tags).behavior

    def confirm_trigger(self, confirm_tags: Sequence[str]) -> str | None:
        return confirm_trigger(self.tags, confirm_tags)

    def definition(self, defer_loading: bool) -> ToolDef:
        """The provider definition; ``ai:no_defer`` keeps the tool loaded whatever is asked."""
        return ToolDef(
            name=self.name,
            description=self.model_description,
            input_schema=self.input_schema,
            defer_loading=defer_loading and NO_DEFER not in self.tags,
        )

    def argv(self, arguments: Mapping[str, Any]) -> list[str]:
        """The argument vector after the application path. Raises ArgvError."""
        return render_argv(self.command, self.global_flags, arguments, path=self.command_path)

    def display(self, arguments: str) -> str:
        """The command line a call would run, for transcripts and approval prompts.

        Falls back to the bare command path when the arguments cannot be rendered. The text is
        not sanitised: a surface strips control sequences before showing it.
        """
        try:
            return " ".join(self.argv(parse_arguments(self.name, arguments)))
        except (ArgumentsError, ArgvError):
            return self.command_line

    async def execute(self, arguments: str, deps: ExecDeps) -> Outcome:
        return await self.execute_prepared(prepare_call(self, arguments), deps)

    async def execute_prepared(self, call: PreparedCall, deps: ExecDeps) -> Outcome:
        """Run the argument vector ``call`` was rendered to, the one its approval showed."""
        if call.problem is not None:
            return Outcome(call.problem, is_error=True)
        argv = list(call.argv)

        environment = tool_environment(extra_secret_names=self.secret_env_names)
        if deps.work_dir is not None:
            environment["PWD"] = str(deps.work_dir.absolute())
        limit = deps.timeout if deps.timeout is not None and deps.timeout > timedelta(0) else None
        command_line = " ".join(argv)
        try:
            run = await run_command(
                self.app_path,
                argv,
                env=environment,
                work_dir=deps.work_dir,
                timeout=limit.total_seconds() if limit is not None else None,
            )
        except (OSError, ValueError) as exc:
            # ValueError: a NUL byte the introspection put in a name reached the argument vector.
            reason = exc.strerror if isinstance(exc, OSError) else None
            return Outcome(
                f'application_path "{self.app_path}" could not be run for "{command_line}": '
                f"{reason or exc}",
                is_error=True,
            )

        if run.timed_out and limit is not None:
            message = (
                f'the command "{command_line}" did not finish within {format_duration(limit)} '
                f"({deps.timeout_setting}) and was stopped"
            )
            if run.output:
                message += f"; output so far:\n{run.output}"
            return Outcome(message, is_error=True, timed_out=True)
        return Outcome(
            run.output,
            exec=ExecRecord(command=command_line, exit_code=run.exit_code, truncated=run.truncated),
        )


def _combined_help(short: str, long: str) -> str:
    if not short:
        return long
    if not long:
        return short
    if short in long:
        return long
    if long in short:
        return short
    return f"{short}\n\n{long}"
