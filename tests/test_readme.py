"""Every python code block of README.md runs (blocks in ```bash fences are
commands, not python, and are skipped): the blocks, in order, form one
script that runs as ``python script.py`` would — ``__name__ == "__main__"``,
so a process pool works as it does for a reader — in a scratch directory."""
import os
import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"^```(\w*)\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)
PYTHON = [code for lang, code in BLOCKS if lang == "python"]


def test_the_readme_has_python_and_shell_blocks_only():
    langs = {lang for lang, _ in BLOCKS}
    assert len(PYTHON) >= 2 and "bash" in langs
    assert langs <= {"python", "bash"}, f"a block in an unknown language: {langs}"  # none silently skipped


def test_every_python_block_runs(tmp_path):
    script = tmp_path / "readme.py"
    script.write_text("".join(f"# --- README.md python block {i}\n{code}\n" for i, code in enumerate(PYTHON)))
    env = {**os.environ, "PYTHONPATH": str(README.parent)}
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("sigma,steps,epsilon\n")  # the sweep's table ran, on a process pool
    assert (tmp_path / "released.json").exists()
