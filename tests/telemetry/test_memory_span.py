"""The memory store a host binds is on its telemetry: ``fisk.memory.backend`` (the store's
registered backend name, Info.Backend) and ``fisk.memory.location`` on the startup span, where a
run that never calls a memory tool still reports it, and on the span of each memory tool call,
so filtering on them selects the calls that reached the store. Span attributes only."""

from __future__ import annotations

from pathlib import Path

from fisk_ai import config
from fisk_ai.agent.application import ApplicationTools
from fisk_ai.agent.runner import Runner
from fisk_ai.memory import StoreInfo
from fisk_ai.serve.composition import Composition, compose_agent
from tests.fakes.events import RecordingSink
from tests.fakes.memory import FakeMemoryStore
from tests.fakes.provider import ScriptedProvider, answer, call, calls
from tests.telemetry.receiver import Receiver, attributes

NO_APPLICATION = ApplicationTools(application=None, gates={}, warnings=())
MEMORY = {"fisk.memory.backend": "jetstream", "fisk.memory.location": "notes, prefix ops"}


class BucketStore(FakeMemoryStore):
    """Reports itself as a JetStream bucket, as a store an embedder passes in may."""

    def info(self) -> StoreInfo:
        return StoreInfo("jetstream", "notes, prefix ops")


def memory_of(span_attributes: dict[str, object]) -> dict[str, object]:
    return {key: value for key, value in span_attributes.items() if key.startswith("fisk.memory.")}


async def test_the_bound_store_is_on_the_startup_span_and_each_memory_tool_span(
    receiver: Receiver, tmp_path: Path
) -> None:
    cfg = config.parse(
        "identity: ops\nsystem_prompt: p\nllm:\n  model: m\n"
        "harness:\n  memory:\n    enabled: true\n"
        f"telemetry:\n  enabled: true\n  endpoint: {receiver.endpoint}\n  no_metrics: true\n",
        config.Mode.AGENT,
    )
    provider = ScriptedProvider(
        [calls(call("t1", "memory_list"), call("t2", "status")), answer("done")]
    )
    async with (
        compose_agent(
            cfg,
            Composition(state_dir=str(tmp_path / "state"), memory_store=BucketStore()),
            provider=provider,
            application_tools=NO_APPLICATION,
            warn=lambda _: None,
            note=lambda _: None,
        ) as resources,
        Runner(resources, events=RecordingSink()) as runner,
    ):
        await runner.start("what do you remember?")

    spans = {span.name: attributes(span) for span in receiver.spans()}
    assert memory_of(spans["startup ops"]) == MEMORY
    assert memory_of(spans["execute_tool memory_list"]) == MEMORY
    # A call that never reached the store carries none of it.
    assert memory_of(spans["execute_tool unknown_tool"]) == {}
    assert memory_of(spans["invoke_agent ops"]) == {}
