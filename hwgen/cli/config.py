"""`hwgen config show`: a configuration's fields, derived values and instruction layouts."""
from __future__ import annotations

from rich.table import Table

from ..config import load_config
from .common import OK, print_json
from .terminal import console


def show_config(args) -> int:
    cfg = load_config(args.config)
    layouts = {name: [{"field": f.name, "msb": f.msb, "lsb": f.lsb, "width": f.width,
                       **({"signed": True} if f.signed else {})} for f in lay.fields]
               for name, lay in cfg.layouts.items() if name != "STORE"}
    if args.json:
        print_json({"config": cfg.to_dict(), "derived": cfg.derived(), "layouts": layouts})
        return OK
    con = console()
    con.print(f"[bold]VTA configuration {cfg.name}[/bold] ({cfg.source or 'defaults'})  "
              f"isa {cfg.isa_hash}  build {cfg.build_hash}")
    t = Table("field", "value", title="fields")
    for k, v in cfg.to_dict().items():
        t.add_row(k, str(v))
    con.print(t)
    d = cfg.derived()
    t = Table("buffer", "element bits", "element bytes", "depth", "depth bits", "factor bits", title="buffers")
    for m in d["depth"]:
        t.add_row(m, str(d["element_bits"][m]), str(d["element_bytes"][m]), str(d["depth"][m]),
                  str(d["depth_bits"][m]), str(d["factor_bits"].get(m, "")))
    con.print(t)
    con.print("  ".join(f"{k}={d[k]}" for k in ("BATCH", "BLOCK_IN", "BLOCK_OUT", "INP_WIDTH", "WGT_WIDTH",
                                                 "ACC_WIDTH", "OUT_WIDTH", "UOP_WIDTH")))
    for name, fields in layouts.items():
        title = "LOAD / STORE" if name == "LOAD" else name
        t = Table("field", "bits", "width", title=f"{title} ({cfg.layouts[name].bits} bits)")
        for f in fields:
            t.add_row(f["field"] + (" (signed)" if f.get("signed") else ""), f"[{f['msb']}:{f['lsb']}]", str(f["width"]))
        con.print(t)
    return OK
