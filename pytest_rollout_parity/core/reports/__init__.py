"""Reports: one typed :class:`~.summary.Summary` and every rendering of it; :mod:`.wording` holds the
words they share, so no two reports disagree."""
