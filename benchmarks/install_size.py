"""The size of hwgen's core install, printed as figures.

    python -m benchmarks.install_size [--json]

Makes a new virtual environment with this Python, installs this checkout into it
without extras (`python -m pip install .`, from the package index as a user would),
and prints its distributions (pip's own and setuptools included), the size of the
whole environment and of its site-packages (the files' sizes, in MB of 10^6 bytes),
and checks that `hwgen --version` runs there. Needs the package index (or pip's
cache); a minute or two.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def measure() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = Path(tmp) / "venv"
        venv.create(env, with_pip=True)
        python = env / "bin" / "python"
        subprocess.run([python, "-m", "pip", "install", "--quiet", str(ROOT)], check=True)
        subprocess.run([env / "bin" / "hwgen", "--version"], check=True, stdout=subprocess.DEVNULL)
        listed = json.loads(subprocess.run([python, "-m", "pip", "list", "--format", "json"], check=True,
                                           capture_output=True, text=True).stdout)
        (site,) = env.glob("lib/python*/site-packages")
        return {"distributions": len(listed), "venv_mb": round(_bytes(env) / 1e6, 1),
                "site_packages_mb": round(_bytes(site) / 1e6, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    figures = measure()
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"core install: {figures['distributions']} distributions, {figures['venv_mb']:.0f} MB "
              f"({figures['site_packages_mb']:.0f} MB of site-packages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
