"""Reading a side: one rollouts file (plain or compressed) or its shards, each with its
`_failures.jsonl` sidecar, streamed.

Takes a side's request (:class:`~.loaded_side.SideRequest`); gives a
:class:`~.loaded_side.LoadedSide`: each row reduced to its :class:`~..model.RowFacts` and the
side's key vote (:mod:`.key_vote`: which field names a task on this side, a field that names a
category passed over), taken as the rows stream by. :mod:`.loading` is the entrance;
:mod:`.parallel` reads the old side in a child interpreter meanwhile. Imports nothing from the
later stages.
"""
