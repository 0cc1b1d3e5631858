"""The characteristic-function representation (Zhu, Dong & Wang 2022): the
moment-generating function of each pld pair, its inversion, and
``method="cf"`` (opt-in; certified where every error term is a bound, an
estimate otherwise: docs/cf_error_analysis.md).

Modules: ``basic`` and ``poisson`` (M of the pairs), ``characteristic`` (the
dispatch over them), ``contour`` (the line and the step), ``window``,
``line`` (the samples and windowed sums), ``lattice`` (atoms on a lattice),
``inversion`` (δ(ε) and ε(δ) of a direction), ``queries``.

Imports the core, the converters and pld's pairs.
"""
