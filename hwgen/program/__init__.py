"""Programs: the on-disk format every target runs, the builder that writes them, the
static checker and the dependency-token semantics."""
from .builder import ProgramBuilder
from .check import CheckReport, check_program
from .format import Program, Region
from .tokens import schedule

__all__ = ["CheckReport", "Program", "ProgramBuilder", "Region", "check_program", "schedule"]
