"""Hypothesis strategies: random valid configurations and instructions, and
mutations of valid inputs for robustness tests."""
import copy
import os

from hypothesis import assume
from hypothesis import strategies as st

from hwgen import ConfigError, VTAConfig
from hwgen.isa import Instruction, MemType, Opcode
from hwgen.isa.opcodes import alu_ops


def examples(n: int) -> int:
    """How many examples a property test draws: `n` in the default suite, twenty
    times more in the randomized runs of ci/properties.sh."""
    return n * (20 if os.environ.get("HWGEN_HYPOTHESIS") == "random" else 1)


@st.composite
def configs(draw):
    """Valid configurations over the whole parameter space: draw the buffer depths
    directly so that most draws are valid, then let the configuration decide."""
    lb, lbi, lbo = draw(st.integers(0, 2)), draw(st.integers(1, 6)), draw(st.integers(1, 6))
    depth = {k: draw(st.integers(3, 13)) for k in ("UOP", "INP", "WGT", "ACC")}
    uopw = draw(st.sampled_from([5, 6]))
    fields = {
        "LOG_BATCH": lb, "LOG_BLOCK_IN": lbi, "LOG_BLOCK_OUT": lbo, "LOG_UOP_WIDTH": uopw,
        "LOG_UOP_BUFF_SIZE": depth["UOP"] + uopw - 3,
        "LOG_INP_BUFF_SIZE": depth["INP"] + lb + lbi,
        "LOG_WGT_BUFF_SIZE": depth["WGT"] + lbo + lbi,
        "LOG_ACC_BUFF_SIZE": depth["ACC"] + lb + lbo + 2,
        "ALU_EXT": draw(st.booleans()),
        "ALU_RESCALE": draw(st.sampled_from(["none", "shift", "multiply"])),
    }
    for k in ("INP", "WGT", "ACC"):
        fields[f"LOG_{k}_FACTOR_RESTRICT"] = draw(st.integers(0, 2))
    try:
        return VTAConfig(fields)
    except ConfigError:
        assume(False)


@st.composite
def instructions(draw, cfg):
    op = draw(st.sampled_from(list(Opcode)))
    lay = cfg.layouts[op.name]
    fields = {}
    for f in lay.fields[1:]:
        if f.name == "memory_type":
            v = int(draw(st.sampled_from(list(MemType))))
        elif f.name == "alu_opcode":
            v = int(draw(st.sampled_from(alu_ops(cfg))))
        else:
            v = draw(st.integers(f.lo, f.hi))
        fields[f.name] = v
    return Instruction(op, **fields)


# -- mutations of valid inputs, for robustness tests -------------------------------------

def json_values():
    """Any JSON value a user might write by mistake: numbers at and beyond the usual
    ranges, strings, booleans, null, lists and objects."""
    scalars = st.one_of(st.integers(-2**40, 2**40), st.sampled_from([-1, 0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 33, 64, 65536]),
                        st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8), st.booleans(), st.none())
    return st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                        max_leaves=4)


@st.composite
def mutated_json(draw, doc):
    """`doc` (a JSON object, possibly nested) with one change: a value replaced,
    a key removed or an unknown key added, at any depth."""
    doc = copy.deepcopy(doc)
    parent = doc
    while True:                       # walk down a random path
        keys = list(parent) if isinstance(parent, dict) else list(range(len(parent)))
        if not keys:
            break
        key = draw(st.sampled_from(keys))
        child = parent[key]
        if isinstance(child, (dict, list)) and child and draw(st.booleans()):
            parent = child
            continue
        action = draw(st.sampled_from(["replace", "remove", "add"] if isinstance(parent, dict) else ["replace"]))
        if action == "replace":
            parent[key] = draw(json_values())
        elif action == "remove":
            del parent[key]
        else:
            parent[draw(st.text(min_size=1, max_size=8))] = draw(json_values())
        break
    return doc


@st.composite
def mutated_text(draw, text: str):
    """`text` with one token of one line replaced by another token, or one line
    replaced by random printable text."""
    lines = text.splitlines()
    k = draw(st.integers(0, len(lines) - 1))
    tokens = lines[k].split()
    if tokens and draw(st.booleans()):
        j = draw(st.integers(0, len(tokens) - 1))
        name, eq, _ = tokens[j].partition("=")
        value = draw(st.one_of(st.integers(-2**33, 2**33).map(str), st.text(max_size=6).map(lambda s: s.replace("\n", " ")),
                               st.sampled_from(["0x", "-0", "1e3", "=", "==1", "INP", "MOV", "opcode"])))
        tokens[j] = f"{name}={value}" if eq and draw(st.booleans()) else value
        lines[k] = " ".join(tokens)
    else:
        lines[k] = draw(st.text(max_size=30).map(lambda s: s.replace("\n", " ").replace("\r", " ")))
    return "\n".join(lines) + "\n"
