"""Reports: the summary as typed data and every rendering of it.

Takes a :class:`~..model.CompareResult` and what the run added (:class:`~.summary.RunInfo`); gives
one :class:`~.summary.Summary`, and from it the terminal section, the JSON file, the Markdown job
summary, pytest-html fragments and GitHub annotations, and each item's default outcome and failure
message (:mod:`.item_outcome`). :mod:`.wording` holds the words they share, so no two reports
disagree.
"""
