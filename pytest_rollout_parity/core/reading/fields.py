"""Every row field the core reads, declared once (docs/semantics.md says what each means); paths
are dotted (:func:`.row_facts.lookup`). Both readers load :data:`LOAD_FIELDS`, so adding a field to
a group below is all it takes for both to see it; fields read later, from the full row, are not."""

from __future__ import annotations

from typing import Optional

# --- task identity -------------------------------------------------------------------------

#: Join-field candidates, in the order they are tried. Append, never reorder: an earlier field
#: that every row carries decides the join of existing files.
KEY_CANDIDATES: tuple[str, ...] = (
    "_ng_task_id",
    "task_name",
    "task_id",
    "verifier_metadata.task_id",
    "verifier_metadata.task_name",
    "verifier_metadata.instance_id",
    "verifier_metadata.id",
    # Real shapes appended later: the legacy harbor_agent keeps the task folder name only in its
    # trial metadata, anyterminal and anyswe only in the request metadata.
    "metadata.task_name",
    "responses_create_params.metadata.task_name",
    "responses_create_params.metadata.instance_id",
)

#: NeMo Gym's stamp of the input row a rollout came from (restarts at 0 in every run).
TASK_INDEX = "_ng_task_index"
#: Where a row carries its task's prompt (hashed into a label only when a side is keyed on it).
PROMPT = "responses_create_params.input"
#: What identifies a task when no id candidate is on every row, in the order tried.
IDENTITY_FALLBACKS: tuple[str, ...] = (TASK_INDEX, PROMPT)
# --- identity fields inferred from the rows ------------------------------------------------

#: Where NeMo Gym producers put a task's own metadata, whose scalar fields may name the task too.
METADATA_OBJECTS: tuple[str, ...] = ("metadata", "verifier_metadata", "responses_create_params.metadata")
#: At most this many inferred candidates a side (the first by place and name): each costs a reference a row.
MAX_INFERRED = 12
#: A longer string, or one holding whitespace, is free text: it behaves like a prompt, not an id.
MAX_ID_CHARS = 200
#: Words of a field name that say it holds an outcome or a per-rollout fact, never a task's identity.
OUTCOME_WORDS: frozenset[str] = frozenset(
    # outcomes and what was judged
    "reward rewards score scores answer answers response responses output outputs generation completion result "  # noqa: SIM905 - a word list
    "results prediction predicted pred extracted judge verdict correct passed pass success accuracy error errors status "
    # counts, costs and times
    "count num total tokens cost time timestamp created updated duration elapsed latency date "
    # what names one execution, its producer or its content
    "rollout attempt run trial sample request call session trace seed step turn episode model agent worker job "
    "hash sha sha256 md5".split()
)
#: What an id field's name says: `id`, `uuid`, `guid`, or a name ending in one (`scenario_id`, `instanceId`).
ID_SUFFIXES: tuple[str, ...] = ("id", "uuid", "guid")


def names_an_identity(path: str) -> bool:
    """A field name that says it holds an id and no outcome (docs/semantics.md, "Inferred id fields")."""
    name = path.rsplit(".", 1)[-1]
    # its words: split at `_`, `-`, `/`, spaces and lower-to-upper case changes
    spaced = "".join(f" {ch}" if ch.isupper() and i and name[i - 1].islower() else ch for i, ch in enumerate(name))
    words = spaced.lower().replace("-", " ").replace("_", " ").replace("/", " ").split()
    if not words or words[-1] not in ID_SUFFIXES:
        return False
    return not any(word in OUTCOME_WORDS for word in words[:-1])


def is_id_value(value: object) -> bool:
    """A scalar that can name a task: an integer, or a short string without whitespace."""
    if isinstance(value, str):
        return 0 < len(value) <= MAX_ID_CHARS and not any(ch.isspace() for ch in value)
    return isinstance(value, int) and not isinstance(value, bool)


def inferred_candidates(row: dict[str, object], known: frozenset[str]) -> tuple[str, ...]:
    """The fields beyond ``known`` that may name the row's task: top level, then :data:`METADATA_OBJECTS`."""
    found: list[str] = []
    containers: list[tuple[str, object]] = [("", row)]
    for path in METADATA_OBJECTS:
        node: object = row
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        containers.append((path + ".", node))
    for prefix, node in containers:
        if not isinstance(node, dict):
            continue
        for name in sorted(key for key in node if isinstance(key, str)):  # rows given in memory may hold others
            path = prefix + name
            if (
                not name.startswith("_ng_")
                and path not in known
                and "." not in name
                and names_an_identity(path)
                and is_id_value(node[name])
            ):
                found.append(path)
    return tuple(found[:MAX_INFERRED])


#: Free-text fields that may say what a task asks where a side's messages are the same on every row
#: (audiobench's `question`: its audio is elsewhere), in the order tried; read only on such a side.
PROMPT_FIELDS: tuple[str, ...] = ("question", "problem", "instruction", "prompt", "query")

# --- the reward and why a row does not count -----------------------------------------------

REWARD = "reward"
MASK_SAMPLE = "mask_sample"
FAILURE_KIND = "failure_kind"
#: Old builds of judge servers (gdpval, aalcr) wrote a reward-0 main row with this set when the
#: judge's answer could not be read: no verdict, masked wherever it appears.
INVALID_JUDGE = "invalid_judge_response"
#: A sidecar record of the newest collector for a rollout left out on purpose: masked, never scored.
OMITTED = "_ng_omitted"
#: The token-id capture's health (`nemo_gym/token_id_capture/delivery.py`); its masks: :func:`.row_facts.training_mask`.
TOKEN_CAPTURE = "_ng_token_capture"

# --- agent-level errors reported on a scored row -------------------------------------------

#: The legacy free-text error (any non-empty value; its last non-blank line is shown).
ERROR = "error"
#: An object whose truthy ``*error_type`` entries name an agent error.
RESPONSE_METADATA = "response.metadata"
#: The legacy `harbor_agent`'s 0/1 counters of agent failures; 1 (or true) is an agent error.
AGENT_ERROR_COUNTERS: tuple[str, ...] = (
    "context_length_exceeded_error",
    "memory_limit_exceeded_error",
    "agent_timeout_error",
)
#: anyswe: true when the agent ran out of time.
AGENT_TIMED_OUT = "agent_timed_out"
#: false on a reward-0 row: the evaluation did not run (an infrastructure failure, not a real 0).
EVALUATION_COMPLETED = "evaluation_completed"
#: browsecomp's error text.
AGENT_ERROR_TEXT = "agent_error"
AGENT_ERROR_FIELDS = (
    ERROR,
    RESPONSE_METADATA,
    *AGENT_ERROR_COUNTERS,
    AGENT_TIMED_OUT,
    EVALUATION_COMPLETED,
    AGENT_ERROR_TEXT,
)

#: NeMo Gym's stamp of the agent (a side holding several agents compares one of them).
AGENT_REF = "agent_ref"
AGENT_NAME = "agent_ref.name"

# --- the collector's stamps and its failures sidecar ---------------------------------------

ROLLOUT_INDEX = "_ng_rollout_index"
FAILURE_CLASS = "_ng_failure_class"
FAILURE_RECORD = "_ng_failure_record"
#: Fields only a failure record carries: such a row that names no task is anonymous.
FAILURE_MARKERS: tuple[str, ...] = (FAILURE_CLASS, FAILURE_RECORD)
#: The newest collector's execution number of a logical rollout: the highest one stands.
ATTEMPT_INDEX = "_ng_attempt_index"
#: The newest collector's run id; with the task and rollout index it names one logical rollout.
RUN_ID = "_ng_run_id"
#: NeMo Gym's explicit id of a logical rollout, given "when dispatches reuse task and rollout
#: indices" (`maybe_rollout_id_from_run_body`): where a row carries it, it names the rollout.
ROLLOUT_ID = "_ng_rollout_id"
SIDECAR_FIELDS = (TASK_INDEX, ROLLOUT_INDEX, *FAILURE_MARKERS, ATTEMPT_INDEX, RUN_ID, ROLLOUT_ID, OMITTED)

#: The request a rollout's model was sent: its :data:`CONDITIONS` (docs/semantics.md, "The same conditions").
REQUEST = "responses_create_params"
CONDITIONS: tuple[str, ...] = ("model", "temperature", "top_p", "max_output_tokens")

# --- read on demand, from the full row of a shown flip --------------------------------------

VERIFIER_LOGS_DIR = "verifier_logs_dir"
#: The model's trajectory: two rows holding an equal one are the same rollout scored twice (a
#: re-verification, or a replay of cached responses; docs/semantics.md, "Verifier disagreements").
TRAJECTORY = "response.output"
#: The Responses API's id of the model call: a re-verification keeps the row's response, id and all.
RESPONSE_ID = "response.id"
EMBEDDED_OUTPUT_FIELDS: tuple[str, ...] = ("test_output", "verifier_stdout", "verifier_output")

#: Every path a row is reduced from at load time, besides the join field(s). The presence of
#: :data:`REWARD` itself matters too: a file none of whose rows has it is not a rollouts file.
LOAD_FIELDS: tuple[str, ...] = (
    (REWARD, MASK_SAMPLE, TOKEN_CAPTURE, FAILURE_KIND, INVALID_JUDGE, *AGENT_ERROR_FIELDS, RESPONSE_ID, AGENT_NAME)
    + SIDECAR_FIELDS
    + tuple(f"{REQUEST}.{name}" for name in CONDITIONS)
)


def load_paths(key: Optional[str], inferred: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The paths a side is loaded from. The candidates are read even under a given key (a failure
    record naming its task by another field is not anonymous); the fallbacks and the ``inferred``
    candidates only when the key is detected."""
    fallbacks = () if key else IDENTITY_FALLBACKS + inferred
    extra = (key,) if key and key not in LOAD_FIELDS + KEY_CANDIDATES else ()
    return LOAD_FIELDS + KEY_CANDIDATES + fallbacks + extra
