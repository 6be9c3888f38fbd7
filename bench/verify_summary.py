"""Summarise a folder written by bench/verify_cuda.sh as the markdown table of
docs/verification.md: per finding, its verdict, bytes per iteration from the verdict's meter and
from the live-storage meter (raw / rounded to the CUDA allocator's 512-byte blocks), the peak
excess, and the fixture's wall time. Usage: python bench/verify_summary.py OUT_DIR"""
from __future__ import annotations

import json
import sys
from pathlib import Path


def wall_times(folder: Path) -> dict[str, str]:
    times = {}
    for line in (folder / "walltimes.txt").read_text().splitlines():
        name, _status, wall = line.split()
        times[name] = wall.split("=")[1]
    return times


def main(folder: Path) -> None:
    times = wall_times(folder)
    print("| fixture | rule | verdict | meter | B/iteration (meter) | B/iteration (live-storage raw / 512-B blocks) "
          "| peak excess B | wall s |")
    print("|---|---|---|---|---|---|---|---|")
    for report in sorted(folder.glob("*.json")):
        try:
            results = json.loads(report.read_text() or "[]")
        except json.JSONDecodeError:
            print(f"| {report.stem} | | (no JSON: see {report.stem}.log) | | | | | |")
            continue
        for result in results:
            live = result.get("live_storage") or {}
            live_text = f"{live.get('bytes_per_iteration', '')} / {live.get('rounded_bytes_per_iteration', '')}" \
                if live else ""
            print(f"| {report.stem} | {result['code']} (line {result['line']}) | {result['verdict']} | "
                  f"{result['meter']} | {result['bytes_per_iteration']} | {live_text} | "
                  f"{result['peak_excess_bytes']} | {times.get(report.stem, '')} |")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
