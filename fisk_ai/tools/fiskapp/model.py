"""fisk's ApplicationModel, as ``APP --fisk-introspect`` prints it.

Unknown keys are ignored, because newer fisk versions add fields, and an explicit null reads as
absent, because Go writes null for an empty list that has no omitempty tag.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _FiskModel(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _null_means_absent(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if value is not None}
        return data


class FlagModel(_FiskModel):
    name: str
    help: str = ""
    short: int | None = None
    default: tuple[str, ...] = ()
    envar: str = ""
    place_holder: str = ""
    required: bool = False
    hidden: bool = False
    boolean: bool = False
    negatable: bool = False
    cumulative: bool = False
    completions: tuple[str, ...] = ()


class ArgModel(_FiskModel):
    name: str
    help: str = ""
    default: tuple[str, ...] = ()
    envar: str = ""
    place_holder: str = ""
    required: bool = False
    hidden: bool = False
    cumulative: bool = False


class CommandModel(_FiskModel):
    name: str
    aliases: tuple[str, ...] = ()
    help: str = ""
    help_long: str = ""
    hidden: bool = False
    default: bool = False
    tags: tuple[str, ...] = ()
    flags: tuple[FlagModel, ...] = ()
    args: tuple[ArgModel, ...] = ()
    commands: tuple[CommandModel, ...] = ()
    # Typed loosely on purpose: introspection reports a schema of the wrong shape with the
    # command's name, which a type error from the model could not do.
    json_schema: Any = Field(default=None, alias="schema")
    restricted_schema: Any = None

    @property
    def is_leaf(self) -> bool:
        return not self.commands

    @property
    def input_schema(self) -> Any:
        """The precomputed schema a tool uses: the restricted one, else the plain one."""
        return self.restricted_schema if self.restricted_schema is not None else self.json_schema


class ApplicationModel(_FiskModel):
    name: str = ""
    help: str = ""
    version: str = ""
    author: str = ""
    cheat: str = ""
    cheats: dict[str, Any] = Field(default_factory=dict)
    cheat_tags: tuple[str, ...] = ()
    llm_extra_info: str = ""
    flags: tuple[FlagModel, ...] = ()
    args: tuple[ArgModel, ...] = ()
    commands: tuple[CommandModel, ...] = ()
