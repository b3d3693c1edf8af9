"""`hwgen cache`: the cached tsim builds, Verilog, chosen tilings and searched mappings."""
from __future__ import annotations

from rich.table import Table

from hwgen.compiler.lowering import cache as tilings
from hwgen.mapper import cache as mappings
from sim.tsim import cache_dir, cached_builds, prune_cache

from ..vta.build import cached_verilog, prune_verilog, verilog_cache
from .common import OK, print_json
from .terminal import console


def cache(args) -> int:
    if args.prune or args.clear:
        removed = prune_cache(everything=args.clear)
        gone = tilings.prune(everything=args.clear)
        searches = mappings.prune(everything=args.clear)
        verilog = prune_verilog(everything=args.clear)
        summary = {"cache": str(cache_dir()), "removed": len(removed), "freed_bytes": sum(b["bytes"] for b in removed),
                   "kept": len(cached_builds()), "tilings_removed": sum(e["files"] for e in gone),
                   "tilings_freed_bytes": sum(e["bytes"] for e in gone), "verilog_removed": len(verilog),
                   "verilog_freed_bytes": sum(e["bytes"] for e in verilog),
                   "mappings_removed": sum(e["files"] for e in searches),
                   "mappings_freed_bytes": sum(e["bytes"] for e in searches)}
        if args.json:
            print_json(summary)
        else:
            console().print(f"removed {summary['removed']} builds ({summary['freed_bytes'] / 2**20:.0f} MiB) from "
                            f"{summary['cache']}; {summary['kept']} kept; removed {summary['tilings_removed']} "
                            f"tilings ({summary['tilings_freed_bytes'] / 2**10:.0f} KiB) from {tilings.cache_dir()}; "
                            f"removed {summary['verilog_removed']} Verilog builds "
                            f"({summary['verilog_freed_bytes'] / 2**20:.0f} MiB) from {verilog_cache()}; removed "
                            f"{summary['mappings_removed']} searched mappings "
                            f"({summary['mappings_freed_bytes'] / 2**10:.0f} KiB) from {mappings.cache_dir()}")
        return OK
    builds, chosen = cached_builds(), tilings.entries()
    if args.json:
        print_json({"cache": str(cache_dir()), "builds": builds, "tilings": chosen, "verilog": cached_verilog(),
                    "mappings": mappings.entries()})
        return OK
    table = Table("config", "variant", "MiB", "state", title=f"tsim builds in {cache_dir()}")
    for b in builds:
        table.add_row(b["config"] or "-", b["variant"] or "plain", f"{b['bytes'] / 2**20:.1f}",
                      b["state"] if b["state"] in ("ok", "building") else f"[red]{b['state']}[/red]")
    con = console()
    con.print(table)
    unusable = [b for b in builds if b["state"] not in ("ok", "building")]
    con.print(f"{len(builds)} builds, {sum(b['bytes'] for b in builds) / 2**20:.0f} MiB; {len(unusable)} unusable "
              f"(stale, corrupt or interrupted: {sum(b['bytes'] for b in unusable) / 2**20:.0f} MiB): "
              "hwgen cache --prune removes them")
    verilog = cached_verilog()
    old = [e for e in verilog if not e["current"]]
    con.print(f"Verilog in {verilog_cache()}: {len(verilog) - len(old)} builds of this generator, {len(old)} of "
              f"earlier ones ({sum(e['bytes'] for e in old) / 2**20:.0f} MiB, removed by --prune)")
    stale = [e for e in chosen if e["state"] == "stale"]
    con.print(f"tilings in {tilings.cache_dir()}: {sum(e['files'] for e in chosen if e['state'] == 'current')} of "
              f"the current compiler, {sum(e['files'] for e in stale)} of earlier ones "
              f"({sum(e['bytes'] for e in stale) / 2**10:.0f} KiB, removed by --prune)")
    searched = mappings.entries()
    stale = [e for e in searched if e["state"] == "stale"]
    con.print(f"searched mappings in {mappings.cache_dir()}: "
              f"{sum(e['files'] for e in searched if e['state'] == 'current')} of the current mapper, "
              f"{sum(e['files'] for e in stale)} of earlier ones ({sum(e['bytes'] for e in stale) / 2**10:.0f} KiB, "
              "removed by --prune)")
    return OK
