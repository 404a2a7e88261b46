"""The monitors of a training run, as the run orchestration (`transformer.pipeline`) attaches
them: sample translations at each validation (`TrainingConfig.samples`), the gradient flow
every `TrainingConfig.record_flow_every` steps, TensorBoard when given a folder; curves.png
(and flow.png, when the flow is recorded) written when training stops."""

from contextlib import contextmanager

from .curves import write_curves
from .flow import FLOW_FILE, FlowRecording, write_flow_figure
from .samples import SampleTranslations
from .tensorboard import TensorBoardLogger, summary_writer


@contextmanager
def monitored(trainer, valid, tensorboard=None):
    """Within the with block, `trainer` (rank 0; other ranks get nothing) carries the run's
    monitors as callbacks: the first `trainer.config.samples` examples of `valid` translated
    at each validation, the flow recorder every `record_flow_every` steps, TensorBoard into
    the folder `tensorboard`. When the block ends without an error the run folder's figures
    are written."""
    if not trainer.chief:
        yield trainer
        return
    config = trainer.config
    added: list = []
    samples = SampleTranslations(valid[:config.samples])
    added.append(samples)
    flow = FlowRecording(trainer.model, config.record_flow_every) \
        if config.record_flow_every else None
    if flow is not None:
        added.append(flow.attach())
    logger = TensorBoardLogger(summary_writer(tensorboard), samples) \
        if tensorboard is not None else None
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
