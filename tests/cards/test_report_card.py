"""The privacy report card (``dpaccount.report``, ``cards/``): its numbers are the queries'
certified intervals, its HTML is standalone (no script, no network), it renders without
matplotlib (tables only, said so), and the command line writes it."""
import json
import re

import mpmath as mp
import numpy as np
import pytest

import dpaccount as dp
from dpaccount.cli import main

DPSGD = dp.Composition()([dp.PoissonSampling()(dp.GaussianMechanism(sigma=1.1), 256 / 60000)], [14063])


@pytest.fixture(scope="module")
def gaussian_card():
    return dp.report(dp.GaussianMechanism(2.0))


def test_the_card_holds_the_queries_certified_intervals(gaussian_card):
    m, card = dp.GaussianMechanism(2.0), gaussian_card
    eps = m.get_approxDP_bounds(np.array([r.at for r in card.epsilon]))
    assert [r.upper for r in card.epsilon] == list(eps.upper) and [r.lower for r in card.epsilon] == list(eps.lower)
    tpr = m.get_tpr_bounds(np.array([r.at for r in card.tpr]))
    assert [r.upper for r in card.tpr] == list(tpr.upper)
    exact = 2 * mp.ncdf(mp.mpf(0.25)) - 1  # 2Φ(μ/2) − 1 at μ = 1/2
    assert card.advantage.lower <= exact <= card.advantage.upper
    assert card.mu == 0.5 and card.clt_mu is None and card.approximate == () and card.unavailable == ()
    assert all(r.certified for r in card.rows) and card.methods == ("analytic",) and card.steps == ()
    assert json.loads(card.spec)["type"] == "GaussianMechanism"


def _standalone(text):
    assert text.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in text
    assert "<script" not in text.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text), "a reference to another resource"
    assert not re.search(r"@import|url\(\s*['\"]?https?:", text)


def test_the_html_is_standalone_with_inline_svg(gaussian_card, tmp_path):
    pytest.importorskip("matplotlib")
    path = gaussian_card.to_html(str(tmp_path / "card.html"))
    text = open(path, encoding="utf-8").read()
    _standalone(text)
    assert text.count("<svg") == 2 and "Figures omitted" not in text
    assert "Nothing: every number in the tables is a certified bound." in text


def test_without_figures_the_card_has_its_tables_and_says_so(gaussian_card):
    text = gaussian_card.html(figures=False)
    _standalone(text)
    assert "<svg" not in text and "Figures omitted" in text and "TPR upper" in text


def test_without_matplotlib_the_card_says_why(gaussian_card, monkeypatch):
    import dpaccount.cards.html as page
    monkeypatch.setattr(page, "matplotlib_available", lambda: False)
    text = gaussian_card.html()
    assert "<svg" not in text and "pip install &#x27;dpaccount[plot]&#x27;" in text
    with pytest.raises(ImportError, match=r"\[plot\]"):
        gaussian_card.html(figures=True)


def test_a_mechanism_without_pairs_keeps_its_upper_bounds_and_the_reasons():
    card = dp.report(dp.ZCDPMechanism(rho=0.5))
    assert card.epsilon and all(r.lower is None and not r.certified for r in card.epsilon)
    assert card.tpr == () and card.advantage is None and card.alphas is None
    assert any("no dominating pair" in u for u in card.unavailable)
    assert any("RDP" in a for a in card.approximate)
    text = card.html(figures=False)
    assert "Not available" in text and "What is approximate" in text


def test_dpsgd_card_labels_the_clt_as_approximate():
    card = dp.report(DPSGD, fprs=(0.01,), priors=(0.5,), deltas=(1e-5,), points=11)
    assert card.clt_mu is not None and any("approximation" in a for a in card.approximate)
    assert card.tpr[0].lower <= card.tpr[0].upper and card.methods == ("pld",) and card.steps
    assert all(r.certified for r in card.rows)


@pytest.mark.parametrize("bad, match", [(dict(accuracy=0.0), "accuracy"), (dict(fprs=(1.5,)), "fprs"),
                                        (dict(priors=(-0.1,)), "priors"), (dict(points=1), "points")])
def test_bad_settings_are_refused_by_name(bad, match):
    with pytest.raises(ValueError, match=match):
        dp.report(dp.GaussianMechanism(1.0), **bad)


def test_report_refuses_a_non_mechanism():
    with pytest.raises(TypeError, match="mechanism"):
        dp.report("gaussian")


def test_the_command_line_writes_the_card(tmp_path, capsys):
    spec = tmp_path / "m.json"
    dp.dump(dp.GaussianMechanism(2.0), str(spec))
    out = tmp_path / "card.html"
    assert main(["report", "--spec", str(spec), "--html", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out and "Privacy report" in out.read_text(encoding="utf-8")
    out2 = tmp_path / "sgd.html"
    assert main(["dpsgd", "--noise-multiplier", "2", "--batch-size", "100", "--dataset-size", "1000",
                 "--epochs", "1", "--html", str(out2)]) == 0
    assert "Poisson-sampled" in out2.read_text(encoding="utf-8")
    assert main(["dpsgd", "--noise-multiplier", "2", "--batch-size", "100", "--dataset-size", "1000",
                 "--epochs", "1"]) == 2  # neither a query nor --html
