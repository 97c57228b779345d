"""The classification core: reading rollout files, joining tasks, judging them, the summary.

Plain Python: nothing here imports pytest, pluggy or pydantic (the JSON fast path,
``pydantic_core.from_json``, comes with the default install), so the core runs anywhere; a test
proves it. Its stages, in pipeline order, are subpackages importing only from the ones before:
reading, identity, judging, statistics, reports. This module is the one entrance the plugin uses.
"""

from __future__ import annotations

from .api import compare_files, compare_loaded, compare_rollouts, summary_dict
from .errors import CompareInputError
from .escaping import terminal_line, terminal_text, visible
from .identity.item_names import item_names
from .judging.classify import rollout_pairs
from .judging.companions import (
    AggregateCheck,
    InventoryRead,
    check_companions,
    check_side,
    combined_check,
    companion_places,
    metrics_path,
    read_inventory,
)
from .judging.completeness import COVERAGE_NAME, Coverage, Limit, coverage, error_rates, parse_limit
from .judging.row_context import EXCERPT_CAP, wants_excerpt
from .judging.verdicts import KnownFlips, Verdict, read_known_flips
from .judging.verification import COPY_NAME
from .judging.verifier_output import LogRoots
from .model import CATEGORIES, CompareResult, Join, RolloutPair, RowCounts, RowOrigin, TaskComparison, TaskSide
from .reading.bounded import read_capped
from .reading.jsonl_lines import Progress, reader_name
from .reading.loaded_side import LoadedSide, SideRequest, by_field, side_from_plain, side_to_plain
from .reading.loading import load_rollouts
from .reading.parallel import SideProgress, load_sides
from .reading.shards import ShardPatternError, expand
from .reading.sidecar import sidecar_display, sidecar_path, sidecar_places
from .reports.annotations import annotation_lines
from .reports.html_page import Audit, flip_html, render_html, report_body
from .reports.item_outcome import FlipEvidence, flip_evidence, header_line, task_prompt, uncompared_reason
from .reports.json_file import json_dict, json_text, write_text
from .reports.markdown import render_markdown
from .reports.outputs import ci_files, named_input, publish_to_ci, refused_output, skipped_line, write_output
from .reports.summary import (
    FLIPS,
    BySide,
    CheckRun,
    GateItem,
    MarginDecisions,
    Options,
    RunInfo,
    RunOutcome,
    SideFile,
    SplitGroup,
    Summary,
    build_summary,
    margin_decisions,
    task_outcome,
)
from .reports.terminal import fit, summary_lines
from .statistics.margin import EQUIVALENCE_ITEM, FlipJudgement
from .statistics.paired import PairedSection, noise_text, paired_section, reward_range, task_noise_test
