"""The monitors of a training run, as the run orchestration (`transformer.pipeline`) attaches
them from the run's `run_spec.MonitorSpec`: sample translations at each validation
(`samples`), the gradient flow every `record_flow_every` steps, TensorBoard when given a
folder (`tensorboard`); curves.png (and flow.png, when the flow is recorded) written when
training stops. `check_monitors` checks, before a run writes anything, that they can."""

from contextlib import contextmanager

from .curves import write_curves
from .flow import FLOW_FILE, FlowRecording, write_flow_figure
from .samples import SampleTranslations
from .tensorboard import TensorBoardLogger, check_logdir, run_logdir, summary_writer


def check_monitors(monitors) -> None:
    """Nothing when the monitors of `monitors` (a MonitorSpec) can run: the figures'
    matplotlib is installed, and the TensorBoard folder, if any, can be written
    (`tensorboard.check_logdir`); else ImportError naming the extra, or ConfigError."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as error:
        raise ImportError("a training run draws curves.png with matplotlib: pip install -e "
                          "'.[examples]'") from error
    if monitors.tensorboard is not None:
        check_logdir(monitors.tensorboard)


@contextmanager
def monitored(trainer, valid, monitors):
    """Within the with block, `trainer` (rank 0; other ranks get nothing) carries the
    monitors of `monitors` (a MonitorSpec) as callbacks: the first `samples` examples of
    `valid` translated at each validation, the flow recorder every `record_flow_every` steps,
    TensorBoard into the folder `tensorboard`. When the block ends without an error the run
    folder's figures are written."""
    if not trainer.chief:
        yield trainer
        return
    added: list = []
    samples = SampleTranslations(valid[:monitors.samples])
    added.append(samples)
    flow = FlowRecording(trainer.model, monitors.record_flow_every) \
        if monitors.record_flow_every else None
    if flow is not None:
        added.append(flow.attach())
    logger = TensorBoardLogger(summary_writer(run_logdir(monitors.tensorboard, trainer.folder)),
                               samples, flow) if monitors.tensorboard is not None else None
    if logger is not None:
        added.append(logger)
    trainer.callbacks.extend(added)
    try:
        yield trainer
    finally:
        for callback in added:
            trainer.callbacks.remove(callback)
        if flow is not None:
            flow.detach()
        if logger is not None:
            logger.close()
    if trainer.folder is not None:
        write_curves(trainer.folder)
        if trainer.folder.file(FLOW_FILE).exists():
            write_flow_figure(trainer.folder)
