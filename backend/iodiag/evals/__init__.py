"""Evaluations of iodiag against ground truth.

``triggers``: run the analysis engine over the labeled scenario corpus (``evals/scenarios``) and
score every finding code (precision, recall, F1) against what each scenario's program makes true.
"""
