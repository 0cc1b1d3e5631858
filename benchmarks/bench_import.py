"""Import time (issue 32): wall time of fresh processes, interleaved, medians.

    python benchmarks/bench_import.py [--runs 15]

Each round runs, in turn: a bare interpreter (``pass``), ``import numpy``,
``import dpaccount``, ``dpaccount --version`` and a first query (the README's
DP-SGD ε, the process's import not counted: the query's own time, which pays
its lazy scipy imports). Interleaving spreads the machine's load over all of
them alike. The ratio the issue sets (≤ 3× ``import numpy``) is of the whole
processes' wall times; the interpreter's own start-up is shown beside them.
"""
import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
QUERY = ("import dpaccount as d, time; t = time.perf_counter(); "
         "d.Composition()([d.PoissonSampling()(d.GaussianMechanism(1.1), 256 / 60000)], [14063]).get_approxDP(1e-5); "
         "print(time.perf_counter() - t)")


def _version_command():
    script = shutil.which("dpaccount", path=os.path.dirname(sys.executable))
    return [script, "--version"] if script else [sys.executable, "-m", "dpaccount", "--version"]


CASES = {
    "python (bare)": [sys.executable, "-c", "pass"],
    "import numpy": [sys.executable, "-c", "import numpy"],
    "import dpaccount": [sys.executable, "-c", "import dpaccount"],
    "dpaccount --version": _version_command(),
}


def _wall(command, env):
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _query(env):
    run = subprocess.run([sys.executable, "-c", QUERY], env=env, check=True, capture_output=True, text=True)
    return float(run.stdout.split()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    times = {name: [] for name in [*CASES, "first query"]}
    for _ in range(args.runs):
        for name, command in CASES.items():
            times[name].append(_wall(command, env))
        times["first query"].append(_query(env))
    medians = {name: statistics.median(t) * 1e3 for name, t in times.items()}
    bare, numpy_ms = medians["python (bare)"], medians["import numpy"]
    print(f"medians of {args.runs} fresh processes (ms), {sys.executable}")
    for name, ms in medians.items():
        ratio = "" if name in ("python (bare)", "first query") else f"   {ms / numpy_ms:4.2f}x numpy's process"
        net = "" if name in ("python (bare)", "first query") else f"   {ms - bare:6.0f} net of start-up"
        print(f"  {name:<20} {ms:7.0f}{net}{ratio}")


if __name__ == "__main__":
    main()
