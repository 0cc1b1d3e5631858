"""Transformers: callables that build a new ``Mechanism`` from mechanisms,
wiring one rule per representation (each rule lives in its representation's
folder). The public names are exported by ``dpaccount`` itself.
"""
