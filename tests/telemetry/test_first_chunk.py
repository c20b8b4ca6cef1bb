"""A streamed model call reports how long its first piece took, on its span and as a metric;
a call that streamed nothing reports neither."""

from dataclasses import replace
from pathlib import Path

from fisk_ai.agent.resources import Resources
from fisk_ai.agent.runner import Runner
from fisk_ai.llm.types import Response
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.telemetry import TelemetrySettings, start
from tests.agent.conftest import SETTINGS, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer
from tests.telemetry.receiver import Receiver, attributes


async def run_answered(receiver: Receiver, tmp_path: Path, response: Response) -> None:
    telemetry = start(TelemetrySettings(enabled=True, endpoint=receiver.endpoint))
    resources = Resources(
        SETTINGS,
        ScriptedProvider([response], provider="anthropic"),
        toolset(),
        FileSessionStore(tmp_path / "runs"),
        telemetry=telemetry,
    )
    async with Runner(resources, events=RecordingSink()) as runner:
        await runner.start("status please")
    telemetry.shutdown()


async def test_a_streamed_call_carries_its_time_to_first_chunk(
    receiver: Receiver, tmp_path: Path
) -> None:
    await run_answered(receiver, tmp_path, replace(answer("done"), time_to_first_chunk=0.25))
    (chat,) = [span for span in receiver.spans() if span.name.startswith("chat")]
    assert attributes(chat)["gen_ai.response.time_to_first_chunk"] == 0.25
    (point,) = receiver.metric_points("gen_ai.client.operation.time_to_first_chunk")
    assert point.sum == 0.25 and point.count == 1


async def test_a_call_that_streamed_nothing_reports_no_first_chunk(
    receiver: Receiver, tmp_path: Path
) -> None:
    await run_answered(receiver, tmp_path, answer("done"))
    (chat,) = [span for span in receiver.spans() if span.name.startswith("chat")]
    assert "gen_ai.response.time_to_first_chunk" not in attributes(chat)
    assert receiver.metric_points("gen_ai.client.operation.time_to_first_chunk") == []
