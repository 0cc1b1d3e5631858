"""Profile queries: the certified privacy profile sized by the question (its
plan and its per-step profiles), exact sums of small finite compositions,
and the attained compositions that give certified lower ends.
"""
