"""Noise corpus of the diagnosis: healthy 7-day meshes with the noise real data has, and faults injected into them.

physics.py is the oracle (RTT, BDP, window and Mathis limits, host limits), topology.py builds the meshes,
noise.py holds the noise models, mesh.py simulates the measurements, faults.py the faults, cases/ the corpus.

The scenarios are generated from fixed seeds when needed (each is 2-5 MB of YAML); to inspect them:
``python -m tests.scenarios.noise --write DIR``. Their ``expect`` follows docs/scenario-format.md with two additions: a
healthy mesh says ``max_severity: info`` (nothing above info may be found), and an expected finding may
list ``also_accepted`` codes that describe the same fault correctly (a one-direction collapse is also an
ASYMMETRIC_PATH). verdict.py checks both; ``manage.py replay --check`` ignores them. The replays go
without the expect block, so a code the engine does not know yet counts as a miss instead of making the
file invalid. ``scripts/bench diagnosis`` prints the false-alarm and detection rates; test_noise_corpus.py
holds the engine to them on every ``scripts/test`` run.
"""
