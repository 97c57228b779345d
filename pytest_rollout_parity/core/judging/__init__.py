"""Judging a task: its category, its item outcome, the losing side's verifier output, and what the
run's own files beside a side say (aggregate metrics, coverage inventory, known flips)."""
