"""The measuring tools: how gradients flow through the residual paths, and what attention looks
at. The product's own (transformer/monitoring/ and transformer/illustrated/ use them); the
gradient-flow study (transformer/study/) builds on them.

- `GradientFlowRecorder(model, config_label, every=1)`: per-block gradient norms, attenuation,
  branch and LayerNorm-input sizes, the residual stream's size and per-parameter gradient
  norms and update ratios (docs/conventions.md "Gradient-flow records"), as a context manager
  and a Trainer callback that samples every `every`-th step; `ROW_FIELDS`, `select`,
  `write_csv`, `write_jsonl` for its rows;
- `gradient_statistics(model, batches, pad_id)`: per parameter, the expected gradient's norm,
  the batch-to-batch noise and their signal-to-noise ratio;
- `layer_streams(model, batch)`, `token_share(stream, lengths)`: the stream at every layer,
  and how much of it still differs between tokens (rank collapse);
- `attention_entropy(weights)`, `entropy_rows(recorder, query_valid)`: per head, from an
  AttentionRecorder;
- `residual_jacobian_norms(model, batch)`: ‖∂x_L/∂x_l‖ for every layer l of each stack, and
  `isometry_defects(model, batch)`: how far ∂x_L/∂x_l is from the identity;
- `plots`: the figures (matplotlib, the `examples` extra).
"""

from .entropy import attention_entropy, entropy_rows
from .jacobian import isometry_defects, residual_jacobian_norms
from .noise import gradient_statistics, probe_loss
from .plots import (
                    plot_attention,
                    plot_curves,
                    plot_depth_profiles,
                    plot_flow_over_training,
                    plot_positional_encoding,
                    plot_training_curves,
)
from .recorder import (
                    ROW_FIELDS,
                    GradientFlowRecorder,
                    residual_blocks,
                    select,
                    write_csv,
                    write_jsonl,
)
from .streams import layer_streams, token_share

__all__ = ["ROW_FIELDS", "GradientFlowRecorder", "attention_entropy", "entropy_rows",
           "gradient_statistics", "isometry_defects", "layer_streams", "plot_attention",
           "plot_curves", "plot_depth_profiles", "plot_flow_over_training",
           "plot_positional_encoding", "plot_training_curves", "probe_loss", "residual_blocks",
           "residual_jacobian_norms", "select", "token_share", "write_csv", "write_jsonl"]
