"""Progress of long queries (issue 32): opt-in, to stderr or a callable, never by default.

A callable hears ``Progress`` values whose fraction never decreases and ends
at 1, each naming its stage; ``progress=True`` draws on stderr alone; nothing
is printed without it; a bad value is a TypeError naming ``progress``; the
command line's ``--progress`` draws a bar on stderr for every command.
"""
import io
import sys

import pytest

import dpaccount as dpa
from dpaccount import Composition, GaussianMechanism, PoissonSampling
from dpaccount.cli import main
from dpaccount.progress import Progress, StderrBar


def heterogeneous(seed, n=20):
    """``n`` distinct subsampled Gaussians (distinct per ``seed``: the grid cache is shared)."""
    parts = [PoissonSampling()(GaussianMechanism(0.9 + 0.02 * i + 1e-4 * seed), 0.01 + 0.001 * i) for i in range(n)]
    return Composition()(parts, [10 + i for i in range(n)])


def test_a_callable_hears_monotone_fractions_ending_at_one_with_stage_names():
    events = []
    m = heterogeneous(1)
    eps = m.get_approxDP_bounds(1e-5, accuracy=1e-2, progress=events.append)
    assert eps == m.get_approxDP_bounds(1e-5, accuracy=1e-2)  # the same answer (now from the cache)
    assert len(events) > 5 and all(isinstance(e, Progress) for e in events)
    fractions = [e.fraction for e in events]
    assert all(0.0 <= a <= b <= 1.0 for a, b in zip(fractions, fractions[1:]))
    assert fractions[-1] == 1.0 and events[-1].eta == 0.0
    assert events[0].stage == "epsilon(delta) interval"
    stages = {e.stage for e in events}
    assert "composing a grid" in stages and any(s.startswith("discretising 20 pairs") for s in stages)
    assert any(s.startswith("FFT composition") for s in stages)
    assert all(e.total is None or 0 <= e.done <= e.total for e in events)
    assert all(e.eta is None or e.eta >= 0 for e in events)
    elapsed = [e.elapsed for e in events]
    assert elapsed == sorted(elapsed)


@pytest.mark.parametrize("query, arg", [("get_approxDP", 1e-6), ("get_approx_delta", 2.0),
                                        ("get_approx_delta_bounds", 2.0), ("get_fDP", 0.1),
                                        ("get_fDP_bounds", 0.1), ("mu_GDP", None)])
def test_every_query_reports_to_the_end(query, arg):
    events = []
    fn = getattr(heterogeneous(2, n=6), query)
    fn(*([] if arg is None else [arg]), progress=events.append)
    assert events and events[-1].fraction == 1.0
    assert [e.fraction for e in events] == sorted(e.fraction for e in events)


def test_nothing_is_printed_without_progress(capfd):
    m = heterogeneous(3, n=6)
    m.get_approxDP(1e-5)
    m.get_approxDP_bounds(1e-5)
    assert capfd.readouterr() == ("", "")


def test_progress_true_draws_on_stderr_only(capsys):
    m = heterogeneous(4, n=6)
    m.get_approxDP(1e-5, progress=True)
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.splitlines()[-1] == "epsilon(delta): 100%  ETA 0s"  # not a terminal: lines


@pytest.mark.parametrize("bad", ["yes", 1, 0.5, [print]])
def test_a_bad_progress_is_a_type_error_naming_it(bad):
    m = GaussianMechanism(1.0)
    for call in (lambda: m.get_approxDP(1e-5, progress=bad), lambda: m.get_fDP(0.1, progress=bad),
                 lambda: m.privacy_profile(progress=bad),
                 lambda: dpa.calibrate(GaussianMechanism, eps=1, delta=1e-5, bounds=(0.5, 20), progress=bad)):
        with pytest.raises(TypeError, match="progress must be None, True or a callable"):
            call()


def test_calibration_reports_its_evaluations_as_nested_queries():
    events = []
    sigma = dpa.dpsgd_noise_multiplier(0.01, 300, 2.0, 1e-5, progress=events.append)
    assert Composition()([PoissonSampling()(GaussianMechanism(sigma), 0.01)], [300]).get_approxDP(1e-5) <= 2.0
    assert events[0].stage == "calibrate" and events[-1].fraction == 1.0
    assert [e.fraction for e in events] == sorted(e.fraction for e in events)
    assert any(e.stage.startswith("calibrate: evaluation 1: x = ") for e in events)
    assert any(e.stage == "epsilon(delta)" for e in events)  # each evaluation, nested


def test_the_bar_redraws_in_place_on_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self):
            return True
    bar = StderrBar(width=4, stream=Terminal())
    bar(Progress("epsilon", 0, None, 0.0, 0.0, None))
    bar(Progress("epsilon", 1, 1, 1.0, 3.0, 0.0))
    bar.close()
    first, last = bar.stream.getvalue().split("\r")[1:]
    assert first.rstrip() == "epsilon: [----]   0%" and last.rstrip() == "epsilon: [####] 100%  ETA 0s"
    assert last.endswith("\n")


ARGS = ["--mechanism", "subsampled-gaussian", "--sigma", "1.3", "--q", "0.01", "--steps", "20", "--progress"]


@pytest.mark.parametrize("command", [["epsilon", "--delta", "1e-5"], ["delta", "--eps", "1"],
                                     ["rdp", "--alpha", "2"], ["fdp", "--alpha", "0.1"], ["plot"]])
def test_the_cli_progress_flag_draws_a_bar_on_stderr(command, capsys, tmp_path):
    if command == ["plot"]:
        pytest.importorskip("matplotlib")
        command = ["plot", "--output", str(tmp_path / "f.png")]
    assert main(command + ARGS) == 0
    out = capsys.readouterr()
    assert out.err.splitlines()[-1] == f"{command[0]}: 100%  ETA 0s" and "100%" not in out.out
    assert main(command + ARGS[:-1]) == 0
    assert capsys.readouterr().err == ""  # without --progress, stderr not a terminal: nothing


def test_a_callback_that_raises_stops_the_query_and_leaves_no_reporter_behind(capfd):
    class Stop(Exception):
        pass

    def stop_at_the_fft(p):
        if p.stage.startswith("FFT composition"):
            raise Stop
    m = heterogeneous(5, n=6)
    with pytest.raises(Stop):
        m.get_approxDP(1e-5, progress=stop_at_the_fft)
    events = []
    assert m.get_approxDP(1e-5, None, 1e-3, events.append) == m.get_approxDP(1e-5)  # progress by position too
    assert events[-1].fraction == 1.0 and capfd.readouterr() == ("", "")


def test_the_cli_sweep_counts_its_points_in_the_bar(capsys):
    argv = ["sweep", "--mechanism", "subsampled-gaussian", "--q", "0.01", "--steps", "20", "--grid",
            "sigma=1.3,1.5,1.7", "--delta", "1e-5", "--workers", "1", "--progress"]
    assert main(argv) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == "sweep: 100%  ETA 0s" and all(line.startswith("sweep: ") for line in err)


def test_on_a_terminal_the_results_start_on_a_line_of_their_own(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True
    screen = Terminal()  # stdout and stderr on one terminal
    monkeypatch.setattr(sys, "stdout", screen)
    monkeypatch.setattr(sys, "stderr", screen)
    assert main(["epsilon", "--mechanism", "subsampled-gaussian", "--sigma", "1.25", "--q", "0.01",
                 "--steps", "30", "--delta", "1e-5"]) == 0  # a bar by default on a terminal
    pieces = [p.strip() for line in screen.getvalue().split("\n") for p in line.split("\r")]
    assert any(p.startswith("epsilon = ") for p in pieces) and any("epsilon: [" in p for p in pieces)
    assert not any("epsilon = " in p and "%" in p for p in pieces)
    last = screen.getvalue().split("\r")[-1]
    assert last.rstrip(" \n").endswith("100%  ETA 0s") and last.endswith("\n")


def test_a_stage_with_more_steps_than_expected_stays_below_99_percent():
    """Issue 44 defect 10: a query expecting one step whose work ran as many counted
    sub-stages showed 99 % (ETA 0 s) after its first. Here one expected step, then five
    sub-stages: the fraction after each of them grows and stays well below 0.99 until
    the query returns."""
    from dpaccount.progress import run, stage
    seen = []

    @stage("part")
    def part():
        pass

    def work():
        for _ in range(5):
            part()
    run("query", seen.append, work, steps=1)
    running = [p.fraction for p in seen[:-1]]
    assert running == sorted(running) and max(running) < 0.99, running
    assert running[-1] > 0.5 and seen[-1].fraction == 1.0
