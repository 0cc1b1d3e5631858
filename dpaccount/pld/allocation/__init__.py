"""Random allocation's epochs: one epoch's finite pairs from the base pair's
likelihood-ratio cells (linear or geometric lattices), the law of the epoch's
sum (FFT, tilted tails, one large jump), its minorant and the lower ends'
attained witnesses. Above the grids (it composes on them), below the profiles.
"""
