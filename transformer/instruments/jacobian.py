"""‖∂x_L/∂x_l‖_F: how strongly each layer's input moves its stack's output, estimated with a
few random vector-Jacobian products (Hutchinson): for v with i.i.d. entries of mean 0 and
variance 1, E‖vᵀJ‖² = Σᵢⱼ J²ᵢⱼ = ‖J‖_F², so the mean of ‖vᵀJ‖² over samples estimates
‖J‖_F². Also: how far vᵀJ is from v (0 for a stack whose Jacobian is the identity)."""

import numpy as np

import minigrad as mg
from minigrad import Tensor

from ..data.batching import Batch
from ..model import Transformer
from .recorder import residual_blocks


def layer_inputs_and_outputs(model: Transformer, batch: Batch
                             ) -> tuple[dict[str, list[Tensor]], dict[str, Tensor]]:
    """({"encoder": [x_1, ...], "decoder": [...]}, {"encoder": memory, "decoder": hidden}): each
    layer's input and each stack's output, from one forward pass on `batch` with a graph, in
    eval mode (no dropout); the model is left in the mode it was in."""
    first_blocks = [(stack, block) for stack, _, sublayer, block in residual_blocks(model)
                    if sublayer == "self_attn"]
    inputs: dict[str, list] = {"encoder": [], "decoder": []}
    previous_observers = [block.observer for _, block in first_blocks]
    was_training = model.training
    try:
        model.eval()
        for stack, block in first_blocks:
            block.observer = lambda block, x, branch, s, out, stack=stack: \
                inputs[stack].append(x)
        with mg.enable_grad():
            memory = model.encode(batch.src, batch.src_mask)
            hidden = model.decode(batch.tgt_in, memory, batch.src_mask, batch.tgt_mask)
    finally:
        for (_, block), observer in zip(first_blocks, previous_observers):
            block.observer = observer
        model.train(was_training)
    return inputs, {"encoder": memory, "decoder": hidden}


def residual_jacobian_norms(model: Transformer, batch: Batch, n_samples: int = 4,
                            seed: int = 0) -> dict[str, list[float]]:
    """{"encoder": [...], "decoder": [...]}: for each layer l (from 1), the estimated Frobenius
    norm of ∂x_L/∂x_l over the whole batch, x_l the input of layer l and x_L the stack's
    output (after a pre-LN stack's final LayerNorm). The decoder's is taken with the encoder
    output held fixed. `batch` is a transformer.data.Batch; the model runs in eval mode (no
    dropout) and is left in the mode it was in."""
    inputs, outputs = layer_inputs_and_outputs(model, batch)
    rng = np.random.default_rng(seed)
    norms = {}
    for stack, output in outputs.items():
        squares = np.zeros(len(inputs[stack]))
        for _ in range(n_samples):
            v = mg.tensor(rng.standard_normal(output.shape).astype(output.dtype),
                          device=output.device)
            vjps = mg.grad(output, inputs[stack], grad_outputs=v, retain_graph=True)
            squares += [(g * g).sum().item() for g in vjps]
        norms[stack] = np.sqrt(squares / n_samples).tolist()
    return norms


def isometry_defects(model: Transformer, batch: Batch, seed: int = 0) -> dict[str, list[float]]:
    """{"encoder": [...], "decoder": [...]}: for each layer l, ‖vᵀ·∂x_L/∂x_l − v‖ / ‖v‖ for one
    random v: 0 where the stack from layer l on has the identity as its Jacobian (a ReZero
    stack at init), whatever v."""
    inputs, outputs = layer_inputs_and_outputs(model, batch)
    rng = np.random.default_rng(seed)
    defects = {}
    for stack, output in outputs.items():
        v = rng.standard_normal(output.shape).astype(output.dtype)
        vjps = mg.grad(output, inputs[stack], grad_outputs=mg.tensor(v, device=output.device),
                       retain_graph=True)
        defects[stack] = [float(np.linalg.norm(g.numpy() - v) / np.linalg.norm(v))
                          for g in vjps]
    return defects
