"""A query leaves nothing in reference cycles: a grid or profile dropped from the caches
(``dpaccount.clear_cache``) is freed at once, by reference counting, and the next query
reuses its memory (a cycle keeps it, often megabytes, until the cyclic collector runs)."""
import gc

import dpaccount as dpa


def _left_in_cycles(query):
    """The dpaccount objects that only the cyclic collector would free after ``query`` and a
    cleared cache."""
    gc.collect()
    gc.disable()
    try:
        query()
        dpa.clear_cache()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        return sorted({type(o).__qualname__ for o in gc.garbage
                       if (getattr(type(o), "__module__", "") or "").startswith("dpaccount")})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_profiles_and_grids_hold_no_reference_cycles():
    sampled = dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.1), 256 / 60000)
    m = dpa.Composition()([sampled], [1000])
    assert _left_in_cycles(lambda: (m.get_approxDP(1e-5), m.get_approx_delta(1.0))) == []
