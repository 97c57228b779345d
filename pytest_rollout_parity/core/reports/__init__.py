"""Reports: one typed :class:`~.summary.Summary` of a comparison and what the run added, and every
rendering of it; :mod:`.wording` holds the words they share, so no two reports disagree.
"""
