"""The demonstration data and commands: ``demo_data``, ``demo_agents`` (scripts/demo) and ``seed_history``.

``data/lhc-topology.yaml`` is the LHC Tier-0/Tier-1 topology; ``data/lhc-demo.yaml`` the 48-hour scenario the
simulated agents replay, written by ``scripts/generate_demo.py``.
"""
