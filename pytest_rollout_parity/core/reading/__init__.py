"""Reading a side: one rollouts file (plain or compressed) or its shards, each with its
`_failures.jsonl` sidecar, streamed into row facts and the side's key vote (which field names a
task). :mod:`.loading` is the entrance; :mod:`.parallel` reads the old side in a child meanwhile."""
