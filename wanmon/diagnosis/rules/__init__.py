"""Diagnosis rules: one module per rule or family, each rule a pure function ``rule(ctx) -> list[Finding]``; the
registry (wanmon/diagnosis/registry.py) lists them in the order they run, and the conclusions they share."""
