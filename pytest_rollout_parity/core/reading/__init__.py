"""Reading a side: one rollouts file (plain or compressed) and its `_failures.jsonl` sidecar, streamed.

Takes a side's request (:class:`~.side_request.SideRequest`: its file or shards, the join field
and agent asked for, the names its errors cite); gives a :class:`~.loaded_side.LoadedSide`: each
row reduced to its :class:`~..model.RowFacts` (reward, mask reason, agent error, where the row
sits) and the side's key vote (:mod:`.key_vote`: which field names a task on this side, a field
that names a category passed over, and each row's :mod:`.task_idents` ident, a prompt reduced to its :mod:`.prompt_labels` label), taken as the rows stream by. :mod:`.loading` is the entrance: a file's lines are parsed by
:mod:`.jsonl_lines` and fed through the side's builder by :mod:`.feeding`, the sidecar's records
kept by :mod:`.sidecar`'s rules; superseded attempts are left out here. The old side may be read
by a child interpreter at the same time (:mod:`.parallel`, :mod:`.child`), and a loaded side
is kept as plain values (:mod:`.snapshot`) in the rerun cache, which xdist workers read too. Imports nothing from
the later stages.
"""
