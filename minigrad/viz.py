"""The computation graph as Graphviz DOT text: one node per op and per leaf."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import GraphError

if TYPE_CHECKING:
    from .tensor import Tensor


def _label(tensor, title) -> str:
    return f"{title}\\n{tuple(tensor.shape)} {tensor.dtype}"


def to_dot(tensor: Tensor, name: str = "graph") -> str:
    """DOT text of the graph that produced `tensor` (render with `dot -Tpng`).

    Ops are boxes labelled with op name, shape and dtype of their output; leaves that require
    grad are ellipses; constants are dashed ellipses."""
    lines = [f'digraph "{name}" {{', "  rankdir=BT;", '  node [fontname="Helvetica"];']
    ids: dict = {}
    pending: list = []

    def node_id(t: Tensor) -> str:
        if id(t) not in ids:
            ids[id(t)] = f"n{len(ids)}"
            pending.append(t)
        return ids[id(t)]

    node_id(tensor)
    while pending:
        t = pending.pop()
        me = ids[id(t)]
        fn = t.grad_fn
        if fn is None:
            style = "" if t.requires_grad else ", style=dashed"
            lines.append(f'  {me} [label="{_label(t, "leaf")}", shape=ellipse{style}];')
            continue
        if fn.inputs is None:
            raise GraphError(
                f"to_dot: the graph was freed by backward (at op '{fn.name}'); draw it before "
                "calling backward, or call backward(retain_graph=True)")
        lines.append(f'  {me} [label="{_label(t, fn.name)}", shape=box];')
        for parent in fn.inputs:
            lines.append(f"  {node_id(parent)} -> {me};")
    lines.append("}")
    return "\n".join(lines) + "\n"
