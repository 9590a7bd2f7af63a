"""The corpus: every case by name, its scenario document, and the YAML text written for inspection.

Cases are generated at test time from fixed seeds (7 days of a mesh is several MB of YAML), so nothing
large is committed; ``python -m tests.scenarios.noise --write DIR`` writes them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from .cases.faulty import FAULTY, FaultyCase
from .cases.healthy import HEALTHY
from .mesh import Mesh, MeshSpec


@dataclass(frozen=True)
class Case:
    """One scenario of the corpus."""

    name: str
    healthy: bool
    spec: MeshSpec
    faulty: FaultyCase | None = None

    def mesh(self) -> Mesh:
        return Mesh(self.spec, self.faulty.faults if self.faulty else ())

    def document(self) -> dict:
        if self.faulty:
            return self.mesh().document(name=self.name, description=self.faulty.description)
        return self.mesh().document()

    @property
    def path_days(self) -> float:
        n = len(self.spec.sites)
        return n * (n - 1) * self.spec.days


CASES: dict[str, Case] = {
    **{spec.name: Case(spec.name, True, spec) for spec in HEALTHY},
    **{fc.name: Case(fc.name, False, fc.base, fc) for fc in FAULTY},
}


def case_named(name: str) -> Case:
    try:
        return CASES[name]
    except KeyError:
        raise KeyError(f"no case {name!r}; cases: {', '.join(CASES)}") from None


class _Dumper(yaml.SafeDumper):
    """Records on one line each (flow style below the top level), like the hand-written scenarios."""


def _represent_dict(dumper: yaml.SafeDumper, data: dict) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items())


_Dumper.add_representer(dict, _represent_dict)


def scenario_yaml(doc: dict) -> str:
    """docs/scenario-format.md YAML: top-level blocks in block style, each record in flow style on its own line."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    parts = []
    for key, value in doc.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            lines = [f"{key}:"] + [
                "- " + yaml.dump(item, Dumper=dumper, default_flow_style=True, width=10**6, sort_keys=False).strip()
                for item in value
            ]
            parts.append("\n".join(lines))
        elif isinstance(value, dict):
            body = yaml.dump({key: value}, Dumper=dumper, default_flow_style=None, width=10**6, sort_keys=False)
            parts.append(body.rstrip())
        else:
            parts.append(yaml.dump({key: value}, Dumper=dumper, width=10**6, sort_keys=False).rstrip())
    return "\n".join(parts) + "\n"


def write(case: Case, directory: Path) -> Path:
    """Write one case as ``<name>.yaml`` and return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    out = directory / f"{case.name}.yaml"
    out.write_text(scenario_yaml(case.document()))
    return out
