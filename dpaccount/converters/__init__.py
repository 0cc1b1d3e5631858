"""Converters: pure functions from a curve or a closed form to ε(δ) or δ(ε).

They import only the core (errors, validation, relations). A numeric converter
returns bounds or documents which way it errs.
"""
