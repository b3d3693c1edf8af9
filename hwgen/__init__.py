"""hwgen: generate, program and verify VTA deep-learning accelerators from one
configuration file."""
from .config import VTAConfig, load_config
from .errors import AsmError, ConfigError, DeadlockError, EncodingError, HwgenError, ProgramError
from .version import VERSION as __version__
__all__ = ["VTAConfig", "load_config", "AsmError", "ConfigError", "DeadlockError", "EncodingError",
           "HwgenError", "ProgramError", "__version__"]
