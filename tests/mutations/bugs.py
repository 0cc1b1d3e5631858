"""Deliberate bugs in the numerics, each with the tests that must catch it (issue 18).

Each ``Bug`` is a realistic mistake: a rounding turned the unsafe way, tail
mass dropped, subsampling directions swapped, a bin off by one, the FFT noise
bound left out, a wrong relation accepted, a factor lost in a conversion, a
tilted window not re-centred. ``tests/mutations/run.py`` applies them one at
a time to a scratch copy of the package and runs the named tests, which must
fail. ``find`` must occur exactly once in ``module`` (checked by the default
suite, ``tests/mutations/test_bug_list.py``), so a refactor that moves the
code breaks the list loudly instead of letting it rot: update the snippet.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Bug:
    """Replace ``find`` (exactly once) by ``replace`` in ``module`` (relative to the
    repository root); ``tests`` (pytest node ids) must then fail."""

    name: str
    module: str
    find: str
    replace: str
    tests: tuple
    why: str


PLD = "dpaccount/pld/"
# tests that catch several bugs
CUT_SHORT = "tests/pld/test_discretise.py::test_a_grid_cut_short_keeps_its_tails"
RR_EXACT = "tests/pld/test_accountant.py::test_randomized_response_is_exact"
GRID = "tests/pld/test_grid.py"
COMPOSE = "tests/pld/test_compose.py"
SAMPLED = "tests/transformers/test_poisson_sampling.py"
CF_CERTIFIED = "tests/cf/test_certified.py"
BUGS = (
    # ---------------------------------------------------------------- discretisation
    Bug("ctd-tail-to-inf-dropped", PLD + "discretise.py",
        "p_inf=float(pair.p_inf + a[top])", "p_inf=float(pair.p_inf)",
        (CUT_SHORT,),
        "the pessimistic grid forgets the P-mass above its last point instead of sending it to +inf"),
    Bug("cell-errors-of-the-cell-only", PLD + "log_cells.py",
        "return cells, ends[:-1] + ends[1:] + 16 * _U * np.abs(cells), ends",
        "return cells, 16 * _U * np.abs(cells), ends",
        ("tests/pld/test_discretise.py::test_gaussian_grids_survive_log_ndtr_erring_its_documented_worst",),
        "a Gaussian cell's error taken as ulps of the cell, not the ulps of |log Φ| both its ends carry"),
    Bug("laplace-cells-by-cancellation", PLD + "pairs.py",
        "a = 0.5 * np.exp((hi - e0) / 2) * width",
        "a = 0.5 * (np.exp((hi - e0) / 2) - np.exp((lo - e0) / 2))",
        ("tests/pld/test_cell_errors.py::test_laplace_cells_within_their_bounds",),
        "a Laplace P-cell as the difference of its distribution function at both ends: errs by "
        "ulps of the function, not of the cell, beyond the bound the cell states"),
    Bug("monotone-cells-claim-8u", PLD + "pairs_zoo.py",
        "(a, err_a), (b, err_b) = self._cells(self._p, xs, True), self._cells(self._q, xs, True)",
        "(a, err_a), (b, err_b) = ((c, 8 * _U * c) for c in (self._cells(self._p, xs), self._cells(self._q, xs)))",
        ("tests/pld/test_discretise.py::test_monotone_loss_grids_survive_logcdf_erring_its_assumed_worst",),
        "a MonotoneLossPair cell (a difference of e^logcdf values) taken as accurate to 8 ulp of itself"),
    Bug("monotone-logcdf-error-forgotten", PLD + "pairs_zoo.py",
        "return [LOG_CDF_ULPS * _U * (np.abs(l) + 1) + m for l, m in zip((lc, ls), move)]",
        "return list(move)",
        ("tests/pld/test_cell_errors.py::test_monotone_loss_cells_within_their_bounds",),
        "a law's logcdf taken as exact at its (rounded) argument: only the argument's rounding is padded"),
    Bug("logistic-cells-claim-8u", PLD + "pairs_zoo.py",
        "slack = (24 + self._eps) * _U",
        "slack = 8 * _U",
        ("tests/pld/test_cell_errors.py::test_logistic_cells_within_their_bounds",),
        "a LogisticPair cell (three libm calls of 4 ulp and four roundings) taken as accurate to 8 ulp"),
    Bug("discrete-cells-logs-taken-exact", PLD + "pairs.py",
        "m * (e * (1 + e) + 8 * _U)",
        "m * 8 * _U",
        ("tests/pld/test_cell_errors.py::test_binomial_cells_within_their_bounds",),
        "a finite pair's cell error bound forgets its logs' errors (binom.logpmf: ulps of n log n)"),
    Bug("poisson-end-mass-error-dropped", PLD + "poisson_sampling.py",
        "end_err[cell] += p._end_mass_error()",
        "end_err[cell] += 0.0",
        ("tests/pld/test_cell_errors.py::test_poisson_end_mass_cell_within_its_bound",),
        "the base's mass at an infinite loss, landed in a finite cell of a Poisson pair, taken as exact"),
    Bug("atoms-off-by-one-bin", PLD + "discretise.py",
        "for idx, mass in ((below, down), (below + 1, up)):",
        "for idx, mass in ((below - 1, down), (below, up)):",
        (RR_EXACT,),
        "an atom's two shares land one grid point too low"),
    Bug("ctd-bottom-mass-dropped", PLD + "discretise.py",
        "    probs[run_first] += a[cell_first]       # below the first point: moved up to it\n", "",
        (CUT_SHORT,),
        "the pessimistic grid drops the P-mass below its first point instead of moving it up"),
    Bug("atoms-split-mirrored", PLD + "discretise.py",
        "share = np.expm1(below * step - loss) / math.expm1(-step)",
        "share = np.expm1(loss - below * step) / math.expm1(step)",
        ("tests/pld/test_accountant.py::test_binomial_against_exact_convolution",),
        "an off-grid atom split by (e^(ℓ−ε_j) − 1)/(e^h − 1): less than Connect-the-Dots sends up"),
    # ---------------------------------------------------------------- grid queries
    Bug("grid-delta-off-by-one", PLD + "grid.py",
        "m = np.floor(x - slack if self.pessimistic else x + slack).astype(np.int64) + 1 - self.offset",
        "m = np.floor(x - slack if self.pessimistic else x + slack).astype(np.int64) + 2 - self.offset",
        (RR_EXACT,),
        "δ(ε) starts summing one grid point above the first point beyond ε"),
    Bug("grid-sums-rounded-down", PLD + "grid.py",
        "sign = 1.0 if self.pessimistic else -1.0",
        "sign = -1.0 if self.pessimistic else 1.0",
        (GRID,),
        "the rounding allowance of the tail sums taken the unsafe way"),
    Bug("grid-epsilon-stepped-the-wrong-way", PLD + "grid.py",
        "eps = eps + (1.0 if self.pessimistic else -1.0) * (max(abs(eps), 1.0) * 8 * _U + 1e-300)",
        "eps = eps + (-1.0 if self.pessimistic else 1.0) * (max(abs(eps), 1.0) * 8 * _U + 1e-300)",
        (GRID,),
        "ε(δ) of a grid nudged towards the unsafe side when its cell solution misses δ"),
    # ---------------------------------------------------------------- composition
    Bug("fft-noise-bound-omitted", PLD + "compose.py",
        "np.maximum(values - err - below - above, 0.0)",
        "np.maximum(values - below - above, 0.0)",
        (COMPOSE,),
        "the optimistic grid's FFT bins clipped at 0 without the noise bound: clipping is not a bound"),
    Bug("tilted-fft-noise-bound-omitted", PLD + "transform.py",
        "probs = np.add(values, bin_err if pessimistic else -(bin_err + outside * math.exp(log_pad)))",
        "probs = np.add(values, bin_err if pessimistic else -outside * math.exp(log_pad))",
        (COMPOSE,),
        "the tilted transform's per-bin noise bound not subtracted from the optimistic grid"),
    Bug("window-upper-tail-dropped", PLD + "compose.py",
        "        extra_inf = above if pessimistic else 0.0\n        if pessimistic:\n            probs[0] += below\n    else:",
        "        extra_inf = 0.0\n        if pessimistic:\n            probs[0] += below\n    else:",
        (COMPOSE,),
        "the Chernoff bound of the mass above the FFT window is not counted at +inf"),
    Bug("direct-lower-tail-dropped", PLD + "transform.py",
        "        out[0] += below          # moved up to the window's bottom\n",
        "",
        (COMPOSE,),
        "exact convolution drops the mass below the window instead of moving it up"),
    Bug("composed-p-inf-rounded-down", PLD + "compose.py",
        "p_inf = min(1.0, -math.expm1(log_finite) * (1 + 16 * _U))",
        "p_inf = min(1.0, -math.expm1(log_finite) * (1 - 16 * _U))",
        ("tests/test_extremes.py::test_mass_at_infinity_is_rounded_up",),
        "1 − Π(1 − p_∞)^k rounded down"),
    Bug("delta-anchors-dropped", PLD + "profile.py",
        "best[sel] = np.minimum(best[sel], np.minimum(got, self._anchor(d, level)))",
        "best[sel] = np.minimum(best[sel], got)",
        ("tests/pld/test_profile.py::test_a_looser_finer_level_cannot_make_delta_rise",),
        "δ(ε) past a level change not held down by the level below's answer at its last ε"),
    Bug("optimistic-point-lowered-to-zero", PLD + "discretise_optimistic.py",
        "g0 - _KEEP * np.append(g0[1:], top)", "g0",
        ("tests/mechanisms/test_discrete.py::test_discrete_gaussian_with_pure_dp_is_certified",),
        "an optimistic grid point lowered all the way to 0 above an off-grid atom: every rarer loss above lost"),
    Bug("tilted-window-not-recentred", PLD + "compose.py",
        "new_a, new_b = max(lo, bottom), min(hi, max(jb, int(math.ceil(b / step))))",
        "new_a, new_b = ja, jb",
        (COMPOSE,),
        "the window of the tilted transform is the untilted one: the tilted mass aliases"),
    Bug("untilt-off-by-one", PLD + "transform.py",
        "factor = np.arange(first, first + n, dtype=float)",
        "factor = np.arange(first + 1, first + n + 1, dtype=float)",
        (COMPOSE,),
        "bins untilted with the factor of the bin above"),
    Bug("chernoff-delta-drops-p-inf", PLD + "chernoff.py",
        "return np.minimum(tail + p_inf, 1.0).reshape(eps.shape)", "return np.minimum(tail, 1.0).reshape(eps.shape)",
        ("tests/pld/test_chernoff_bound.py::test_the_bound_counts_the_mass_at_infinity",
         "tests/pld/test_chernoff_bound.py::test_the_chernoff_bound_is_above_the_exact_delta_and_not_vacuous"),
        "the Chernoff bound that lets a direction skip its grids forgets P(L = ∞): below δ of approximate DP"),
    Bug("log-mgf-rounding-unpadded", PLD + "chernoff.py",
        "        return e0 + e1 * np.abs(lam)", "        return 0.0 * e0 * np.abs(lam)",
        ("tests/pld/test_batch.py::test_hinted_quantile_is_a_chernoff_level_near_the_best",),
        "Chernoff tails taken at the computed K, whose n-term sums err by up to n·u of themselves"),
    # ---------------------------------------------------------------- Poisson subsampling
    Bug("poisson-directions-swapped", "dpaccount/transformers/poisson_sampling.py",
        "PairComposition.single(PoissonRemovePair(base.remove[0][0], self.q),\n"
        "                                      PoissonAddPair(base.add[0][0], self.q))",
        "PairComposition.single(PoissonRemovePair(base.add[0][0], self.q),\n"
        "                                      PoissonAddPair(base.remove[0][0], self.q))",
        (SAMPLED,),
        "the remove rule applied to the base's add pair and vice versa"),
    Bug("poisson-add-direction-lost", "dpaccount/transformers/poisson_sampling.py",
        "                                      PoissonAddPair(base.add[0][0], self.q))",
        "                                      PoissonRemovePair(base.add[0][0], self.q))",
        (SAMPLED,),
        "both directions built with the remove rule (the add direction's loss is forgotten)"),
    Bug("poisson-remove-p-inf-lost", PLD + "poisson_sampling.py",
        "return self._q * self._base.p_inf",
        "return self._base.p_inf if self._q == 1.0 else 0.0",
        (SAMPLED,),
        "the remove pair's atom at +inf handled like the add pair's (moved to a finite loss)"),
    Bug("poisson-edges-q-inverted", PLD + "poisson_sampling.py",
        "x = em1 / q", "x = em1 * q",
        ("tests/pld/test_pairs.py::test_subsampled_gaussian_pairs",),
        "the base-loss cell edges of the remove pair use q for 1/q"),
    # ---------------------------------------------------------------- converters
    Bug("hockey-stick-bracket-end-swapped", "dpaccount/converters/hockey_stick.py",
        "return hi if upper else lo", "return lo if upper else hi",
        ("tests/converters/test_hockey_stick.py",),
        "the bisection returns the end of its bracket where the curve is still above δ"),
    Bug("rdp-to-eps-lost-factor", "dpaccount/converters/rdp_to_dp.py",
        "- (log_delta + np.log(a)) / (a - 1.0)", "- (log_delta + np.log(a)) / a",
        ("tests/rdp/test_curve.py::test_rdp_to_epsilon_matches_independent_conversion",),
        "RDP → (ε, δ): log(1/δ) divided by α instead of α − 1"),
    Bug("rdp-to-delta-lost-factor", "dpaccount/converters/rdp_to_dp.py",
        "out = (a - 1.0) * (curve(a) - eps + np.log1p(-1.0 / a)) - np.log(a)",
        "out = (curve(a) - eps + np.log1p(-1.0 / a)) - np.log(a)",
        ("tests/rdp/test_curve.py::test_rdp_to_delta_inverts_rdp_to_epsilon",),
        "RDP → δ: the factor α − 1 of the exponent lost"),
    # ---------------------------------------------------------------- RDP
    Bug("subsampled-rdp-lost-factor-3", "dpaccount/rdp/poisson_sampling.py",
        "_LOG3 + y + np.log1p(-np.exp(-y) / 3)", "y + np.log1p(-np.exp(-y) / 3)",
        ("tests/rdp/test_poisson_sampling.py::test_bound_matches_theorem_statement",),
        "Zhu & Wang's factor 3 on the l ≥ 3 terms lost"),
    Bug("subsampled-gaussian-rdp-exponent-halved", "dpaccount/rdp/poisson_sampling.py",
        "e = k * (k - 1) / (2 * sigma * sigma)", "e = k * (k - 1) / (4 * sigma * sigma)",
        ("tests/rdp/test_poisson_sampling.py::test_integer_orders_match_binomial_oracle",),
        "the exponent k(k−1)/(2σ²) of the binomial sum halved"),
    # ---------------------------------------------------------------- relations
    Bug("group-relation-accepted-as-one-step", "dpaccount/relations.py",
        "elif m.relation != first.relation:",
        "elif str(m.relation).split()[-1] != str(first.relation).split()[-1]:",
        ("tests/test_relations.py::test_composing_a_group_guarantee_with_a_one_step_one_raises",),
        "composition compares only the base relation: a 2-fold guarantee composes with 1-step ones"),
    Bug("group-of-group-adds", "dpaccount/relations.py",
        "return GroupRelation(relation.base, relation.k * k)",
        "return GroupRelation(relation.base, relation.k + k)",
        ("tests/test_relations.py::test_groups_of_groups_multiply_their_relation",),
        "k steps of a j-fold relation recorded as j + k steps"),
    # ---------------------------------------------------------------- characteristic function
    Bug("cf-error-dropped", "dpaccount/cf/queries.py",
        "worst = max(worst, min(max(ans.delta + side * ans.error, 0.0), 1.0))",
        "worst = max(worst, min(max(ans.delta, 0.0), 1.0))",
        (CF_CERTIFIED,),
        "cf's δ(ε) reported without its error bound"),
    Bug("cf-lattice-error-dropped", "dpaccount/cf/inversion.py",
        "err = e_a + e_r + 8 * U", "err = e_r + 8 * U",
        (CF_CERTIFIED,),
        "the error bound of the lattice part (aliasing over one period, snapping) left out"),
    Bug("cf-lattice-snapped-loosely", "dpaccount/cf/lattice.py",
        "if any(abs(other / g - round(other / g)) > 1e-11 for other in steps):",
        "if any(abs(other / g - round(other / g)) > 1e-2 for other in steps):",
        (CF_CERTIFIED,),
        "atoms within 1 % of a common lattice snapped onto it (their distance not in the bound)"),
    # ---------------------------------------------------------------- f-DP
    Bug("gdp-tradeoff-rounded-up", "dpaccount/converters/fdp.py",
        "out = out * (1.0 - slack if lower else 1.0 + slack)",
        "out = out * (1.0 + slack if lower else 1.0 - slack)",
        ("tests/converters/test_fdp.py::test_gdp_tradeoff_is_g_mu_rounded_both_ways",),
        "the lower Gaussian trade-off curve rounded up"),
    Bug("gdp-mu-checked-at-the-points-only", "dpaccount/converters/fdp.py",
        "np.all(d_right <= tangent + tail)", "np.all(d_right <= base + tail)",
        ("tests/converters/test_fdp.py::test_gdp_mu_holds_on_the_chords_between_the_points",),
        "the certified μ checks δ_μ at the profile's points, not on the cells between them"),
)
