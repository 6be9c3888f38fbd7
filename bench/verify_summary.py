"""Replay runnable scripts with `torchmemlint verify` and tabulate the verdicts.

    python bench/verify_summary.py run OUT_DIR [--set reports|fixtures|all] [--device cpu|cuda|auto]
                                               [--jobs N] [--only SUBSTRING]
    python bench/verify_summary.py table OUT_DIR      # the tables again, from OUT_DIR's files
    python bench/verify_summary.py compare DIR_A DIR_B [--labels before after]   # finding by finding
    python bench/verify_summary.py OUT_DIR            # a folder written by bench/verify_cuda.sh

`run` runs one `torchmemlint verify --yes --select ALL --format json` per script (each in its
own replay server, so a script whose finding has no fix of its own gets its hand-written twin
through `--twin`): the runnable real-report set `bench/verify_reports/` (`leak_X.py`, replayed
with `near_X.py` as its twin when there is one; every `near_*.py` is replayed too), and/or the
runnable fixtures `fixtures/runnable/tml*.py` (with `NAME.correct.py` as the twin, itself
replayed as a near-miss). Per script it writes OUT_DIR/CASE.json (verify's JSON), CASE.log
(stderr) and a line of OUT_DIR/walltimes.txt; then OUT_DIR/summary.json and the tables:

- every finding: labelled (on a line its file's `# expect:` labels give it) or not, its verdict,
  bytes per iteration from the verdict's storage meter (the CUDA allocator on a GPU, the
  live-storage meter's storages on the CPU: device memory when the script runs on a GPU) and
  on the host from the graph meter (native heap, with its node count), peak excess, one-time
  bytes, and the reason of an inconclusive verdict;
- per verdict kind: findings on leaking lines, other findings in leaking files, findings in
  near-misses and correct twins; the share of leaking-line findings with a definitive verdict;
- the leaking files whose labelled line `check` does not report (nothing to replay).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
REPORTS = REPO_ROOT / "bench" / "verify_reports"
FIXTURES = REPO_ROOT / "fixtures" / "runnable"
VERDICTS = ("confirmed-growth", "confirmed-peak-excess", "confirmed-one-time", "confirmed-error",
            "no-memory-cost", "not-reproduced", "fix-crashed", "inconclusive")
DEFINITIVE = {"confirmed-growth", "confirmed-peak-excess", "confirmed-one-time", "confirmed-error",
              "no-memory-cost"}


@dataclass(frozen=True)
class Case:
    """One script to replay: a leak (labelled lines) or a near-miss / correct twin (none)."""

    name: str  # unique, used for the output files: CATEGORY__STEM
    script: Path
    twin: Path | None
    leaking: bool


def expected_labels(script: Path) -> set[tuple[int, str]]:
    sys.path.insert(0, str(REPO_ROOT))
    from torchmemlint.labels import expected_diagnostics

    return expected_diagnostics(script.read_text())


def report_cases() -> list[Case]:
    cases = []
    for script in sorted(REPORTS.rglob("*.py")):
        category = script.parent.name
        if script.name.startswith("leak_"):
            twin = script.with_name("near_" + script.name[len("leak_"):])
            cases.append(Case(f"{category}__{script.stem}", script, twin if twin.exists() else None, True))
        elif script.name.startswith("near_"):
            cases.append(Case(f"{category}__{script.stem}", script, None, False))
    return cases


def fixture_cases() -> list[Case]:
    cases = []
    for script in sorted(FIXTURES.glob("tml*.py")):
        if script.name.endswith(".correct.py"):
            cases.append(Case(f"fixtures__{script.stem}", script, None, False))
            continue
        twin = script.with_name(script.stem + ".correct.py")
        cases.append(Case(f"fixtures__{script.stem}", script, twin if twin.exists() else None, True))
    return cases


def run_case(case: Case, out: Path, device: str) -> str:
    command = [sys.executable, "-m", "torchmemlint", "verify", str(case.script.relative_to(REPO_ROOT)),
               "--yes", "--select", "ALL", "--format", "json", "--device", device]
    if case.twin is not None:
        command += ["--twin", str(case.twin.relative_to(REPO_ROOT))]
    start = time.monotonic()
    with open(out / f"{case.name}.json", "w") as stdout, open(out / f"{case.name}.log", "w") as stderr:
        status = subprocess.call(command, cwd=REPO_ROOT, stdout=stdout, stderr=stderr)
    return f"{case.name} status={status} wall_s={time.monotonic() - start:.1f}"


def run(out: Path, cases: list[Case], device: str, jobs: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "cases.json").write_text(json.dumps(
        [{"name": c.name, "script": str(c.script.relative_to(REPO_ROOT)), "leaking": c.leaking,
          "twin": str(c.twin.relative_to(REPO_ROOT)) if c.twin else None} for c in cases], indent=1))
    with open(out / "walltimes.txt", "w") as times, ThreadPoolExecutor(max_workers=jobs) as pool:
        for line in pool.map(lambda case: run_case(case, out, device), cases):
            print(line, flush=True)
            times.write(line + "\n")


def _bytes(value) -> str:
    return "" if value is None else f"{value:,}"


def finding_rows(out: Path) -> tuple[list[dict], list[str]]:
    """One row per finding of every replayed case; and the leaking cases `check` missed."""
    rows, missed = [], []
    for entry in json.loads((out / "cases.json").read_text()):
        script = REPO_ROOT / entry["script"]
        labels = expected_labels(script)
        report = out / f"{entry['name']}.json"
        try:
            results = json.loads(report.read_text() or "[]")
        except json.JSONDecodeError:
            rows.append({"case": entry["name"], "leaking": entry["leaking"], "labelled": bool(labels),
                         "code": "", "line": 0, "verdict": "no JSON (see the log)"})
            continue
        reported = {(r["line"], r["code"]) for r in results}
        if entry["leaking"] and labels and not labels & reported:
            missed.append(entry["name"])
        for r in results:
            growth = r.get("growth_meter")
            rows.append({
                "case": entry["name"], "leaking": entry["leaking"],
                "labelled": (r["line"], r["code"]) in labels,
                "code": r["code"], "line": r["line"], "verdict": r["verdict"],
                "growth_meter": growth, "memory": r.get("memory"), "device": r.get("device"),
                # the verdict's storage meter: the CUDA allocator, or the live-storage meter's storages
                "storage_bytes_per_iteration": None if growth in ("graph", "python-heap")
                else r.get("bytes_per_iteration"),
                "host_bytes_per_iteration": r.get("native_bytes_per_iteration"),
                "nodes_per_iteration": r.get("nodes_per_iteration"),
                "peak_excess_bytes": r.get("peak_excess_bytes"),
                "one_time_bytes": r.get("one_time_bytes"),
                "live_storage_rounded": (r.get("live_storage") or {}).get("rounded_bytes_per_iteration"),
                "reason": r.get("inconclusive_reason") or r.get("fix_error") or "",
                "twin_origin": r.get("twin_origin"),
            })
    return rows, missed


def counts(rows: list[dict]) -> dict[str, dict[str, int]]:
    groups = {"leaking line": lambda r: r["leaking"] and r["labelled"],
              "leaking file, other line": lambda r: r["leaking"] and not r["labelled"],
              "near-miss / correct twin": lambda r: not r["leaking"]}
    return {group: {verdict: sum(1 for r in rows if chosen(r) and r["verdict"] == verdict) for verdict in VERDICTS}
            for group, chosen in groups.items()}


def table(out: Path) -> None:
    rows, missed = finding_rows(out)
    print("| case | finding | labelled | verdict | meter | storage B/it. | host B/it. (nodes) | peak excess B "
          "| one-time B | reason |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        nodes = f" ({r['nodes_per_iteration']})" if r.get("nodes_per_iteration") else ""
        host = _bytes(r.get("host_bytes_per_iteration")) + nodes if r.get("growth_meter") == "graph" else ""
        print(f"| {r['case']} | {r['code']}@{r['line']} | {'yes' if r['labelled'] else 'no'} | {r['verdict']} | "
              f"{r.get('growth_meter') or ''} | {_bytes(r.get('storage_bytes_per_iteration'))} | {host} | "
              f"{_bytes(r.get('peak_excess_bytes'))} | {_bytes(r.get('one_time_bytes'))} | {r.get('reason', '')} |")
    summary = counts(rows)
    print("\n| verdict | " + " | ".join(summary) + " |")
    print("|---|" + "---|" * len(summary))
    for verdict in VERDICTS:
        print(f"| {verdict} | " + " | ".join(str(summary[group][verdict]) for group in summary) + " |")
    print("| total | " + " | ".join(str(sum(summary[group].values())) for group in summary) + " |")
    leaking = [r for r in rows if r["leaking"] and r["labelled"]]
    definitive = sum(r["verdict"] in DEFINITIVE for r in leaking)
    confirmed_near = sum(r["verdict"].startswith("confirmed") for r in rows if not r["leaking"])
    print(f"\nleaking-line findings with a definitive verdict: {definitive}/{len(leaking)}"
          f"{f' ({definitive / len(leaking):.0%})' if leaking else ''}; "
          f"inconclusive: {sum(r['verdict'] == 'inconclusive' for r in leaking)}; "
          f"confirmations on near-misses and correct twins: {confirmed_near}")
    print(f"leaking files whose labelled line check does not report ({len(missed)}): {', '.join(missed) or '-'}")
    (out / "summary.json").write_text(json.dumps({"findings": rows, "counts": summary, "check_missed": missed},
                                                 indent=1))


def _verdict_text(row: dict | None) -> str:
    if row is None:
        return "-"
    detail = row.get("reason") or (row.get("growth_meter") if row["verdict"] == "confirmed-growth" else "")
    return f"{row['verdict']} ({detail})" if detail else row["verdict"]


def _figure_text(row: dict | None) -> str:
    """Bytes per iteration: the storage meter's (device on CUDA), or the graph's host bytes."""
    if row is None:
        return ""
    if row.get("growth_meter") == "graph":
        return f"host {_bytes(row.get('host_bytes_per_iteration'))} ({row.get('nodes_per_iteration')} nodes)"
    if row.get("one_time_bytes"):
        return f"{_bytes(row['one_time_bytes'])} once"
    if row["verdict"] == "confirmed-growth":
        return _bytes(row.get("storage_bytes_per_iteration"))
    if row["verdict"] == "confirmed-peak-excess":
        return f"peak +{_bytes(row.get('peak_excess_bytes'))}"
    return ""


def compare(first: Path, second: Path, labels: tuple[str, str]) -> None:
    """Finding by finding, the verdicts (and figures) of two runs of the same scripts: before and
    after a change, or the CPU against CUDA; then how many agree."""
    rows = [{(r["case"], r["code"], r["line"]): r for r in finding_rows(folder)[0]} for folder in (first, second)]

    def order(key: tuple) -> tuple:
        return not rows[0].get(key, rows[1].get(key))["leaking"], key

    keys = sorted(set(rows[0]) | set(rows[1]), key=order)
    print(f"| case | finding | leaking line | {labels[0]} | {labels[0]} B/it. | {labels[1]} | {labels[1]} B/it. |")
    print("|---|---|---|---|---|---|---|")
    same = 0
    for key in keys:
        a, b = rows[0].get(key), rows[1].get(key)
        row = a or b
        same += a is not None and b is not None and a["verdict"] == b["verdict"]
        print(f"| {key[0]} | {key[1]}@{key[2]} | {'yes' if row['leaking'] and row['labelled'] else 'no'} | "
              f"{_verdict_text(a)} | {_figure_text(a)} | {_verdict_text(b)} | {_figure_text(b)} |")
    print(f"\nsame verdict in both runs: {same}/{len(keys)} findings")


def legacy_table(folder: Path) -> None:
    """The per-fixture table of a folder written by bench/verify_cuda.sh."""
    times = {}
    for line in (folder / "walltimes.txt").read_text().splitlines():
        name, _status, wall = line.split()
        times[name] = wall.split("=")[1]
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


def main(argv: list[str]) -> int:
    if len(argv) == 1 and argv[0] not in ("run", "table", "-h", "--help"):
        legacy_table(Path(argv[0]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="replay the scripts, then print the tables")
    run_parser.add_argument("out", type=Path)
    run_parser.add_argument("--set", choices=("reports", "fixtures", "all"), default="reports")
    run_parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu")
    run_parser.add_argument("--jobs", type=int, default=1, help="scripts replayed at the same time")
    run_parser.add_argument("--only", default="", help="only the cases whose name contains this")
    table_parser = commands.add_parser("table", help="print the tables of a folder written by `run`")
    table_parser.add_argument("out", type=Path)
    compare_parser = commands.add_parser("compare", help="finding by finding, two folders written by `run`")
    compare_parser.add_argument("first", type=Path)
    compare_parser.add_argument("second", type=Path)
    compare_parser.add_argument("--labels", nargs=2, default=("first", "second"))
    args = parser.parse_args(argv)
    if args.command == "compare":
        compare(args.first, args.second, tuple(args.labels))
        return 0
    if args.command == "run":
        cases = (report_cases() if args.set in ("reports", "all") else []) + \
                (fixture_cases() if args.set in ("fixtures", "all") else [])
        run(args.out, [c for c in cases if args.only in c.name], args.device, args.jobs)
    table(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
