"""The cases of the noise corpus: healthy meshes (healthy.py) and faults injected into them (faulty.py)."""
