"""Noise corpus of the diagnosis: healthy 7-day meshes with the noise real data has, and faults injected into them.

physics.py is the oracle (RTT, BDP, window and Mathis limits, host limits), topology.py builds the meshes,
noise.py holds the noise models, mesh.py simulates the measurements, faults.py the faults, cases/ the corpus.
"""
