"""Diagnosis rules: one module per rule or family, each rule a pure function ``rule(ctx) -> list[Finding]``."""

from wanmon.diagnosis.context import register_shared_conclusion
from wanmon.diagnosis.rules.clock import untrusted_pairs
from wanmon.diagnosis.rules.maintenance import match_episodes

register_shared_conclusion("untrusted_delay_pairs", untrusted_pairs)
register_shared_conclusion("maintenance_matches", match_episodes)
