import json
import os

import pytest
from hypothesis import settings

from hwgen import load_config
from hwgen.config import CONFIGS

# Property tests draw the same examples on every run of the default suite, so a
# failure in CI reproduces; ci/properties.sh runs them with fresh random draws and
# twenty times as many examples (HWGEN_HYPOTHESIS=random; see
# tests.support.strategies.examples).
settings.register_profile("default", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("random", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HWGEN_HYPOTHESIS", "default"))

CONFIG_DIR = CONFIGS
# The configurations every reference behaviour is checked on.
MAIN_CONFIGS = ["default", "1x8x8", "2x16x16", "1x16x32"]


def config(name: str):
    """A shipped configuration by name, then "+"-separated changes: a FAMILY builds it for
    that FPGA family, FIELD=VALUE (VALUE in JSON) sets a field."""
    name, *changes = name.split("+")
    cfg = load_config(CONFIG_DIR / f"{name}.json")
    for change in changes:
        field, eq, value = change.partition("=")
        cfg = cfg.replace(**{field: json.loads(value)} if eq else {"FPGA": change})
    return cfg


@pytest.fixture(params=MAIN_CONFIGS)
def cfg(request):
    return config(request.param)


@pytest.fixture
def default_cfg():
    return config("default")


@pytest.fixture
def ext_cfg():
    return config("1x16x16-aluext")
