"""Diagnosis rules: one module per rule or family, each rule a pure function ``rule(ctx) -> list[Finding]``."""
