"""Every python code block of README.md runs (blocks in ```bash fences are
commands, not python, and are skipped): the blocks, in order, form one
script that runs as ``python script.py`` would — ``__name__ == "__main__"``,
so a process pool works as it does for a reader — in a scratch directory.
The blocks are found by ``doc_blocks.py`` (shared with test_docs.py)."""
import os
import pathlib
import subprocess
import sys

from doc_blocks import code_blocks, python_script

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = code_blocks(README)


def test_the_readme_has_python_and_shell_blocks_only():
    langs = {b.lang for b in BLOCKS}
    assert sum(b.lang == "python" for b in BLOCKS) >= 2 and "bash" in langs
    assert langs <= {"python", "bash"}, f"a block in an unknown language: {langs}"  # none silently skipped


def test_every_python_block_runs(tmp_path):
    script = tmp_path / "readme.py"
    script.write_text(python_script(BLOCKS, "README.md"))
    env = {**os.environ, "PYTHONPATH": str(README.parent)}
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("sigma,steps,epsilon\n")  # the sweep's table ran, on a process pool
    assert (tmp_path / "released.json").exists()


# ---------------------------------------------------------------- the numbers the README states
# Issue 32: every number the README shows is what the code gives, to the digits shown. A number
# ending in "…" shows the leading digits (truncated); one without shows the value rounded.
import contextlib  # noqa: E402
import io  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402
import warnings  # noqa: E402
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, Decimal  # noqa: E402

import pytest  # noqa: E402

NUM = r"\d+(?:\.\d+)?"
CLAIM = re.compile(rf"^(?P<expr>\S.*?)\s{{2,}}#\s+(?P<claim>Bounds\(.*?\)|{NUM}…?)(?:\s|$)")
NUMBER = re.compile(rf"({NUM})(…?)")
TEXT = README.read_text(encoding="utf-8")


def shows(value, shown):
    """``value`` agrees with the README's ``shown`` digits (truncated with "…", else rounded)."""
    digits, ellipsis = NUMBER.fullmatch(shown).groups()
    places = Decimal(digits).as_tuple().exponent
    mode = ROUND_DOWN if ellipsis else ROUND_HALF_EVEN
    return Decimal(value).quantize(Decimal(1).scaleb(places), rounding=mode) == Decimal(digits)


def _claims():
    for block in BLOCKS:
        if block.lang != "python":
            continue
        for line in block.code.splitlines():
            m = CLAIM.match(line)
            if m:
                yield block, m.group("expr"), m.group("claim")


CLAIMS = list(_claims())


def test_the_readme_states_numbers_in_its_code():
    assert len(CLAIMS) >= 4


@pytest.mark.parametrize("block, expr, claim", CLAIMS, ids=[c[1] for c in CLAIMS])
def test_each_number_in_a_code_comment_is_what_the_code_gives(block, expr, claim):
    space = {}
    setup = "\n".join(line for line in block.code.splitlines() if not CLAIM.match(line))
    exec(compile(setup, "README.md", "exec"), space)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = eval(expr, space)
    if claim.startswith("Bounds("):
        for field, shown in re.findall(rf"(lower|upper)=({NUM}…?)", claim):
            assert shows(getattr(value, field), shown), (field, getattr(value, field), shown)
    else:
        assert shows(value, claim), (expr, value, claim)


def test_each_command_prints_what_the_readme_shows():
    from dpaccount.cli import main
    pairs = re.findall(r"^(dpaccount [^\n#]*?)\s*\n# (epsilon = [^\n]*)$", TEXT, re.M)
    assert pairs
    for command, printed in pairs:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(shlex.split(command)[1:]) == 0
        assert out.getvalue().strip() == printed.strip(), command


def test_the_numbers_in_the_prose():
    from dpaccount import Composition, GaussianMechanism, PoissonSampling
    sgd = Composition()([PoissonSampling()(GaussianMechanism(1.1), 256 / 60000)], [14063])
    clt, certified = re.search(rf"its ε\(1e-5\) is ({NUM}) against the certified ({NUM})", TEXT).groups()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert shows(sgd.get_approxDP(1e-5, method="clt"), clt)
    assert shows(sgd.get_approxDP(1e-5), certified)
    bench = re.search(rf"dpaccount answers ε = ({NUM}) \(a certified upper bound\)", TEXT).group(1)
    assert shows(sgd.get_approxDP(1e-5), bench)
    lo, hi = re.search(rf"`accuracy=1e-4` certifies the exact ε\(1e-5\) in \[({NUM}), ({NUM})\]", TEXT).groups()
    fine = sgd.get_approxDP_bounds(1e-5, accuracy=1e-4)
    assert shows(fine.lower, lo + "…") and Decimal(hi) >= Decimal(fine.upper)  # shown outwards
    odometer = re.search(rf"answers ({NUM}) after the 14,063 steps", TEXT).group(1)
    from dpaccount import PrivacyOdometer
    run = PrivacyOdometer(sgd)
    run.step(PoissonSampling()(GaussianMechanism(1.1), 256 / 60000), 14063)
    assert shows(run.get_approxDP(1e-5), odometer)


def test_ci_runs_the_quickstart_commands_as_written():
    """.ci/run reads the README's two Quickstart commands (install + example, tests) with
    .ci/readme_commands.py; both must be found, and be the README's lines verbatim."""
    out = subprocess.run([sys.executable, str(README.parent / ".ci" / "readme_commands.py"), str(README)],
                         capture_output=True, text=True, check=True)
    install, tests = out.stdout.splitlines()
    quickstart = TEXT.split("## Quickstart", 1)[1]
    assert install in quickstart and tests in quickstart
    assert install.startswith("pip install -e ") and "examples/dpsgd.py" in install
    assert tests.startswith("python -m pytest")
