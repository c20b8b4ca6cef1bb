import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from fisk_ai.tools.base import (
    Confirmable,
    ExecDeps,
    Kind,
    Presentation,
    ShowsCommand,
    Tool,
)
from fisk_ai.tools.remote import (
    RemoteCallFailed,
    RemoteHost,
    RemoteReply,
    RemoteTool,
    import_card,
    name_remote_tools,
)
from fisk_ai.tools.selection import ToolFilter
from fisk_ai.tools.toolset import ToolCollisionError

OBJECT = {"type": "object", "properties": {"stream": {"type": "string"}}}


@dataclass(frozen=True)
class Descriptor:
    name: str
    description: str = "does a thing"
    input_schema: Mapping[str, Any] | None = field(default_factory=lambda: dict(OBJECT))


@dataclass(frozen=True)
class Exec:
    command: str
    exit_code: int = 0
    truncated: bool = False


@dataclass(frozen=True)
class Reply:
    output: str = ""
    is_error: bool = False
    code: str | None = None
    exec: Exec | None = None


class Peer:
    """A scripted peer: answers every call with ``reply`` and remembers what it was sent."""

    def __init__(self, reply: Reply | Exception = Reply("ok")) -> None:
        self.reply = reply
        self.calls: list[tuple[str, Mapping[str, Any]]] = []

    async def __call__(self, name: str, arguments: Mapping[str, Any]) -> RemoteReply:
        self.calls.append((name, dict(arguments)))
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def host(alias: str, *names: str, peer: Peer | None = None) -> RemoteHost:
    return import_card(alias, [Descriptor(name) for name in names], peer or Peer())


def final_names(hosts: list[RemoteHost], taken: set[str] | None = None) -> dict[str, list[str]]:
    sources = name_remote_tools(hosts, taken or set())
    return {source.label: [tool.name for tool in source.tools] for source in sources}


def only_tool(remote_host: RemoteHost) -> RemoteTool:
    (tool,) = remote_host.tools
    return tool


# Naming.


def test_a_name_nobody_else_has_stays_bare() -> None:
    assert final_names([host("nats", "stream_ls")]) == {'remote_tools "nats"': ["stream_ls"]}


def test_a_name_a_local_tool_has_is_prefixed_with_the_alias() -> None:
    names = final_names([host("nats", "status", "stream_ls")], taken={"status"})
    assert names == {'remote_tools "nats"': ["nats_status", "stream_ls"]}


def test_a_name_two_hosts_offer_is_prefixed_on_both() -> None:
    names = final_names([host("east", "status"), host("west", "status", "logs")])
    assert names == {
        'remote_tools "east"': ["east_status"],
        'remote_tools "west"': ["west_status", "logs"],
    }


def test_naming_does_not_depend_on_the_order_hosts_answered() -> None:
    first = final_names([host("east", "status", "a"), host("west", "status")])
    second = final_names([host("west", "status"), host("east", "status", "a")])
    assert sorted(first.items()) == sorted(second.items())


def test_a_prefixed_name_that_is_still_taken_aborts_naming_both_tools() -> None:
    with pytest.raises(ToolCollisionError) as caught:
        name_remote_tools([host("nats", "status")], taken={"status", "nats_status"})
    message = str(caught.value)
    assert 'tool "nats_status" from remote_tools "nats" (its tool "status")' in message
    assert 'a tool of this agent also called "nats_status"' in message


def test_a_prefixed_name_equal_to_another_hosts_bare_name_aborts_naming_both() -> None:
    with pytest.raises(ToolCollisionError) as caught:
        name_remote_tools([host("a", "b_x"), host("b", "x")], taken={"x"})
    message = str(caught.value)
    assert 'remote_tools "a"' in message and 'remote_tools "b"' in message
    assert '"b_x"' in message


async def test_a_renamed_tool_still_calls_the_peer_by_its_remote_name() -> None:
    peer = Peer()
    (source,) = name_remote_tools([host("nats", "status", peer=peer)], taken={"status"})
    (tool,) = source.tools

    await tool.execute('{"stream":"ORDERS"}', ExecDeps())

    assert peer.calls == [("status", {"stream": "ORDERS"})]


# Reading the card.


@pytest.mark.parametrize(
    ("descriptor", "reason"),
    [
        (Descriptor("stream ls"), "its name is not letters, digits, - and _ only"),
        (Descriptor("ls", input_schema=None), "its input schema is not a JSON object"),
        (Descriptor("ls", input_schema={"type": "array"}), "root type is not object"),
        (Descriptor("ls", description="  "), "it has no description"),
    ],
)
def test_a_descriptor_the_model_api_would_refuse_is_left_out_with_the_reason(
    descriptor: Descriptor, reason: str
) -> None:
    imported = import_card("nats", [descriptor, Descriptor("fine")], Peer())
    assert [tool.name for tool in imported.tools] == ["fine"]
    (skipped,) = imported.skipped
    assert skipped.startswith(f'remote_tools "nats": tool "{descriptor.name}" is left out')
    assert reason in skipped


def test_a_tool_listed_twice_on_a_card_is_imported_once() -> None:
    imported = import_card("nats", [Descriptor("ls"), Descriptor("ls")], Peer())
    assert [tool.name for tool in imported.tools] == ["ls"]
    assert "more than once" in imported.skipped[0]


def test_include_patterns_keep_only_matching_remote_names() -> None:
    imported = import_card(
        "nats",
        [Descriptor("stream_ls"), Descriptor("stream_rm"), Descriptor("kv_get")],
        Peer(),
        include=ToolFilter(tools=("^stream_",)),
        exclude=ToolFilter(tools=("_rm$",)),
    )
    assert [tool.name for tool in imported.tools] == ["stream_ls"]


def test_include_tags_are_ignored_since_a_card_carries_no_tags() -> None:
    imported = import_card(
        "nats", [Descriptor("stream_ls")], Peer(), include=ToolFilter(tags=("team:blue",))
    )
    assert [tool.name for tool in imported.tools] == ["stream_ls"]


# The tool itself.


def test_a_remote_tool_is_a_tool_of_kind_and_presentation_remote() -> None:
    tool = only_tool(host("nats", "stream_ls"))
    assert isinstance(tool, Tool)
    assert tool.kind is Kind.REMOTE
    assert tool.presentation is Presentation.REMOTE


def test_a_remote_tool_is_never_gated_and_never_served_onward() -> None:
    tool = only_tool(host("nats", "stream_ls"))
    assert not isinstance(tool, Confirmable)
    assert not tool.mcp_exposable
    assert not tool.a2a_exposable


def test_the_call_line_names_the_host_alias() -> None:
    tool = only_tool(host("nats", "stream_ls"))
    assert isinstance(tool, ShowsCommand)
    assert " ".join(tool.argv({"stream": "x"})) == "stream_ls (remote nats)"


def test_the_definition_carries_the_cards_description_and_schema() -> None:
    definition = only_tool(host("nats", "stream_ls")).definition(defer_loading=True)
    assert definition.description == "does a thing"
    assert definition.input_schema == OBJECT
    assert definition.defer_loading


async def test_a_command_reply_reaches_the_model_as_a_command_result_envelope() -> None:
    peer = Peer(Reply("ORDERS\n", exec=Exec("stream ls", 0)))
    tool = only_tool(host("nats", "stream_ls", peer=peer))

    outcome = await tool.execute("", ExecDeps())

    assert not outcome.is_error
    assert json.loads(outcome.model_content) == {
        "command": "stream ls",
        "exit_code": 0,
        "output": "ORDERS\n",
    }


async def test_a_truncated_non_zero_exit_is_kept_in_the_envelope() -> None:
    peer = Peer(Reply("boom", exec=Exec("stream rm X", 2, truncated=True)))
    outcome = await only_tool(host("nats", "stream_rm", peer=peer)).execute("{}", ExecDeps())
    envelope = json.loads(outcome.model_content)
    assert envelope["exit_code"] == 2
    assert envelope["truncated"] is True
    assert not outcome.is_error


async def test_a_reply_without_exec_passes_its_output_through() -> None:
    outcome = await only_tool(host("nats", "ls", peer=Peer(Reply("plain")))).execute("", ExecDeps())
    assert outcome.model_content == "plain"


async def test_an_error_reply_is_an_error_result_with_its_text() -> None:
    peer = Peer(Reply('tool "ls" is not available', is_error=True, code="failed"))
    outcome = await only_tool(host("nats", "ls", peer=peer)).execute("", ExecDeps())
    assert outcome.is_error
    assert outcome.model_content == 'tool "ls" is not available'


async def test_an_error_reply_without_text_names_its_code() -> None:
    peer = Peer(Reply(is_error=True, code="capacity"))
    outcome = await only_tool(host("nats", "ls", peer=peer)).execute("", ExecDeps())
    assert outcome.is_error
    assert "capacity" in outcome.output


async def test_an_unreachable_peer_is_an_error_result_not_a_crash() -> None:
    peer = Peer(RemoteCallFailed("remote agent unavailable: nothing answers"))
    outcome = await only_tool(host("nats", "ls", peer=peer)).execute("", ExecDeps())
    assert outcome.is_error
    assert outcome.output.startswith("remote agent unavailable")


async def test_arguments_that_are_not_json_are_answered_without_calling_the_peer() -> None:
    peer = Peer()
    outcome = await only_tool(host("nats", "ls", peer=peer)).execute("{nope", ExecDeps())
    assert outcome.is_error
    assert peer.calls == []
