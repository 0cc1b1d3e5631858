"""Grids and composition: one pair on a pessimistic or optimistic grid, the
FFT and direct transforms, heterogeneous composition with its Chernoff
tails, the grid cache, the accountant, the a-priori and online (odometer)
compositions.
"""
