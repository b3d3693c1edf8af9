"""The arguments of `hwgen map`."""
from __future__ import annotations

from ..commands import add_command
from ..common import add_input, add_output, at_least
from ..names import MAPSPACES, OBJECTIVES, ZOO, shipped_architectures


def register(sub) -> None:
    p = add_command(sub, "map")
    add_input(p, "--arch", required=True,
              help=f"an architecture YAML, a shipped one ({', '.join(shipped_architectures())}), or a VTA "
                   "configuration (JSON or a shipped name), converted")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--network", help=f"a network of the model zoo: {', '.join(ZOO)}")
    add_input(what, "--model", help="a quantized ONNX model")
    what.add_argument("--layer", help="one layer by its loop bounds, e.g. K=64,C=64,P=56,Q=56,R=3,S=3,stride=1")
    p.add_argument("--objective", choices=OBJECTIVES, default="energy", help="what the search minimizes (default energy)")
    p.add_argument("--budget", type=at_least(1), default=3000, help="blockings drawn per layer (default 3000)")
    p.add_argument("--seed", type=at_least(0), default=0, help="the search's seed (default 0)")
    p.add_argument("--mapspace", choices=MAPSPACES, default="ruby-s",
                   help="where factors may leave remainders: perfect (nowhere), ruby-s (spatial loops, the default), "
                        "ruby (every loop)")
    p.add_argument("--dataflow", metavar="A|B",
                   help="the loop each array dimension must unroll, e.g. C|K (Interstellar's dataflows; default: any "
                        "the architecture allows)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=at_least(1),
                       help="search the layers' spatial choices side by side in this many processes on this machine "
                            "(default: one per core)")
    where.add_argument("--scheduler", help="search them on an existing Dask cluster by its scheduler's address, e.g. "
                                           "tcp://HOST:8786 (the 'explore' extra)")
    add_output(p, "--chart", metavar="FILE", help="also draw each layer's energy by memory, cycles and utilization "
                                              "(.png or .svg)")
    add_output(p, "--json", nargs="?", const=True, default=False, metavar="FILE",
               help="print one JSON object instead of the tables; with FILE, write it there beside the tables")
    p.set_defaults(func="hwgen.cli.mapper.run_map")
