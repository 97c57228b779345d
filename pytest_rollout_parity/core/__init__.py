"""The classification core: reading rollout files, joining tasks, classifying them, the summary.

Plain Python: nothing here imports pytest, pluggy or pydantic (the JSON fast path is
``pydantic_core.from_json``, which the default install brings), so the core runs anywhere and a
test proves it by importing every module where those imports fail.
"""
