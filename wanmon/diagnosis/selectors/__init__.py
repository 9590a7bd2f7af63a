"""Evidence selectors: the database -> the frozen dataclasses the pure rules read (evidence.py).

- bulk.py: the bundle of one shard of the periodic cycle (shards.py), read set-based: the one evidence builder,
  used by the cycle in production and by everything that replays or measures it;
- series.py: the set-based reads both of the latter share with the baselines (tests, sessions, SNMP rates);
- baselines.py: the baseline summaries learned from the history before the window;
- before_window.py: the last value before the window of the evidence slower than it (traceroutes, host settings);
- findings.py: stored findings, and the path directions a cycle must evaluate;
- common.py: what they all share (raw rows, counter discontinuities, host TCP settings, maintenance); the path
  versions in force come from the inventory's path_list_valid_at.
"""

from wanmon.diagnosis.maintenance_windows import maintenance_windows_overlapping
from wanmon.diagnosis.selectors.bulk import agent_schedules_declared, evidence_bundle_for_paths
from wanmon.diagnosis.selectors.common import cycle_reads_shared
from wanmon.diagnosis.selectors.findings import finding_list, paths_to_evaluate

__all__ = [
    "agent_schedules_declared",
    "cycle_reads_shared",
    "evidence_bundle_for_paths",
    "finding_list",
    "maintenance_windows_overlapping",
    "paths_to_evaluate",
]
