"""Mechanism specs: every mechanism and transformer round-trips through plain
JSON and answers identically; hostile documents are refused with one error
naming the path inside the document, and nothing they name is imported."""
import io
import json
import sys

import pytest
from scipy import stats

import dpaccount as dpa
from dpaccount import (Composition, ContinuousMechanism, GaussianMechanism, LaplaceMechanism, PoissonSampling,
                       RandomizedResponse)
from dpaccount.specs import MAX_DEPTH, MAX_LIST, loads

from api.test_values import zoo

ZOO = zoo()


@pytest.mark.parametrize("name", sorted(ZOO))
def test_every_mechanism_round_trips_through_json_and_answers_identically(name):
    m = ZOO[name]()
    spec = m.to_spec()
    assert spec["dpaccount_spec"] == 1 and isinstance(spec["type"], str)
    text = json.dumps(spec, allow_nan=False)  # plain JSON: no objects, no NaN
    back = dpa.from_spec(json.loads(text))
    assert type(back) is type(m) and back == m and hash(back) == hash(m)
    assert back.relation == m.relation and back.name == m.name
    assert back.to_spec() == spec
    assert back.get_approxDP(1e-5) == m.get_approxDP(1e-5)
    assert back.get_approx_delta(1.0) == m.get_approx_delta(1.0)


def test_dump_and_load_through_a_path_and_a_file_object(tmp_path):
    m = Composition()([PoissonSampling()(GaussianMechanism(1.1), 0.01), LaplaceMechanism(3.0)], [100, 2])
    path = tmp_path / "released.json"
    dpa.dump(m, path)
    assert dpa.load(path) == m and dpa.load(str(path)) == m
    buf = io.StringIO()
    dpa.dump(m, buf)
    assert dpa.load(io.StringIO(buf.getvalue())) == m
    assert json.loads(path.read_text())["parts"][1] == {
        "mechanism": {"type": "LaplaceMechanism", "b": 3.0, "sensitivity": 1.0}, "count": 2}


def test_a_continuous_mechanism_outside_the_safe_laws_has_no_spec():
    m = ContinuousMechanism(stats.hypsecant(loc=1.0), stats.hypsecant())
    with pytest.raises(TypeError, match="no spec.*norm"):
        m.to_spec()
    ok = ContinuousMechanism(stats.logistic(loc=0.5), stats.logistic())
    assert dpa.from_spec(ok.to_spec()) == ok


def test_a_user_subclass_has_no_spec():
    class Mine(GaussianMechanism):
        pass
    with pytest.raises(TypeError, match="Mine.*has no spec"):
        Mine(1.0).to_spec()


def _dpsgd_spec(**gaussian):
    return {"dpaccount_spec": 1, "type": "Composition", "parts": [
        {"mechanism": {"type": "LaplaceMechanism", "b": 1.0}, "count": 2},
        {"mechanism": {"type": "PoissonSampling", "q": 0.01,
                       "mechanism": {"type": "GaussianMechanism", **gaussian}}, "count": 10}]}


@pytest.mark.parametrize("spec,error,message", [
    (_dpsgd_spec(sigma=-1.0), ValueError,
     r"^spec\.parts\[1\]\.mechanism\.mechanism\.sigma: sigma must lie in \(0\.0, inf\), got -1\.0$"),
    (_dpsgd_spec(sigma="1.1"), TypeError, r"^spec\.parts\[1\]\.mechanism\.mechanism\.sigma: must be a number"),
    (_dpsgd_spec(sigma=True), TypeError, r"^spec\.parts\[1\]\.mechanism\.mechanism\.sigma: must be a number"),
    (_dpsgd_spec(sigma=1.0, shell="rm -rf /"), ValueError,
     r"^spec\.parts\[1\]\.mechanism\.mechanism: unknown key 'shell' for GaussianMechanism"),
    (_dpsgd_spec(), ValueError, r"^spec\.parts\[1\]\.mechanism\.mechanism: GaussianMechanism needs 'sigma'"),
    (_dpsgd_spec(sigma=1.0, relation="sideways"), ValueError,
     r"^spec\.parts\[1\]\.mechanism\.mechanism\.relation: relation must be one of"),
    (_dpsgd_spec(sigma=10 ** 30), ValueError, r"mechanism\.sigma: number out of range"),
    ({"dpaccount_spec": 1, "type": "os.system", "command": "echo pwned"}, ValueError,
     r"^spec\.type: unknown mechanism type 'os\.system'"),
    ({"dpaccount_spec": 1, "type": "dpaccount.mechanisms.standard.GaussianMechanism", "sigma": 1.0},
     ValueError, r"^spec\.type: unknown mechanism type 'dpaccount\.mechanisms"),
    ({"dpaccount_spec": 1, "type": "__import__", "name": "os"}, ValueError, r"unknown mechanism type"),
    ({"dpaccount_spec": 1, "type": "Composition", "parts": [{"mechanism": {"type": "GDPMechanism", "mu": 1.0},
                                                              "count": 10 ** 40}]}, ValueError,
     r"^spec\.parts\[0\]\.count: whole number out of range"),
    ({"dpaccount_spec": 1, "type": "Composition", "parts": [{"mechanism": {"type": "GDPMechanism", "mu": 1.0},
                                                              "count": 0}]}, ValueError,
     r"^spec\.parts\[0\]\.count: must be at least 1, got 0$"),
    ({"dpaccount_spec": 1, "type": "Composition", "parts": []}, ValueError, r"^spec\.parts: must not be empty"),
    ({"dpaccount_spec": 1, "type": "Composition", "parts": {"a": 1}}, TypeError, r"^spec\.parts: must be a list"),
    ({"dpaccount_spec": 1, "type": "DiscreteMechanism", "p_probs": [0.5] * (MAX_LIST + 1), "q_probs": [1.0]},
     ValueError, r"^spec\.p_probs: list too long"),
    ({"dpaccount_spec": 1, "type": "ContinuousMechanism", "p_dist": {"law": "os.system", "args": []},
      "q_dist": {"law": "norm"}}, ValueError, r"^spec\.p_dist\.law: unknown law 'os\.system'"),
    ({"dpaccount_spec": 2, "type": "GDPMechanism", "mu": 1.0}, ValueError, r"unsupported schema version 2"),
    ({"type": "GDPMechanism", "mu": 1.0}, ValueError, r"missing the schema version key"),
    ({"dpaccount_spec": 1, "type": "PoissonSampling", "q": 0.1,
      "mechanism": {"type": "GaussianMechanism", "sigma": 1.0, "relation": "replace-one"}},
     ValueError, r"^spec\.mechanism: mechanism must be a mechanism for add/remove"),
])
def test_a_bad_document_gets_one_error_naming_its_path(spec, error, message):
    with pytest.raises(error, match=message):
        dpa.from_spec(spec)


def test_deep_nesting_is_refused_before_it_costs_anything():
    node = {"type": "GDPMechanism", "mu": 1.0}
    for _ in range(MAX_DEPTH + 5):
        node = {"type": "Discretise", "mechanism": node}
    with pytest.raises(ValueError, match=r"nested too deeply"):
        dpa.from_spec({"dpaccount_spec": 1, **node})
    cyclic = {"type": "Discretise"}
    cyclic["mechanism"] = cyclic
    with pytest.raises(ValueError, match=r"nested too deeply"):
        dpa.from_spec({"dpaccount_spec": 1, **cyclic})
    # a JSON text nested far deeper than the recursion limit
    text = '{"dpaccount_spec": 1, "type": "Discretise", "mechanism": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(ValueError, match=r"nested too deeply|must be an object"):
        dpa.load(io.StringIO(text))


@pytest.mark.parametrize("text,message", [
    ('{"dpaccount_spec": 1, "type": "GDPMechanism", "mu": NaN}', "NaN is not a valid"),
    ('{"dpaccount_spec": 1, "type": "GDPMechanism", "mu": Infinity}', "Infinity is not a valid"),
    ('{"dpaccount_spec": 1, "type": "GDPMechanism", "mu": 1e999}', "out of range"),
    ('{"dpaccount_spec": 1, "type": "GDPMechanism", "mu": ' + "9" * 5000 + "}", "too large"),
    ('{"dpaccount_spec": 1, "type": "GDPMechanism", "mu": 1.0', "not valid JSON"),
])
def test_hostile_json_text_is_refused(text, message):
    with pytest.raises(ValueError, match=message):
        dpa.load(io.StringIO(text))


def test_loading_imports_nothing_the_document_names(monkeypatch):
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    for kind in ("colorsys", "colorsys.rgb_to_hsv", "colorsys:rgb_to_hsv"):
        with pytest.raises(ValueError):
            dpa.from_spec({"dpaccount_spec": 1, "type": kind})
    assert "colorsys" not in sys.modules


def test_from_spec_validates_its_argument():
    with pytest.raises(TypeError, match="spec must be a dict"):
        dpa.from_spec('{"type": "GDPMechanism"}')
    with pytest.raises(TypeError, match="mechanism must be a dpaccount Mechanism"):
        dpa.dump("gaussian", io.StringIO())
    assert loads('{"a": [1, 2.5]}') == {"a": [1, 2.5]}
    assert dpa.from_spec(RandomizedResponse(0.6).to_spec()) == RandomizedResponse(0.6)
