"""The join: two sides' rows, each keyed by its own vote, labelled so one task carries one label.

Takes two loaded sides, each with the key its reading chose (:mod:`..reading.key_vote`); gives the
key each side is joined on (an inferred id field chosen by what both sides share), the task label
of every row and the labels shared by both sides, with the repairs of a join its key misleads
(:mod:`.join`). :mod:`.item_names` makes a label safe for node ids, ``-k`` and ``--lf``.
"""
