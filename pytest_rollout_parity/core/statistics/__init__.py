"""Statistics: is a difference between the two sides noise?

Takes a :class:`~..model.CompareResult`; gives the paired statistics over the compared tasks, each
flip's chance p-value from its repeats, and margin mode's decisions (the equivalence test and which
flips are not noise). Pure ``math``: no numpy or scipy at run time.
"""
