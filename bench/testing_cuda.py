"""``assert_no_memory_growth`` on the runnable fixtures that leak (``tests/runnable_steps.LEAKS``),
original and twin, on whatever device the fixtures pick (CUDA when available; run with
``CUDA_VISIBLE_DEVICES=`` for the CPU). Prints one JSON object per run: per device, the bytes
per call of the growth meter (the CUDA allocator on CUDA, the live-storage meter on the CPU),
the live-storage meter's figure raw and rounded to 512-byte blocks, the graph nodes per call,
and whether the assertion failed (with the fixture's tolerance). ``docs/verification.md`` compares a CUDA run with a CPU run.

Usage: python bench/testing_cuda.py [--iterations N] > OUT.jsonl"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from runnable_steps import LEAKS, Leak, leak_steps  # noqa: E402

from torchmemlint.testing import assert_no_memory_growth  # noqa: E402
from torchmemlint.verify.meters import cuda_rounded  # noqa: E402


def tolerance(leak: Leak) -> int:
    """What the fixture means to keep per call; on CUDA in the allocator's 512-byte blocks."""
    import torch

    return cuda_rounded(leak.tolerance_bytes) if torch.cuda.is_available() else leak.tolerance_bytes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=8)
    iterations = parser.parse_args().iterations
    for leak in LEAKS:
        for variant, step in zip(("original", "twin"), leak_steps(leak)):
            started = time.perf_counter()
            try:
                growth = assert_no_memory_growth(step, iterations=iterations, tolerance_bytes=tolerance(leak))
                failed = False
            except AssertionError as error:
                growth, failed = error.growth, True
            devices = {name: {"meter": d.meter, "bytes_per_call": d.bytes_per_call, "peak_bytes": d.peak_bytes,
                              "live_storage_bytes_per_call": d.live_storage_bytes_per_call,
                              "live_storage_rounded_bytes_per_call": d.live_storage_rounded_bytes_per_call}
                       for name, d in growth.devices.items()}
            print(json.dumps({"fixture": leak.fixture, "variant": variant, "failed": failed, "devices": devices,
                              "nodes_per_call": growth.nodes_per_call,
                              "seconds": round(time.perf_counter() - started, 2)}), flush=True)


if __name__ == "__main__":
    main()
