"""The clock a run's time is figured at: the stock flow's measured worst seed for the
build it was measured on, FREQ_MHZ for any other; the time from cycles by hand."""
from hwgen import load_config
from hwgen.clocks import MEASURED, clock


def test_a_measured_build_runs_at_its_worst_seed():
    (family, name), mhz = next(iter(MEASURED.items()))
    c = clock(load_config(name).replace(FPGA=family))
    assert c.mhz == mhz and family in c.source and "worst of seeds" in c.source


def test_other_builds_run_at_their_clock_target():
    for cfg in (load_config("1x8x8"), load_config("1x8x8").replace(FPGA="ecp5", FREQ_MHZ=90),
                load_config("default").replace(FREQ_MHZ=125)):
        if cfg.FREQ_MHZ == 90:      # FREQ_MHZ is part of the build: another build than the one measured
            assert cfg.build_hash != load_config("1x8x8").replace(FPGA="ecp5").build_hash
        c = clock(cfg)
        assert c.mhz == cfg.FREQ_MHZ and "not measured" in c.source


def test_time_per_inference_by_hand():
    t = clock(load_config("default")).time(6_938_429, 1)
    assert t["ms_per_inference"] == 69.3843 and t["inferences_per_second"] == 14.41
    t = clock(load_config("default")).time(4 * 6_800_000, 4)      # a batch of 4 in one run
    assert t["ms_per_inference"] == 68.0 and t["inferences_per_second"] == 14.71
