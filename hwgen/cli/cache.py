"""`hwgen cache`: the cached tsim builds."""
from __future__ import annotations

from rich.table import Table

from sim.tsim import cache_dir, cached_builds, prune_cache

from .common import OK, add_json, console, print_json


def register(sub) -> None:
    p = sub.add_parser("cache", help="list the cached tsim builds and their state; prune stale, corrupt and interrupted ones")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--prune", action="store_true", help="remove the builds this generator cannot use")
    what.add_argument("--clear", action="store_true", help="remove every build not in progress")
    add_json(p)
    p.set_defaults(func=cache)


def cache(args) -> int:
    if args.prune or args.clear:
        removed = prune_cache(everything=args.clear)
        summary = {"cache": str(cache_dir()), "removed": len(removed), "freed_bytes": sum(b["bytes"] for b in removed),
                   "kept": len(cached_builds())}
        if args.json:
            print_json(summary)
        else:
            console().print(f"removed {summary['removed']} builds ({summary['freed_bytes'] / 2**20:.0f} MiB) from "
                            f"{summary['cache']}; {summary['kept']} kept")
        return OK
    builds = cached_builds()
    if args.json:
        print_json({"cache": str(cache_dir()), "builds": builds})
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
    return OK
