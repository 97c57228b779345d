"""Judging a task: its category, the item outcome it gets, and the files that inform the verdict.

Takes the joined rows; gives a :class:`~..model.CompareResult` (:mod:`.classify`), the losing
side's verifier output (:mod:`.verifier_output`), and what the run's own files beside a side say:
aggregate metrics, coverage inventory, known flips, and whether the sides cover each other.
"""
