"""Replay the noise corpus through the real ingest and diagnosis and hold the engine to it.

Healthy meshes: no warning or critical finding at all (info allowed). Faulty ones: every injected fault found
with its code and subject. Every healthy mesh and every fault is replayed on every run (about a minute on two
cores); ``scripts/bench diagnosis`` prints the false-alarm and detection rates of the same replays.
"""

from __future__ import annotations

import pytest

from .corpus import CASES
from .verdict import replay_case

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c.healthy])
def test_healthy_mesh_raises_no_warning(name, tmp_path):
    verdict = replay_case(CASES[name], tmp_path)
    assert not verdict.alarms, "\n".join(verdict.lines())


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if not c.healthy])
def test_injected_fault_is_found_with_its_code_and_subject(name, tmp_path):
    verdict = replay_case(CASES[name], tmp_path)
    assert verdict.detected and not verdict.missed, "\n".join(verdict.lines())
