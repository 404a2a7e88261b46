"""The gradient-flow study: experiments on the product's instruments (transformer/instruments/),
which it imports and which never import it.

- the experiment toolkit (`toolkit`, docs/write_your_own_experiment.md): `experiment` (the
  registering decorator), `Study`, `Scale`, `TaskData`, `build_model`, `make_trainer`,
  `train`, `warmup_schedule`, `Check`, `Outcome`, `run_experiments`;
- `statistics`: every check judged on the 95% interval of its mean over seeds (a t interval
  below 20 seeds; a comparison paired by seed on its per-seed differences), four outcomes
  (`HELD`, `NOT_HELD`, `INCONCLUSIVE`, `NOT_TESTABLE`): `mean_interval`, `paired_differences`,
  `judge`, `experiment_outcome`;
- `EXPECTATIONS` (expectations.py, what the study expects, fixed before it runs);
- `Grid`, `run_grid` and `judge_grid` (the grid runner and its verdicts, `PRESETS`);
- `experiments`: E0-E9 and F3 (Xiong et al.'s Figure 3) of examples/gradient_flow.py, one
  module each.
"""

from .expectations import EXPECTATIONS, Expectation
from .grid import PRESETS, Grid, judge_grid, run_grid
from .statistics import (
                    HELD,
                    INCONCLUSIVE,
                    NOT_HELD,
                    NOT_TESTABLE,
                    experiment_outcome,
                    judge,
                    mean_interval,
                    paired_differences,
)
from .toolkit import (
                    EXPERIMENTS,
                    QUICK,
                    Check,
                    Outcome,
                    Scale,
                    Study,
                    TaskData,
                    build_model,
                    experiment,
                    make_trainer,
                    run_experiments,
                    train,
                    warmup_schedule,
)

__all__ = ["EXPECTATIONS", "EXPERIMENTS", "HELD", "INCONCLUSIVE", "NOT_HELD", "NOT_TESTABLE",
           "PRESETS", "QUICK", "Check", "Expectation", "Grid", "Outcome", "Scale", "Study",
           "TaskData", "build_model", "experiment", "experiment_outcome", "judge", "judge_grid",
           "make_trainer", "mean_interval", "paired_differences", "run_experiments", "run_grid",
           "train", "warmup_schedule"]
