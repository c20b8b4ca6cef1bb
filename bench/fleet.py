"""What a fleet of `fisk serve` job workers on a NATS cluster delivers, beside one worker on
one server.

- fleet: three nats-servers as a JetStream cluster, the asyncjobs task store, the work queue
  and the sessions at three replicas, three `fisk serve` workers with eight job slots each;
- bare baseline: one nats-server, the same streams at one replica, one worker with eight slots.

Both get the same jobs, all submitted at once as an asyncjobs client submits them. Each job is
two model steps against the fake Messages API (a tool call, then the answer) with a fake fisk
application's command run in between, so the figures are the serving cost, not a model's.
Printed: jobs per second from the first submit to the last answer, and p50/p95 of each job's
latency (the task's ``created`` to its result's ``completed``), with the fleet's ratio to the
baseline. Nothing is killed; tests/serve/test_fleet.py does that with the same harness
(tests/fakes/nats_cluster.py).

    python bench/fleet.py [--jobs N] [--slots N]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


async def measure(jobs: int, nodes: int, workers: int, slots: int) -> tuple[float, float, float]:
    """Jobs per second, p50 and p95 latency in seconds, for one fleet shape."""
    from tests.fakes.nats_cluster import Channels, fleet, percentile, run_fleet

    with tempfile.TemporaryDirectory() as scratch:
        shape = Channels(job_slots=slots)
        async with fleet(Path(scratch), nodes=nodes, workers=workers, channels=shape) as running:
            run = await run_fleet(running, jobs, within=600.0)
    unanswered = [index for index, task in run.tasks.items() if task.get("state") != "complete"]
    if unanswered:
        sys.exit(f"{len(unanswered)} jobs were not answered, among them job {unanswered[0]}")
    latencies = run.latencies()
    return jobs / run.seconds, percentile(latencies, 0.5), percentile(latencies, 0.95)


async def main(jobs: int, slots: int) -> None:
    sys.path.insert(0, str(REPO_ROOT))
    bare = await measure(jobs, nodes=1, workers=1, slots=slots)
    fleet = await measure(jobs, nodes=3, workers=3, slots=slots)

    def row(label: str, figures: tuple[float, float, float]) -> str:
        rate, p50, p95 = figures
        return f"{label:<36} {rate:7.1f} jobs/s   p50 {p50:6.2f} s   p95 {p95:6.2f} s"

    print(
        f"{jobs} jobs submitted at once, two model steps and one command each, "
        f"{slots} slots a worker"
    )
    print(row("1 worker, 1 nats-server (R1)", bare))
    print(row("3 workers, 3-node cluster (R3)", fleet))
    print(
        f"{'fleet / bare':<36} {fleet[0] / bare[0]:7.2f}x          "
        f"p50 {fleet[1] / bare[1]:5.2f}x   p95 {fleet[2] / bare[2]:5.2f}x"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--slots", type=int, default=8)
    options = parser.parse_args()
    sys.path.insert(0, str(REPO_ROOT))
    from fisk_ai.broker.server import locate_server_binary

    if locate_server_binary() is None:
        sys.exit("no nats-server binary beside this interpreter or on PATH")
    asyncio.run(main(options.jobs, options.slots))
