"""The join: two sides' rows, each keyed by its own vote, labelled so that one task carries one
label, with the repairs of a join its key misleads; :mod:`.item_names` makes a label safe for node
ids, ``-k`` and ``--lf``."""
