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
