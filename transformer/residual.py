"""Residual schemes by name: how each block joins its skip and its branch, and how its weights
start. A scheme is the model's `norm_first` and `residual` mode (transformer/layers.py) plus
`prepare(model, batch)`, which rescales skips and weights after the model is built (`batch`: a
profiling batch, for the schemes that measure the model first).

    post-LN    LN(x + F(x)), the paper's block (the default model)
    pre-LN     x + F(LN(x)) and a final LayerNorm per stack
    rezero     x + α·F(x), α learned from 0, no LayerNorm (Bachlechner et al. 2020)
    admin      LN(ω_i·x + F(x)), ω_i from a profiling pass (Liu et al. 2020's Admin)
    deepnorm   LN(α·x + F(x)), the value, output and FFN matrices × β (Wang et al. 2022)
    t-fixup    x + F(x), no LayerNorm, the embedding N(0, d^-½) and the value, output and FFN
               matrices scaled down with depth (Huang et al. 2020)
    post-LN, no skip / pre-LN, no skip / plain: the ablations of the gradient-flow study

`register_scheme(ResidualScheme(...))` adds one; `scheme(name).config_fields` gives the model
config's fields, `apply_scheme(model, name, batch)` the rest.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import minigrad as mg
from minigrad import nn

from .initialization import embedding_tables
from .layers import ResidualBlock


@dataclass(frozen=True)
class ResidualScheme:
    """A residual scheme: the block (`norm_first`, `residual` mode) and `prepare(model, batch)`
    (None: the model as built)."""

    name: str
    norm_first: bool = False
    residual: str = "standard"
    prepare: Callable | None = None

    @property
    def config_fields(self) -> dict:
        return {"norm_first": self.norm_first, "residual": self.residual}


SCHEMES: dict[str, ResidualScheme] = {}


def register_scheme(scheme: ResidualScheme) -> ResidualScheme:
    if scheme.name in SCHEMES:
        raise ValueError(f"register_scheme: {scheme.name!r} is registered already; choose "
                         f"another name than {', '.join(SCHEMES)}")
    SCHEMES[scheme.name] = scheme
    return scheme


def scheme(name: str) -> ResidualScheme:
    if name not in SCHEMES:
        raise ValueError(f"unknown residual scheme {name!r}; choose from {', '.join(SCHEMES)}")
    return SCHEMES[name]


def apply_scheme(model, name: str, batch=None) -> None:
    """Rescale `model`'s skips and weights as the scheme `name` starts them (in place)."""
    prepare = scheme(name).prepare
    if prepare is not None:
        prepare(model, batch)


def stack_blocks(stack) -> list:
    """The ResidualBlocks of a stack in the order the input meets them."""
    return [module for layer in stack.layers for module in layer.modules()
            if isinstance(module, ResidualBlock)]


def branch_matrices(block) -> list:
    """The matrices DeepNorm and T-Fixup scale in a block: an attention's value and output
    projections, or both FFN matrices."""
    sub = block.sublayer
    if hasattr(sub, "v_proj"):
        return [sub.v_proj.weight, sub.out_proj.weight]
    return [sub.linear1.weight, sub.linear2.weight]


def scale_(param, factor: float) -> None:
    param.data[...] = param.data * factor


def deepnorm_constants(n_encoder: int, n_decoder: int) -> dict:
    """{stack: (α, β)} of DeepNorm for an encoder-decoder of N encoder and M decoder layers:
    encoder α = 0.81·(N⁴M)^(1/16), β = 0.87·(N⁴M)^(-1/16); decoder α = (3M)^(1/4),
    β = (12M)^(-1/4)."""
    n, m = n_encoder, n_decoder
    return {"encoder": (0.81 * (n ** 4 * m) ** (1 / 16), 0.87 * (n ** 4 * m) ** (-1 / 16)),
            "decoder": ((3 * m) ** 0.25, (12 * m) ** -0.25)}


def prepare_deepnorm(model, batch=None) -> None:
    constants = deepnorm_constants(len(model.encoder.layers), len(model.decoder.layers))
    for stack_name, (alpha, beta) in constants.items():
        for block in stack_blocks(getattr(model, stack_name)):
            block.skip_scale = alpha
            for matrix in branch_matrices(block):
                scale_(matrix, beta)


def prepare_t_fixup(model, batch=None) -> None:
    """Embedding N(0, d^-½) × (9M)^(-¼); decoder value, output and FFN matrices × (9M)^(-¼);
    encoder ones × 0.67·N^(-¼) (N, M the encoder's and decoder's layers)."""
    n, m = len(model.encoder.layers), len(model.decoder.layers)
    decoder, encoder = (9 * m) ** -0.25, 0.67 * n ** -0.25
    for table in embedding_tables(model):
        nn.init.normal_(table, 0.0, table.shape[1] ** -0.5)
        scale_(table, decoder)
    for stack, factor in ((model.encoder, encoder), (model.decoder, decoder)):
        for block in stack_blocks(stack):
            for matrix in branch_matrices(block):
                scale_(matrix, factor)


def prepare_admin(model, batch) -> None:
    """Admin's profiling: one forward pass on `batch` with every ω = 1 records Var[F_j(x)] of
    each block; then ω_i² = 1 + Σ_{j<i} Var[F_j] over the blocks before i in its stack (the
    embedding's unit variance plus the earlier branches'). ω stays a constant here."""
    if batch is None:
        raise ValueError("the admin scheme profiles the model: pass a batch to apply_scheme")
    variances = {}

    def observe(block, x, branch, s, out):
        variances[id(block)] = float(np.var(branch.numpy()))

    blocks = [b for stack in (model.encoder, model.decoder) for b in stack_blocks(stack)]
    for block in blocks:
        block.observer = observe
    try:
        with mg.no_grad():
            model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
    finally:
        for block in blocks:
            block.observer = None
    for stack in (model.encoder, model.decoder):
        total = 1.0
        for block in stack_blocks(stack):
            block.skip_scale = math.sqrt(total)
            total += variances[id(block)]


for _scheme in (ResidualScheme("post-LN"), ResidualScheme("pre-LN", norm_first=True),
                ResidualScheme("post-LN, no skip", residual="none"),
                ResidualScheme("pre-LN, no skip", norm_first=True, residual="none"),
                ResidualScheme("plain", residual="plain"),
                ResidualScheme("rezero", residual="rezero"),
                ResidualScheme("admin", prepare=prepare_admin),
                ResidualScheme("deepnorm", prepare=prepare_deepnorm),
                ResidualScheme("t-fixup", residual="skip", prepare=prepare_t_fixup)):
    register_scheme(_scheme)
