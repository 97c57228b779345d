"""The join: two sides' rows labelled so that one task carries one label (:mod:`.join`), each label
safe for node ids, ``-k`` and ``--lf`` (:mod:`.item_names`)."""
