"""The characteristic-function representation (Zhu, Dong & Wang 2022): the
moment-generating function of each pld pair, its inversion, and
``method="cf"`` (an opt-in estimate).

Imports the core, the converters and pld's pairs.
"""
