"""Hypothesis strategies: random valid configurations and instructions."""
from hypothesis import assume
from hypothesis import strategies as st

from hwgen import ConfigError, VTAConfig
from hwgen.isa import AluOp, Instruction, MemType, Opcode


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
            ops = [o for o in AluOp if cfg.ALU_EXT or o not in (AluOp.CLP, AluOp.MOV)]
            v = int(draw(st.sampled_from(ops)))
        else:
            v = draw(st.integers(f.lo, f.hi))
        fields[f.name] = v
    return Instruction(op, **fields)
