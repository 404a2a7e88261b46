"""Seeing inside a run while it trains and after (docs/inspecting.md):

- `SampleTranslations`: a few validation sentences translated at each validation, printed and
  kept in samples.jsonl (`read_samples`);
- `write_curves`: curves.png, the run's metrics against step;
- `FlowRecording`: the GradientFlowRecorder every N steps into flow.jsonl, `flow_table` and
  `write_flow_figure` (flow.png);
- `TensorBoardLogger`: scalars (perplexity and gradient flow included), samples and
  histograms for TensorBoard (tensorboardX), in the run's own TensorBoard run
  (`run_logdir`); `log_final`: the held-out scores and the hparams plugin's record;
- `monitored(trainer, valid, monitors)`: all of them around a run, as the run
  orchestration uses them (`check_monitors` first);
- `attention_views` and `write_attention_npz`: every attention weight of chosen sentences,
  for the report page and for bertviz; `write_report`: the report page (Plotly).
"""

from .attention import attention_views, write_attention_npz
from .curves import CURVES_FILE, run_panels, write_curves
from .flow import FLOW_FILE, FlowRecording, flow_table, update_ratio_table, write_flow_figure
from .monitors import check_monitors, monitored
from .report import write_report
from .samples import SAMPLES_FILE, SampleTranslations, read_samples
from .tensorboard import TensorBoardLogger, log_final, run_logdir, summary_writer

__all__ = ["CURVES_FILE", "FLOW_FILE", "SAMPLES_FILE", "FlowRecording", "SampleTranslations",
           "TensorBoardLogger", "attention_views", "check_monitors", "flow_table", "log_final",
           "monitored", "read_samples", "run_logdir", "run_panels", "summary_writer",
           "update_ratio_table", "write_attention_npz", "write_curves", "write_flow_figure",
           "write_report"]
