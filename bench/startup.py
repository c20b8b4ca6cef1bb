"""Startup cost of `fisk --help` and `fisk info` on the cowsay example, beside `python -c pass`.

Prints the median wall time of each command over repeated runs, its ratio to the bare
interpreter measured in the same run, and whether the command imported textual or anthropic
(neither may: they belong to the full-screen UI and to the model call).

    python bench/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
COWSAY_CONFIG = REPO_ROOT / "examples" / "cowsay" / "agent.yaml"
HELP_BUDGET_SECONDS = 0.120

# Runs the fisk entry point in-process and reports which heavy modules it pulled in.
IMPORT_PROBE = """
import contextlib, io, json, sys
from fisk_ai.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
heavy = sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'anthropic'})
print(json.dumps(heavy))
"""


def median_wall_seconds(argv: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def heavy_imports(fisk_args: list[str]) -> list[str]:
    probe = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE, *fisk_args],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
    )
    result: list[str] = json.loads(probe.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=21)
    runs = parser.parse_args().runs
    fisk = str(Path(sys.executable).parent / "fisk")
    cases = {
        "fisk --help": [fisk, "--help"],
        "fisk info (cowsay)": [fisk, "info", "--no-color", "--config", str(COWSAY_CONFIG)],
    }
    # One warm-up of each so the first measured run does not pay for cold bytecode caches.
    for argv in [[sys.executable, "-c", "pass"], *cases.values()]:
        subprocess.run(argv, capture_output=True, check=False)

    baseline = median_wall_seconds([sys.executable, "-c", "pass"], runs)
    print(f"runs per command: {runs}")
    print(f"{'command':<22} {'median':>9} {'ratio':>7}  heavy imports")
    print(f"{'python -c pass':<22} {baseline * 1000:>7.1f}ms {1.0:>6.2f}x  -")
    for label, argv in cases.items():
        seconds = median_wall_seconds(argv, runs)
        heavy = heavy_imports(argv[1:])
        print(
            f"{label:<22} {seconds * 1000:>7.1f}ms {seconds / baseline:>6.2f}x  "
            f"{', '.join(heavy) or 'none'}"
        )
        if label == "fisk --help" and seconds > HELP_BUDGET_SECONDS:
            print(f"  over the {HELP_BUDGET_SECONDS * 1000:.0f} ms budget")


if __name__ == "__main__":
    main()
