"""Print the README's quickstart commands 1 and 2, one per line, as the README writes them
(the first two lines of the bash block under "## Quickstart", trailing comments dropped), so
that .ci/run runs exactly what a newcomer reads and the two cannot drift apart."""
import pathlib
import re
import sys

text = pathlib.Path(sys.argv[1]).read_text(encoding="utf-8")
section = text.split("## Quickstart", 1)[1]
block = re.search(r"^```bash\n(.*?)^```", section, re.S | re.M)
if block is None:
    sys.exit("README.md: no ```bash block under '## Quickstart'")
commands = [line.split("  #", 1)[0].strip() for line in block.group(1).splitlines() if line.strip()]
if len(commands) < 2:
    sys.exit("README.md: the Quickstart block needs two commands (install + example, tests)")
print(commands[0])
print(commands[1])
