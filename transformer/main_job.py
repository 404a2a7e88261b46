"""The main job: the run that `python examples/train_translation.py` starts by default, as a
RunSpec. The script's flags change it (transformer.options) and their help states its values;
the tests and `benchmarks/task_step.py` read them from here; where the README and the docs
state one, a test checks it against this object."""

from .run_spec import MonitorSpec, RunSpec, TaskSpec
from .training_config import TrainingConfig

# CPU-sized: a 0.3M-parameter model on the toy grammar, trained in minutes on two cores.
MAIN_JOB = RunSpec(
    task=TaskSpec("toy-en-es"),
    model={"d_model": 64, "n_heads": 4, "n_encoder_layers": 2, "n_decoder_layers": 2,
           "d_ff": 256, "dropout": 0.1},
    training=TrainingConfig(steps=3800, batch_size=64, warmup_steps=400, lr_factor=0.5,
                            schedule="cosine", target_dropout=0.15, ema_decay=0.999,
                            eval_every=500, checkpoint_every=500, seed=0),
    monitors=MonitorSpec(samples=3))
# The interval of `--record-flow` given without one (a run records no gradient flow unless
# asked).
FLOW_EVERY = 100
