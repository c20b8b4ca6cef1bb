"""What a model sends can never strand a session: a lone surrogate (a ``\\ud800`` escape, valid
JSON that no UTF-8 encoder takes) in its narration and in a tool's input, through the real SDK,
journaled, answered, and sent again on a resume."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.agent_runs import fisk, fisk_environment, session_id_of, write_config
from tests.fakes.fiskapp import write_fake_app
from tests.fakes.messages_api import FakeMessagesAPI, error, reply, text, tool_use
from tests.tui.workstation import ops_model

LONE = "\ud800"


def test_a_lone_surrogate_from_the_model_is_answered_journaled_and_resumed(
    tmp_path: Path,
) -> None:
    application = write_fake_app(tmp_path, ops_model(), name="ops")
    write_config(tmp_path, application=application)
    turns = [
        reply(
            text(f"saying it {LONE} now"),
            tool_use("tu_1", "say", {"words": f"half {LONE} a character"}),
            stop_reason="tool_use",
        ),
        # The turn stops here, so the resume sends the stored narration back to the model.
        error(400, "the fake refused this request"),
        reply(text(f"done {LONE}")),
    ]
    with FakeMessagesAPI(turns) as api:
        environment = fisk_environment(tmp_path, api)
        first = fisk("run", "--no-tui", "say it", cwd=tmp_path, env=environment)
        session = session_id_of(first.stderr)
        resumed = fisk("run", "--no-tui", "--resume", session, cwd=tmp_path, env=environment)
        requests = list(api.requests)
    assert first.returncode == 1
    # The call was answered as an error the model reads, not run with half a character.
    results = [
        block
        for message in requests[1]["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert results and results[0]["is_error"]
    assert "surrogate" in str(results[0]["content"])
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == "done \ufffd\n"
    assert len(requests) == 3
    # The narration went back as the model wrote it, its half character made whole.
    sent_again = requests[2]["messages"][1]["content"][0]["text"]
    assert sent_again == "saying it \ufffd now"
