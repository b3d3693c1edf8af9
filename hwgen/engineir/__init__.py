"""EngineIR: engines, software schedules and storage of a network in one program, its
hardware/software design space as an e-graph, and the Pareto designs extracted from it
(docs/engineir.md)."""
