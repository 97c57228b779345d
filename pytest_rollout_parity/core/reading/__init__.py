"""Reading a side: one rollouts file (plain or compressed) or its shards, each with its
`_failures.jsonl` sidecar, streamed into a :class:`~.loaded_side.LoadedSide` (row facts and key
vote). :mod:`.loading` is the entrance; :mod:`.parallel` reads the old side in a child interpreter
meanwhile. Imports nothing from the later stages.
"""
