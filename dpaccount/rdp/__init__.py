"""The Rényi-DP representation: RDP curves, their closed forms, and the
rules of the transformers (Poisson and subset sampling) for RDP.

Imports the core and the converters only.
"""
