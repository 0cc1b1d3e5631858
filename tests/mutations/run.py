"""Apply each deliberate bug of ``bugs.py`` in turn and run the tests named to catch it.

For every bug: the package and the test suite are copied to a scratch
directory, the bug's snippet is replaced there (it must occur exactly once in
its module, or the list has rotted and the run stops with ``SnippetError``),
and the named tests run in a fresh ``python -m pytest`` against the copy. The
bug is *caught* when a named test fails (pytest exit code 1); *missed* when
they all pass; an exit code other than 0 or 1 (collection error, no test
selected) or a run over the time limit is reported as such and counts as
not caught.

    python tests/mutations/run.py                 # every bug
    python tests/mutations/run.py NAME [NAME ...] # some of them
    python tests/mutations/run.py --check         # only: every snippet applies exactly once
    python tests/mutations/run.py --baseline      # first: the named tests pass unpatched

Exit status 0 when every bug run is caught (and the baseline passes).
"""
import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: bugs.py is beside this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bugs import BUGS
else:
    from .bugs import BUGS

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 900  # seconds per bug (the named tests take well under a minute unpatched)


class SnippetError(Exception):
    """A bug's snippet does not occur exactly once in its module: update ``bugs.py``."""


@dataclass(frozen=True)
class Result:
    name: str
    outcome: str   # "caught", "missed", "error" or "timeout"
    seconds: float
    log: str       # the end of pytest's output

    @property
    def caught(self):
        return self.outcome == "caught"

    @property
    def failed(self):
        """The node id of the test that failed (pytest's short summary), or ''."""
        lines = [ln for ln in self.log.splitlines() if ln.startswith("FAILED ")]
        return lines[0].split()[1] if lines else ""


def patched_source(bug, root=ROOT):
    """The text of ``bug.module`` with the bug applied; ``SnippetError`` unless the
    snippet occurs exactly once, the replacement differs and the result parses."""
    text = (root / bug.module).read_text()
    count = text.count(bug.find)
    if count != 1:
        raise SnippetError(f"{bug.name}: the snippet occurs {count} times in {bug.module} "
                           f"(must be exactly once): {bug.find!r}")
    if bug.replace == bug.find:
        raise SnippetError(f"{bug.name}: the replacement equals the snippet")
    out = text.replace(bug.find, bug.replace)
    try:
        ast.parse(out)
    except SyntaxError as exc:
        raise SnippetError(f"{bug.name}: the patched {bug.module} does not parse: {exc}") from exc
    return out


def copy_project(dest):
    """The package, the tests and pyproject.toml (pytest's configuration) under ``dest``."""
    skip = shutil.ignore_patterns("__pycache__", ".hypothesis", ".pytest_cache")
    shutil.copytree(ROOT / "dpaccount", dest / "dpaccount", ignore=skip)
    shutil.copytree(ROOT / "tests", dest / "tests", ignore=skip)
    shutil.copy2(ROOT / "pyproject.toml", dest / "pyproject.toml")


def run_tests(root, tests, timeout=TIMEOUT):
    """(outcome, seconds, log) of ``pytest -x`` on ``tests`` in the copy at ``root``;
    outcome "failed", "passed", "error" (exit code other than 0 and 1) or "timeout".
    Slow tests named here run too (the marker filter of pyproject.toml is lifted)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-n", "0", "-m", "slow or not slow",
           *tests]
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - start, ""
    log = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
    outcome = {0: "passed", 1: "failed"}.get(proc.returncode, "error")
    return outcome, time.monotonic() - start, log


def try_bug(bug, timeout=TIMEOUT):
    """Apply ``bug`` in a scratch copy and run its tests: a ``Result``."""
    with tempfile.TemporaryDirectory(prefix="dpaccount-bug-") as tmp:
        dest = Path(tmp)
        copy_project(dest)
        (dest / bug.module).write_text(patched_source(bug))
        outcome, seconds, log = run_tests(dest, bug.tests, timeout)
    caught = {"failed": "caught", "passed": "missed"}.get(outcome, outcome)
    return Result(bug.name, caught, seconds, log)


def baseline(bugs, timeout=TIMEOUT):
    """(outcome, seconds, log) of every named test on an unpatched copy: must be "passed"."""
    tests = sorted({t for bug in bugs for t in bug.tests})
    with tempfile.TemporaryDirectory(prefix="dpaccount-baseline-") as tmp:
        copy_project(Path(tmp))
        return run_tests(Path(tmp), tests, timeout)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="bugs to run (default: all)")
    parser.add_argument("--check", action="store_true", help="only check that every snippet applies")
    parser.add_argument("--baseline", action="store_true", help="first run the named tests unpatched")
    args = parser.parse_args(argv)
    known = {bug.name: bug for bug in BUGS}
    unknown = [n for n in args.names if n not in known]
    if unknown:
        parser.error(f"unknown bug names: {unknown}; known: {sorted(known)}")
    bugs = [known[n] for n in args.names] or list(BUGS)
    for bug in bugs:
        patched_source(bug)
    if args.check:
        print(f"{len(bugs)} snippets apply exactly once")
        return 0
    ok = True
    if args.baseline:
        outcome, seconds, log = baseline(bugs)
        print(f"baseline: {outcome} ({seconds:.0f} s)", flush=True)
        if outcome != "passed":
            print(log)
            ok = False
    for bug in bugs:
        res = try_bug(bug)
        ok = ok and res.caught
        print(f"{res.outcome:8s} {res.seconds:6.0f} s  {bug.name}  ({res.failed or ', '.join(bug.tests)})", flush=True)
        if not res.caught:
            print("    " + res.log.replace("\n", "\n    "), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
