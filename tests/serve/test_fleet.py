"""A fleet on a real NATS cluster: three nats-servers with R3 streams for the asyncjobs task
store, the work queue and the sessions, three `fisk serve` workers, 200 jobs submitted as an
asyncjobs client submits them; part way through one nats-server (the work queue's leader) and
one worker are SIGKILLed. Every job still ends with exactly one answer, its own, and no model
call is made again for a step that was complete. The harness is tests/fakes/nats_cluster.py,
which bench/fleet.py runs too."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ai.broker.server import locate_server_binary
from tests.fakes.nats_cluster import (
    Kill,
    fleet,
    job_answer,
    percentile,
    queue_leader,
    repeated_completed_steps,
    run_fleet,
)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        locate_server_binary() is None, reason="no nats-server binary on this machine"
    ),
]

JOBS = 200
WITHIN = 60.0
"""Seconds the jobs may take, kill and recovery included."""


async def test_a_fleet_answers_every_job_once_when_a_node_and_a_worker_die(
    tmp_path: Path,
) -> None:
    async with fleet(tmp_path, nodes=3, workers=3) as running:
        run = await run_fleet(
            running, JOBS, kill=Kill(after=JOBS // 4, node=queue_leader), within=WITHIN
        )

    assert run.killed_key, "the kill happened before the last job was answered"
    assert len(run.tasks) == JOBS
    for index, document in run.tasks.items():
        assert document["state"] == "complete", (index, document)
        payload = document["result"]["payload"]
        assert payload["protocol"] == "io.choria.fisk-ai.v1.result", (index, payload)
        assert payload["text"] == job_answer(index)
    # No job was answered twice: at most one complete event each (an event published through
    # the killed node may be missing, never doubled).
    assert max(run.completions.values()) == 1
    # Every job asked the model both of its steps, and no run asked again a step once it was
    # journaled.
    assert {(call.job, call.step) for call in run.calls} == {
        (index, step) for index in range(JOBS) for step in (0, 1)
    }
    repeated = repeated_completed_steps(run.calls)
    assert repeated == [], [
        [(call.key, call.step) for call in run.calls if call.job == repeat.job]
        for repeat in repeated
    ]
    latencies = run.latencies()
    print(
        f"\n{JOBS} jobs, 3 nodes, 3 workers, a node and a worker killed: "
        f"{JOBS / run.seconds:.1f} jobs/s, p50 {percentile(latencies, 0.5):.2f} s, "
        f"p95 {percentile(latencies, 0.95):.2f} s, {len(run.calls)} model calls "
        f"({len(run.calls) - 2 * JOBS} made again for a step not yet journaled)"
    )


def test_a_replayed_step_counts_and_a_fenced_off_late_call_does_not() -> None:
    from tests.fakes.nats_cluster import ModelCall

    def asked(key: str, step: int) -> ModelCall:
        return ModelCall(key=key, job=7, step=step, messages="")

    # b resumed after a's death and asked step 0 again, then went on: a replay.
    replayed = [asked("a", 0), asked("a", 1), asked("b", 0), asked("b", 1)]
    assert repeated_completed_steps(replayed) == [replayed[2]]
    # a stalled, b took the job over and finished it, a's late call arrived and a stopped.
    fenced = [asked("b", 0), asked("b", 1), asked("a", 0)]
    assert repeated_completed_steps(fenced) == []
