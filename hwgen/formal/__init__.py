"""Formal proofs of the core's hazard logic (docs/formal.md).

A proof wraps one unit of the core in a harness whose free inputs follow the unit's
environment contract (hwgen.formal.harness), asserts the properties written next to the
unit, and has SymbiYosys prove them with yices (hwgen.formal.sby): by k-induction, or as a
bounded check of a stated depth. Each proof runs on several configurations and has an
injected-bug twin (hwgen.vta.bugs) that the same proof must fail (hwgen.formal.proofs)."""
from .proofs import CONFIGS, PROOFS, Proof, check_twin, run_proof
from .sby import Outcome

__all__ = ["CONFIGS", "PROOFS", "Outcome", "Proof", "check_twin", "run_proof"]
