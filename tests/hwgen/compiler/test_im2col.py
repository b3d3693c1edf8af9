"""A channel-light convolution on the GEMM over its im2col patches
(MappingOptions.channel_light "im2col", hwgen compile --channel-light im2col): the
patches against a direct loop, and networks whose 3-channel first convolution runs on
the core, bit for bit against the numpy semantics on fsim and tsim, over
configurations, strides, paddings and padding values."""
import json

import numpy as np
import pytest

from hwgen import load_config
from hwgen.cli import main
from hwgen.compiler import semantics as sem
from hwgen.compiler.ir import Conv2d, MaxPool, Network
from hwgen.compiler.mapping import MappingOptions, host_reason
from hwgen.compiler.pipeline import compile_network, mac_split
from sim import Fsim, Tsim
from sim.runtime import matches_reference, run_network
from tests.conftest import CONFIG_DIR

IM2COL = MappingOptions(channel_light="im2col")


def test_patches_are_the_windows_a_convolution_multiplies():
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, (2, 3, 7, 6), dtype=np.int8)
    kh, kw, (sh, sw), (pt, pl, pb, pr), fill = 3, 2, (2, 1), (1, 0, 2, 1), -5
    p = sem.im2col(x, kh, kw, (sh, sw), (pt, pl, pb, pr), fill)
    oh, ow = (7 + pt + pb - kh) // sh + 1, (6 + pl + pr - kw) // sw + 1
    assert p.shape == (2, 3 * kh * kw, oh, ow) and p.dtype == np.int8
    for n, c, ky, kx, oy, ox in np.ndindex(2, 3, kh, kw, oh, ow):
        y, xx = oy * sh + ky - pt, ox * sw + kx - pl
        want = x[n, c, y, xx] if 0 <= y < 7 and 0 <= xx < 6 else fill
        assert p[n, (c * kh + ky) * kw + kx, oy, ox] == want


def _stem_net(stride, pad, pad_value, kernel=3, channels=3, size=(23, 20)):
    rng = np.random.default_rng(stride + kernel)
    w = rng.integers(-60, 61, (24, channels, kernel, kernel), dtype=np.int8)
    net = Network("stem", "x", (1, channels, *size))
    net.layers.append(Conv2d("stem", ("x",), weight=w, bias=rng.integers(-900, 900, 24).astype(np.int32),
                             stride=stride, pad=pad, shift=8, clip=sem.RELU, pad_value=pad_value))
    net.layers.append(MaxPool("pool", ("stem",), kernel=2, stride=2, nonneg_input=True))
    return net


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8", "2x16x16", "1x32x32"])
@pytest.mark.parametrize("stride,pad,pad_value,kernel", [(2, 3, 0, 7), (1, 1, -7, 3), (2, (1, 0, 2, 1), 5, 3)])
def test_a_first_convolution_on_the_core(cfg_name, stride, pad, pad_value, kernel):
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    net = _stem_net(stride, pad, pad_value, kernel)
    shapes = [net.input_shape]
    assert "channel-light" in host_reason(net.layers[0], cfg, shapes)
    assert host_reason(net.layers[0], cfg, shapes, IM2COL) is None
    compiled = compile_network(net, cfg, IM2COL)
    assert [(c.where, c.im2col) for c in compiled] == [("vta", True), ("vta", False)]
    assert mac_split(compiled)["core_mac_share"] == 1.0
    x = np.random.default_rng(3).integers(-128, 128, net.input_shape, dtype=np.int8)
    assert matches_reference(net, run_network(net, cfg, compiled, x, Fsim()), x)


def test_a_first_convolution_on_tsim():
    cfg = load_config(CONFIG_DIR / "default.json")
    net = _stem_net(2, 3, 0, 7)
    x = np.random.default_rng(4).integers(-128, 128, net.input_shape, dtype=np.int8)
    result = run_network(net, cfg, compile_network(net, cfg, IM2COL), x, Tsim())
    assert result["cycles"] > 0 and matches_reference(net, result, x)


def test_patches_that_would_not_fill_half_the_lanes_stay_on_the_host():
    """A 1 x 1 kernel (patches are the channels) and one input channel of a 2 x 2
    kernel on BLOCK_IN 16 (4 patches) fill no more lanes than the input does."""
    cfg = load_config(CONFIG_DIR / "default.json")
    for kernel, channels in ((1, 3), (2, 1)):
        net = _stem_net(1, 0, 0, kernel, channels)
        compiled = compile_network(net, cfg, IM2COL)
        assert compiled[0].where == "host" and "channel-light" in compiled[0].reason


def test_compile_and_run_from_the_command_line(tmp_path, capsys):
    net = _stem_net(2, 3, 0, 7)
    net.save(tmp_path / "model")
    assert main(["compile", "--model", str(tmp_path / "model" / "model.json"), "--config",
                 str(CONFIG_DIR / "default.json"), "-o", str(tmp_path / "out"), "--channel-light", "im2col",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["layers"][0]["where"] == "vta" and report["layers"][0]["im2col"] is True
    assert report["core_mac_share"] == 1.0
    assert main(["run", str(tmp_path / "out"), "--target", "fsim", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["matches_reference"] is True and summary["layers"][0]["where"] == "vta"
