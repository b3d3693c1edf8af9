"""The formal proofs of the hazard logic (hwgen.formal, docs/formal.md): every proof
holds on each of its configurations (CONFIGS), and each of its injected-bug twins fails it
with a counterexample from reset, naming an assertion of the unit. Run alone with
`python -m pytest -m formal`."""
import pytest

from hwgen.errors import HwgenError
from hwgen.formal import CONFIGS, PROOFS, check_twin, run_proof
from hwgen.formal.proofs import NARROW, STANDARD, config
from hwgen.formal.sby import job_text
from hwgen.registers import identification
from hwgen.vta.alu import TensorAlu
from hwgen.vta.rtl import to_rtlil
from hwgen.vta.tensor_store import TensorStore
from hwgen.vta.vcr import ControlRegisters

CASES = [(proof, name) for proof in PROOFS for name in PROOFS[proof].configs]
TWINS = [(proof, name, bug) for proof in PROOFS for name in PROOFS[proof].configs
         for bug in PROOFS[proof].twins_of(name)]


@pytest.mark.parametrize("proof,name", CASES)
def test_proven(proof, name):
    outcome = run_proof(proof, name)
    assert outcome.status == "pass", outcome


@pytest.mark.parametrize("proof,name,bug", TWINS)
def test_twin_fails(proof, name, bug):
    outcome = check_twin(proof, name, bug)
    assert outcome.status == "fail" and outcome.failed, outcome
    assert all(" at hwgen/vta/" in f for f in outcome.failed), outcome.failed


def test_a_twin_that_is_not_one_is_refused():
    with pytest.raises(HwgenError, match="is not a twin of proof load on default"):
        check_twin("load", "default", "vme_reuses_busy_slot")


def test_every_configuration_is_proven_on_and_the_standard_three_by_every_proof_of_them():
    assert {n for p in PROOFS.values() for n in p.configs} == set(CONFIGS)
    assert {p.name for p in PROOFS.values() if set(STANDARD) <= set(p.configs)} == \
        {p.name for p in PROOFS.values() if not set(p.configs) & set(NARROW)}


def test_a_configuration_a_proof_is_not_run_on_is_refused():
    with pytest.raises(HwgenError, match="proof load is not run on 'narrow'"):
        run_proof("load", "narrow")


def test_unknown_names_are_refused():
    with pytest.raises(HwgenError, match="proof 'nope': use one of load"):
        run_proof("nope", "default")
    with pytest.raises(HwgenError, match="formal configuration 'x': use one of default"):
        run_proof("load", "x")
    with pytest.raises(HwgenError, match="formal mode 'cover'"):
        job_text("cover", 3)


@pytest.mark.parametrize("unit", ["store", "vcr", "alu"])
def test_properties_only_in_formal_builds(unit):
    """A unit's properties (Amaranth's $check cells) are in its formal build only."""
    cfg = config("default")
    make = {"store": lambda formal=False: TensorStore(cfg, formal=formal),
            "vcr": lambda formal=False: ControlRegisters(identification(cfg.build_hash), formal=formal),
            "alu": lambda formal=False: TensorAlu(cfg, formal=("dst", "src") if formal else ())}[unit]
    assert "$check" not in to_rtlil(make(), unit)
    assert "$check" in to_rtlil(make(formal=True), unit)
