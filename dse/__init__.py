"""Design-space exploration (docs/dse.md): sweeps of configurations over networks,
each point built, compiled, run bit-exact on tsim and measured by the area models, on
a Dask cluster, with Pareto fronts and charts.

- `space`: the YAML space file, checked;
- `evaluate`: one point as a pure, content-addressed job;
- `executor`: Dask distributed (a local cluster or an existing scheduler);
- `areas`, `objectives`: the area models, and the fronts' objectives (data: a name,
  where the point's result holds it, a direction);
- `pareto`, `plots`: the N-dimensional fronts and the charts;
- `sweep`: all of it together, and the output files.
"""
from .evaluate import Job, evaluate
from .executor import Executor
from .space import Space, load_space
from .sweep import run_sweep

__all__ = ["Executor", "Job", "Space", "evaluate", "load_space", "run_sweep"]
