"""Reports: one typed :class:`~.summary.Summary` of a comparison and its run, and every rendering of it."""
