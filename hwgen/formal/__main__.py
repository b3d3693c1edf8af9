"""Run the formal proofs: every proof on each of its configurations, and each twin.

    python -m hwgen.formal [--proofs load,tokens] [--configs default,...] [--no-twins] [--json]

Prints a line per run (proven, or failed with the assertions), or one JSON object; exits
1 if a proof does not hold or a twin is not caught, 2 on a bad name."""
from __future__ import annotations

import argparse
import json
import sys

from ..errors import HwgenError
from .proofs import CONFIGS, PROOFS, check_twin, run_proof


def _names(text: str, known: dict, what: str) -> list[str]:
    names = text.split(",")
    unknown = [n for n in names if n not in known]
    if unknown:
        raise HwgenError(f"--{what} {','.join(unknown)}: no such {what[:-1]}; known: {', '.join(known)}")
    return names


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m hwgen.formal", description=__doc__.splitlines()[0])
    p.add_argument("--proofs", default=",".join(PROOFS))
    p.add_argument("--configs", help="of each proof's configurations, these (default: all of them)")
    p.add_argument("--no-twins", action="store_true", help="skip the injected-bug twins")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    try:
        proofs = _names(args.proofs, PROOFS, "proofs")
        configs = _names(args.configs, CONFIGS, "configs") if args.configs else list(CONFIGS)
    except HwgenError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    runs, bad = [], 0
    for proof in proofs:
        for config in (c for c in configs if c in PROOFS[proof].configs):
            jobs = [(None, lambda: run_proof(proof, config))]
            if not args.no_twins:
                jobs += [(bug, lambda bug=bug: check_twin(proof, config, bug)) for bug in PROOFS[proof].twins_of(config)]
            for bug, job in jobs:
                outcome = job()
                ok = outcome.status == ("fail" if bug else "pass")
                bad += not ok
                runs.append({"proof": proof, "config": config, "twin": bug, "ok": ok, **outcome.to_dict()})
                if not args.json:
                    what = f"twin {bug}" if bug else "proof"
                    verdict = {"pass": "proven" if outcome.mode == "prove" else f"no failure in {outcome.depth} cycles",
                               "fail": "fails: " + "; ".join(outcome.failed), "unknown": "induction fails: " +
                               "; ".join(outcome.failed)}[outcome.status]
                    print(f"{'ok ' if ok else 'BAD'} {proof:15} {config:16} {what:36} {outcome.mode} {outcome.depth:>2}  "
                          f"{verdict} ({outcome.seconds} s{', cached' if outcome.cached else ''})", flush=True)
    if args.json:
        print(json.dumps({"runs": runs, "failed": bad}, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
