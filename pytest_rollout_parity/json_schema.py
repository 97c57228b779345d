"""`python -m pytest_rollout_parity.json_schema`: the JSON summary's schema, as docs/json.md publishes it.

The schema is the summary's dataclasses' own (:func:`.core.reports.json_file.schema_text`), laid out for
reading, each object on one line when it fits.
"""

from .core.reports.json_file import schema_text

if __name__ == "__main__":
    print(schema_text())
