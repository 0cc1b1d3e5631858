"""Dominating pairs: the Gaussian, Laplace and finite pairs, the zoo's pairs,
and the transformers' rules for them (Poisson, subset, truncated and
with-replacement sampling, random allocation, mixtures, the symmetric hull).
"""
