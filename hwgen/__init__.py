"""hwgen: generate, program and verify VTA deep-learning accelerators from one
configuration file."""
from .errors import AsmError, ConfigError, DeadlockError, EncodingError, HwgenError, ProgramError
from .version import VERSION as __version__

__all__ = ["VTAConfig", "load_config", "AsmError", "ConfigError", "DeadlockError", "EncodingError",
           "HwgenError", "ProgramError", "__version__"]


def __getattr__(name: str):
    # The configuration (and numpy with it) loads on first use, so that importing a
    # submodule such as the command line costs only what that submodule needs.
    if name in ("VTAConfig", "load_config"):
        from . import config
        return getattr(config, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
