"""The privacy-loss-distribution representation: dominating pairs (and the
transformers' rules for them), their pessimistic and optimistic grids, FFT
composition, the grid planner and online composition.

Imports the core and the converters only; never mechanisms or transformers.
"""
