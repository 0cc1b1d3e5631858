"""Import time (issue 32): wall time of fresh processes, interleaved, medians.

    python benchmarks/bench_import.py [--runs 15] [--trees PATH ...]

Each round runs, in turn: a bare interpreter (``pass``), ``import numpy``,
``import dpaccount``, ``dpaccount --version`` and a first query (the README's
DP-SGD ε, its process's import not counted: the query's own time, which pays
its lazy scipy imports), for each source tree given (default: this one; give
two, such as a checkout of main and this one, for before and after).
Interleaving spreads the machine's load over all of them alike. The ratio the
issue sets (≤ 3× ``import numpy``) is of the whole processes' wall times; the
interpreter's own start-up is shown beside them.

Two settings: ``source`` compiles dpaccount's ~16,000 lines in every process
(PYTHONDONTWRITEBYTECODE=1, as a checkout run that way does), ``bytecode``
reads them compiled (as after ``pip install``: a bytecode cache in a temporary
directory, for every module, filled by a first round not counted).
"""
import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent.parent
QUERY = ("import dpaccount as d, time; t = time.perf_counter(); "
         "d.Composition()([d.PoissonSampling()(d.GaussianMechanism(1.1), 256 / 60000)], [14063]).get_approxDP(1e-5); "
         "print(time.perf_counter() - t)")
SCRIPT = shutil.which("dpaccount", path=os.path.dirname(sys.executable))  # the installed command's own launcher
CASES = {
    "python (bare)": [sys.executable, "-c", "pass"],
    "import numpy": [sys.executable, "-c", "import numpy"],
    "import dpaccount": [sys.executable, "-c", "import dpaccount"],
    "dpaccount --version": [SCRIPT, "--version"] if SCRIPT else [sys.executable, "-m", "dpaccount", "--version"],
}


def _wall(command, env, tree):
    start = time.perf_counter()
    subprocess.run(command, env=env, cwd=tree, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _query(env, tree):
    run = subprocess.run([sys.executable, "-c", QUERY], env=env, cwd=tree, check=True, capture_output=True, text=True)
    return float(run.stdout.split()[-1])


def _medians(runs, env, trees):
    """{tree: {case: median ms}}, every case of every tree run once per round."""
    times = {tree: {name: [] for name in [*CASES, "first query"]} for tree in trees}
    for _ in range(runs):
        for tree in trees:
            tree_env = dict(env, PYTHONPATH=str(tree))  # (the cwd too: ``-c`` puts it first on the path)
            for name, command in CASES.items():
                times[tree][name].append(_wall(command, tree_env, tree))
            times[tree]["first query"].append(_query(tree_env, tree))
    return {tree: {name: statistics.median(t) * 1e3 for name, t in cases.items()} for tree, cases in times.items()}


def _print(setting, runs, tree, medians):
    bare, numpy_ms = medians["python (bare)"], medians["import numpy"]
    print(f"{setting}, {tree}: medians of {runs} fresh processes (ms)")
    for name, ms in medians.items():
        whole = name not in ("python (bare)", "first query")
        net = f"   {ms - bare:6.0f} net of start-up" if whole else ""
        net_ratio = (ms - bare) / (numpy_ms - bare)
        ratio = f"   {ms / numpy_ms:4.2f}x numpy's process, {net_ratio:4.2f}x net" if whole else ""
        print(f"  {name:<20} {ms:7.0f}{net}{ratio}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--trees", nargs="+", type=pathlib.Path, default=[HERE])
    parser.add_argument("--setting", choices=("source", "bytecode", "both"), default="both")
    args = parser.parse_args()
    base = {k: x for k, x in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as cache:
        settings = {"source": dict(base, PYTHONDONTWRITEBYTECODE="1"),
                    "bytecode": dict(base, PYTHONPYCACHEPREFIX=cache)}
        for setting, env in settings.items():
            if args.setting in (setting, "both"):
                _medians(1, env, args.trees)  # fills the bytecode cache (and the disk's)
                for tree, medians in _medians(args.runs, env, args.trees).items():
                    _print(setting, args.runs, tree, medians)
    print(f"{sys.executable}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
