"""Study tools: how gradients flow through the residual paths, and what attention looks at.

- `GradientFlowRecorder(model, config_label)`: per-block gradient norms, the residual
  stream's size and per-parameter gradient norms and update ratios (docs/conventions.md
  "Gradient-flow records"), as a context manager and a Trainer callback;
- `residual_jacobian_norms(model, batch)`: ‖∂x_L/∂x_l‖ for every layer l of each stack;
- `plots`: the figures (matplotlib, the `examples` extra);
- `experiments`: E1-E6 of examples/gradient_flow.py.
"""

from .jacobian import residual_jacobian_norms
from .plots import (
                    plot_attention,
                    plot_curves,
                    plot_depth_profiles,
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

__all__ = ["ROW_FIELDS", "GradientFlowRecorder", "plot_attention", "plot_curves",
           "plot_depth_profiles", "plot_positional_encoding", "plot_training_curves",
           "residual_blocks", "residual_jacobian_norms", "select", "write_csv", "write_jsonl"]
