"""`hwgen fuzz`: differential fuzzing of tsim against fsim."""
from __future__ import annotations

import json

from sim.fuzz import chunks, merge, random_config, run_chunk, save_reproducers
from sim.fuzz import fuzz as run_campaign

from ..config import load_config
from ..extras import require
from ..files import staged
from .common import FAILED, OK, output_dir, print_json, read_paths
from .terminal import console, progress_bar


def _distributed(args, configs, progress):
    """The campaign as chunks on Dask (sim.fuzz.chunks): the same programs for any
    number of workers (not those of an in-process campaign with the same seed, which
    draws every program from one stream). Returns it and the jobs that failed."""
    from dse import Executor  # Dask: only for a campaign on a cluster
    parts = chunks(configs, args.count, args.seed)
    camps, failed, done = [], [], 0
    with Executor(args.workers, args.scheduler) as ex:
        for k, camp, error in ex.run(run_chunk, parts):
            if error is not None:      # reported, and the campaign fails: its programs did not run
                failed.append(f"programs {parts[k].first}..{parts[k].first + parts[k].count - 1}: "
                              f"{type(error).__name__}: {error}")
                continue
            camps.append(camp)
            done += camp.programs
            progress(done)
    return merge(camps, configs), failed


def fuzz(args) -> int:
    if args.workers is not None or args.scheduler is not None:
        require("explore", "hwgen fuzz --workers and --scheduler")
    if args.config:
        configs = [load_config(c) for c in args.config]
    else:
        configs = [random_config(args.seed * 1000 + k) for k in range(args.configs)]
    outdir = output_dir(args.output)
    bar, step = progress_bar(args, args.count, "fuzzing")
    with bar:
        with staged(outdir, inputs=read_paths(args)) as stage:
            failed = []
            if args.workers is None and args.scheduler is None:
                camp = run_campaign(configs, args.count, args.seed, stage.path, progress=step)
            else:
                camp, failed = _distributed(args, configs, lambda done: step(done, args.count, "programs"))
                save_reproducers(camp.divergences, stage.path)
            camp.divergences = stage.final(camp.divergences)
            report = {**camp.report(), "failed_jobs": failed}
            (stage.path / "report.json").write_text(json.dumps(report, indent=1))
    if args.json:
        print_json(report)
    else:
        con = console()
        con.print(f"{camp.programs} programs over {len(configs)} configurations ({', '.join(report['configs'])}) "
                  f"in {camp.seconds:.1f} s: [bold]{len(camp.divergences)} divergences[/bold]")
        for d in camp.divergences:
            con.print(f"  {d.get('reproducer', d['program_seed'])}: {d['difference']}")
        con.print("drawn: " + ", ".join(f"{k} {v}" for k, v in report["coverage"].items()))
        hit = len(report["bins"]) - len(report["missed"])
        con.print(f"hazard bins hit: {hit} of {len(report['bins'])}"
                  + (f"; missed: {', '.join(report['missed'])}" if report["missed"] else ""))
        for f in failed:
            con.print(f"  [red]job failed[/red]: {f}")
    return FAILED if camp.divergences or failed else OK
