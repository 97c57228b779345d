"""Task identity and the join: which field names a task on each side, labels, and the joined task list.

Takes two loaded sides; gives each side's key (and why it was chosen), the task label of every row,
and the labels shared by both sides. :mod:`.item_names` makes a label safe for node ids, ``-k`` and
``--lf``; :mod:`.prompts` labels a task by its prompt when no id field names it; :mod:`.inference`
ranks the id fields inferred from the rows by what both sides share, and finds a task's prompt on a
side whose rows of one task index differ (per-rollout prompts).
"""
