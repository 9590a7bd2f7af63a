"""The committed regression corpus (tests/scenarios/*.yaml) is what its generators write today.

The replay tests read the YAML files, not the generators: a generator changed without rewriting its file (or a
file edited by hand) would leave the corpus testing something nobody can rebuild. Rewrite with
``.venv/bin/python tests/scenarios/generate.py`` and ``.venv/bin/python tests/scenarios/generate_mesh.py``.
"""

from __future__ import annotations

import pytest

from tests.scenarios import generate, generate_mesh


@pytest.mark.parametrize("build", generate.SCENARIOS, ids=lambda build: build.__name__)
def test_a_regression_scenario_file_is_its_generators_output(build):
    scenario = build()
    path = generate.HERE / f"{scenario.name}.yaml"
    assert path.read_text() == scenario.document(), f"{path.name} is stale: run tests/scenarios/generate.py"


def test_the_healthy_mesh_file_is_its_generators_output():
    assert generate_mesh.OUT.read_text() == generate_mesh.document(), (
        f"{generate_mesh.OUT.name} is stale: run tests/scenarios/generate_mesh.py"
    )
