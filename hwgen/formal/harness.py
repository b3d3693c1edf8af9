"""Harnesses: a unit built with its properties (`formal`), every input free unless the
harness drives it. A free input takes any value in every cycle (AnySeq), so a proof
covers every instruction, every beat and every reply the unit could see; where a unit
relies on its environment, the harness states that as an assumption."""
from __future__ import annotations

from amaranth.asserts import AnySeq
from amaranth.hdl import Value
from amaranth.lib import wiring


def free_inputs(m, component: wiring.Component, driven=()) -> None:
    """Drive every input port of `component` but those in `driven` (port values) with
    a free value each cycle."""
    skip = {id(Value.cast(v)) for v in driven}
    for _, member, value in component.signature.flatten(component):
        value = Value.cast(value)
        if member.flow == wiring.In and id(value) not in skip:
            m.d.comb += value.eq(AnySeq(len(value)))
