"""The join (:mod:`.join`): both sides' rows labelled so that one task carries one label; the labels
made safe for node ids, ``-k`` and ``--lf`` (:mod:`.item_names`)."""
