"""Error types. Every error names what the user wrote (a configuration field, an
assembly line, an instruction number) and what to change."""


class HwgenError(Exception):
    """Base class of all errors hwgen reports to users."""


class ConfigError(HwgenError):
    """An invalid configuration: names the field, the value, the rule and the fix."""

    def __init__(self, field: str, value, rule: str, fix: str, where: str | None = None):
        self.field, self.value, self.rule, self.fix, self.where = field, value, rule, fix, where
        super().__init__(f"{where + ': ' if where else ''}{field}={value!r}: {rule}; {fix}")


class EncodingError(HwgenError):
    """A value that does not fit its instruction or micro-op field, or bits that are
    not a valid instruction."""


class AsmError(HwgenError):
    """An assembly source error, with the file and line it was found on."""

    def __init__(self, line: int, message: str, source: str = "<asm>"):
        self.line = line
        super().__init__(f"{source}:{line}: {message}")


class ProgramError(HwgenError):
    """A program that breaks the ISA contract. `index` is the instruction number in
    the stream (None when the problem is not tied to one instruction)."""

    def __init__(self, message: str, index: int | None = None, insn: str | None = None):
        self.index = index
        where = "" if index is None else f"instruction {index}" + (f" ({insn})" if insn else "") + ": "
        super().__init__(where + message)


class DeadlockError(ProgramError):
    """No module can make progress; `blocked` maps each unfinished module to a
    description of the instruction it waits on."""

    def __init__(self, blocked: dict[str, str]):
        self.blocked = blocked
        lines = "\n".join(f"  {m}: {why}" for m, why in blocked.items())
        super().__init__("deadlock: no module can make progress\n" + lines)


class ToolError(RuntimeError):
    """An external tool (Yosys, nextpnr) failed on a design hwgen generated: not the
    user's input, so the command reports it as an internal error, quoting the tool's
    log."""
