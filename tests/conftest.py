import pytest

from hwgen import load_config
from hwgen.config import CONFIGS

CONFIG_DIR = CONFIGS
# The configurations every reference behaviour is checked on.
MAIN_CONFIGS = ["default", "1x8x8", "2x16x16", "1x16x32"]


def config(name: str):
    return load_config(CONFIG_DIR / f"{name}.json")


@pytest.fixture(params=MAIN_CONFIGS)
def cfg(request):
    return config(request.param)


@pytest.fixture
def default_cfg():
    return config("default")


@pytest.fixture
def ext_cfg():
    return config("1x16x16-aluext")
