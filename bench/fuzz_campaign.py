#!/usr/bin/python3
"""Fuzz campaigns: every fuzz target for a number of executions.

Runs amp-import-fuzzer, amp-pipeline-fuzzer and amp-parser-fuzzer (`make
fuzz` builds them in the ASan + UBSan build, where every file has coverage)
for --runs executions each, two at a time, seeded with:
  ONNX targets: every gen_onnx.py case (the bad ones too), the ONNX graphs
    under 64 KiB of ../shared/corpus (when it is there), the bundled example
    step and the small zoo MLP step;
  parser target: the onnxg and amp dialect tests, one seed per `// -----`
    section, with tools/amp-fuzzers/mlir.dict.
A crash, a hang (-timeout), an out-of-memory (-rss_limit_mb) or a sanitizer
report stops that target and fails the campaign; its input is kept in the
work folder (reproduce: `TARGET FILE`). Prints a table (executions, exec/s,
coverage, outcome) and appends it, with the machine and date, to
bench/results/fuzz.md.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from roundtrip import record

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CORPUS = os.path.join(REPO, "..", "shared", "corpus", "external")
GEN_ONNX = os.path.join(REPO, "test", "utils", "gen_onnx.py")
ONNX_TARGETS = ("amp-import-fuzzer", "amp-pipeline-fuzzer")
TARGETS = ONNX_TARGETS + ("amp-parser-fuzzer",)
STATUS = re.compile(r"#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/\S+"
                    r".*exec/s: (\d+)")


def onnx_seeds(folder):
    """Small ONNX models into `folder`."""
    os.makedirs(folder)
    cases = subprocess.run([sys.executable, GEN_ONNX, "--list"], check=True,
                           capture_output=True, text=True).stdout.split()
    for case in cases:
        subprocess.run([sys.executable, GEN_ONNX, case,
                        os.path.join(folder, f"{case}.onnx")], check=True,
                       capture_output=True)
    shutil.copy(os.path.join(REPO, "examples", "mlp_training_step.onnx"),
                folder)
    sys.path.insert(0, os.path.join(REPO, "python"))
    from amp_opt import zoo
    zoo.export("mlp", "adam", os.path.join(folder, "zoo_mlp_adam.onnx"),
               size="small")
    if os.path.isdir(CORPUS):
        for i, path in enumerate(sorted(glob.glob(
                os.path.join(CORPUS, "**", "*.onnx"), recursive=True))):
            if os.path.getsize(path) < 64 * 1024:
                shutil.copy(path, os.path.join(folder, f"corpus_{i}.onnx"))
    else:
        print(f"note: {CORPUS} is absent; seeding without the corpus",
              file=sys.stderr)


def mlir_seeds(folder):
    """The dialect tests' sections into `folder`."""
    os.makedirs(folder)
    for path in sorted(glob.glob(os.path.join(REPO, "test", "Dialect",
                                              "*", "*.mlir"))):
        with open(path) as f:
            sections = re.split(r"^// -----\s*$", f.read(), flags=re.M)
        name = os.path.splitext(os.path.basename(path))[0]
        for i, section in enumerate(sections):
            with open(os.path.join(folder, f"{name}_{i}.mlir"), "w") as f:
                f.write(section)


def start(target, build, work, runs, seeds):
    """Starts one campaign; returns (process, log path)."""
    corpus = os.path.join(work, target, "corpus")
    os.makedirs(corpus)
    log = os.path.join(work, target, "log.txt")
    command = [os.path.join(build, "bin", target), f"-runs={runs}",
               "-timeout=25", "-rss_limit_mb=4096", "-print_final_stats=1",
               f"-artifact_prefix={os.path.join(work, target)}/",
               corpus, seeds]
    if target == "amp-parser-fuzzer":
        command[1:1] = ["-max_len=16384", "-dict=" + os.path.join(
            REPO, "tools", "amp-fuzzers", "mlir.dict")]
    else:
        command[1:1] = ["-max_len=131072"]
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    out = open(log, "w")
    print("$ " + " ".join(command), file=sys.stderr)
    return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                            env=env), log


def last_status(log):
    """The last status line of a libFuzzer log, as numbers, with the final
    count of executions where the run has ended."""
    with open(log, errors="replace") as f:
        text = f.read()
    matches = STATUS.findall(text)
    if not matches:
        return None
    status = [int(x) for x in matches[-1]]
    for field, name in ((0, "number_of_executed_units"),
                        (4, "average_exec_per_sec")):
        final = re.search(rf"stat::{name}: +(\d+)", text)
        if final:
            status[field] = int(final.group(1))
    return status


def outcome(code, log):
    """What ended a campaign: 'clean' or the first error line."""
    with open(log, errors="replace") as f:
        text = f.read()
    if code == 0 and "Done " in text:
        return "clean"
    for pattern in (r"==\d+==ERROR: .*", r"runtime error: .*",
                    r"ALARM: .*", r"==\d+== ERROR: libFuzzer: .*",
                    r"deadly signal"):
        match = re.search(pattern, text)
        if match:
            return match.group(0)[:120]
    return f"exit {code}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build-sanitize",
                        help="build folder whose bin/ has the targets")
    parser.add_argument("--runs", type=int, default=1000000)
    parser.add_argument("--targets", nargs="+", default=list(TARGETS))
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--work", help="keep corpora and logs here")
    parser.add_argument("--poll", type=float, default=60,
                        help="seconds between progress lines")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()

    work = args.work or tempfile.mkdtemp(prefix="amp-fuzz-")
    os.makedirs(work, exist_ok=True)
    onnx = os.path.join(work, "seeds-onnx")
    mlir = os.path.join(work, "seeds-mlir")
    if not os.path.isdir(onnx):
        onnx_seeds(onnx)
    if not os.path.isdir(mlir):
        mlir_seeds(mlir)
    print(f"seeds: {len(os.listdir(onnx))} ONNX, {len(os.listdir(mlir))} "
          f"MLIR; work folder {work}", file=sys.stderr)

    pending = list(args.targets)
    running, results = {}, {}
    while pending or running:
        while pending and len(running) < args.parallel:
            target = pending.pop(0)
            seeds = mlir if target == "amp-parser-fuzzer" else onnx
            running[target] = start(target, args.build, work, args.runs,
                                    seeds) + (time.time(),)
        time.sleep(args.poll)
        for target, (process, log, began) in list(running.items()):
            status = last_status(log)
            if status:
                print(f"  {target}: {status[0]} runs, {status[4]} exec/s",
                      file=sys.stderr)
            if process.poll() is not None:
                results[target] = (status, time.time() - began,
                                   outcome(process.returncode, log))
                del running[target]

    header = ("| target | executions | exec/s | wall min | coverage (cov / "
              "ft) | corpus | outcome |\n|---|---:|---:|---:|---:|---:|---|")
    lines = []
    for target in args.targets:
        status, wall, end = results[target]
        runs, cov, ft, corp, speed = status or (0, 0, 0, 0, 0)
        lines.append(f"| {target} | {runs} | {speed} | "
                     f"{wall / 60:.1f} | {cov} / {ft} | {corp} | {end} |")
    table = "\n".join([header] + lines)
    print(table)
    if not args.no_record:
        record("fuzz.md", f"`bench/fuzz_campaign.py --build {args.build} "
               f"--runs {args.runs}` (exec/s: libFuzzer's average; "
               f"{args.parallel} targets at a time on the machine's cores)",
               table)
    return 0 if all(r[2] == "clean" for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
