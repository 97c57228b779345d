"""Reading a side (one rollouts file or its shards, each with its sidecar) into row facts and its key
vote, streamed; :mod:`.loading` is the entrance, :mod:`.parallel` reads the old side in a child."""
