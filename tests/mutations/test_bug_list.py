"""The deliberate-bug list (bugs.py) stays applicable, and every bug on it is caught.

The default run only checks that each snippet still occurs exactly once in
its module (so a refactor that moves the code updates the list) and that the
named tests exist. ``-m slow`` applies every bug in turn to a scratch copy
and runs its tests (run.py; a few minutes): all must fail, and all must pass
on the unpatched copy.
"""
import re
from pathlib import Path

import pytest
from mutations.bugs import BUGS
from mutations.run import ROOT, baseline, patched_source, try_bug


def test_every_snippet_applies_exactly_once():
    for bug in BUGS:
        patched_source(bug)  # SnippetError names the bug otherwise


def test_the_list_is_well_formed_and_names_existing_tests():
    names = [bug.name for bug in BUGS]
    assert len(names) == len(set(names)) and len(names) >= 18
    for bug in BUGS:
        assert bug.tests and bug.why, bug.name
        for node in bug.tests:
            path, _, func = node.partition("::")
            source = (ROOT / path).read_text()
            if func:
                assert re.search(rf"^def {re.escape(func.split('[')[0])}\(", source, re.M), (bug.name, node)


@pytest.mark.slow
def test_the_named_tests_pass_without_the_bugs():
    outcome, _, log = baseline(BUGS)
    assert outcome == "passed", log


@pytest.mark.slow
@pytest.mark.parametrize("bug", BUGS, ids=[bug.name for bug in BUGS])
def test_every_bug_is_caught(bug):
    res = try_bug(bug)
    assert res.caught, f"{bug.name} ({bug.why}): {res.outcome}\n{res.log}"
