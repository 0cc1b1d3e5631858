"""Dominating pairs: the Gaussian, Laplace and finite pairs, the zoo's pairs,
and the transformers' rules for them (Poisson, subset, truncated and
with-replacement sampling, mixtures, the symmetric hull) and ``PairComposition``,
a mechanism's pairs per direction. No grid module is imported here.
"""
