"""Statistics: is a difference between the two sides noise? Pure ``math``: no numpy or scipy at run time."""
