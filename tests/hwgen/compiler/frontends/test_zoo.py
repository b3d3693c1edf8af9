"""The model zoo (hwgen.compiler.frontends.zoo): an uncalibrated network, which the
mapper reads for its shapes, is the calibrated one with every shift 0."""
import numpy as np
import pytest

from hwgen.compiler.frontends import zoo


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v1"])
def test_an_uncalibrated_network_has_the_shapes_and_weights_of_the_calibrated_one(name):
    calibrated, plain = zoo.get(name, size=64, classes=10), zoo.get(name, size=64, classes=10, calibrated=False)
    assert calibrated.shapes() == plain.shapes()
    assert [type(a) for a in calibrated.layers] == [type(b) for b in plain.layers]
    for a, b in zip(calibrated.layers, plain.layers):
        assert (a.name, a.inputs) == (b.name, b.inputs)
        for field in ("weight", "bias"):
            if hasattr(a, field):
                assert np.array_equal(getattr(a, field), getattr(b, field))
    shifts = [layer.shift for layer in calibrated.layers if hasattr(layer, "shift")]
    assert max(shifts) > 0 and {layer.shift for layer in plain.layers if hasattr(layer, "shift")} == {0}
