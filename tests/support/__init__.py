"""Tooling the tests and benchmarks share (docs/architecture.md, "Tests and benchmarks")."""
