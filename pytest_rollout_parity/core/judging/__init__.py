"""Judging a task: its category and its item's outcome (:mod:`.classify`, :mod:`.verdicts`), its
evidence, and what the run's own files beside a side say (:mod:`.companions`, :mod:`.completeness`)."""
