"""Initializations by name: how a Transformer's weights start, applied after it is built.

- "xavier" (the default): what the model builds, every matrix Xavier-uniform (embedding
  rows too, then × √d_model in the stacks): nothing to change;
- "scaled-embedding": the token table N(0, d_model^-½), the table fairseq and T-Fixup use, so
  that a token's row × √d_model has unit power per dimension (the default's rows start about
  √((V + d)/2) times weaker);
- "gain-1": every matrix of the layers N(0, 1/fan_in) (variance-preserving for a linear map,
  with no ReLU correction): the init that separates depth from the default's Xavier shrinkage.

`register_initialization(name, function)` adds one: `function(model)` rewrites the weights in
place, drawing from minigrad's seeded generator.
"""

import math
from collections.abc import Callable

from minigrad import nn

INITIALIZATIONS: dict[str, Callable] = {}


def register_initialization(name: str, function: Callable) -> Callable:
    """Make `function(model)` the initialization called `name`; returns it."""
    if name in INITIALIZATIONS:
        raise ValueError(f"register_initialization: {name!r} is registered already; choose "
                         f"another name than {', '.join(INITIALIZATIONS)}")
    INITIALIZATIONS[name] = function
    return function


def initialize(model, name: str) -> None:
    """Apply the initialization `name` to `model` (in place)."""
    if name not in INITIALIZATIONS:
        raise ValueError(f"initialize: unknown initialization {name!r}; choose from "
                         f"{', '.join(INITIALIZATIONS)}")
    INITIALIZATIONS[name](model)


def embedding_tables(model):
    """The distinct token tables of `model` (one when the embeddings are shared)."""
    tables = {}
    for stack in (model.encoder, model.decoder):
        tables[id(stack.embedding.weight)] = stack.embedding.weight
    return list(tables.values())


def scaled_embedding(model) -> None:
    for table in embedding_tables(model):
        nn.init.normal_(table, 0.0, table.shape[1] ** -0.5)


def gain_one(model) -> None:
    for name, param in model.named_parameters():
        if ".layers." in name and param.ndim == 2:
            nn.init.normal_(param, 0.0, 1.0 / math.sqrt(param.shape[1]))


register_initialization("xavier", lambda model: None)
register_initialization("scaled-embedding", scaled_embedding)
register_initialization("gain-1", gain_one)
