"""The plugin's words for the settings the core's messages name: its command-line options.

The core writes a slot where a message names a setting (:mod:`pytest_rollout_parity.core.vocabulary`);
every report and error line the plugin shows is worded with :data:`PLUGIN_NAMES`, taken from the
one table of options, so each flag is spelled once.
"""

from __future__ import annotations

from ..core import OptionNames
from .options import OPTION

PLUGIN_NAMES = OptionNames(
    json=OPTION["json_path"].flag,
    key=OPTION["key"].flag,
    agent=OPTION["agent"].flag,
    old_agent=OPTION["old_agent"].flag,
    new_agent=OPTION["new_agent"].flag,
    known_flips=OPTION["known_flips"].flag,
    margin=OPTION["margin"].flag,
    html=OPTION["html_path"].flag,
)
