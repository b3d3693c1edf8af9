"""hwgen: generate, program and verify VTA deep-learning accelerators from one
configuration file."""
from .config import VTAConfig, load_config
from .errors import AsmError, ConfigError, DeadlockError, EncodingError, HwgenError, ProgramError

__version__ = "0.1.0"
__all__ = ["VTAConfig", "load_config", "AsmError", "ConfigError", "DeadlockError", "EncodingError",
           "HwgenError", "ProgramError", "__version__"]
