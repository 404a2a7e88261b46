"""Self-attention the articles' way, one vector and one dot product at a time, and the check
that it equals what `MultiHeadAttention` computes in one batched call (the weights, the z
vectors before W_O, and the output after it)."""

import math

import numpy as np

import minigrad as mg

from ..attention import AttentionRecorder


def projection_weights(linear):
    """(weight, bias) of a Linear as float64 arrays (a zero bias where it has none)."""
    weight = linear.weight.numpy().astype(np.float64)
    bias = linear.bias.numpy().astype(np.float64) if linear.bias is not None else \
        np.zeros(weight.shape[0])
    return weight, bias


def attention_step_by_step(attention, x):
    """Self-attention over the rows of `x` (len, d_model), computed the article's way: for each
    head and each word, its q, k, v vectors, the scores q·k, divided by sqrt(d_k), softmax, the
    weighted values and their sum z; one vector and one dot product at a time, in float64.

    Uses the projections of `attention` (a MultiHeadAttention); head h owns columns
    h·d_k .. (h+1)·d_k of each projection (its split_heads). Returns a dict of arrays: q, k, v
    (heads, len, d_k); scores, scaled, weights (heads, len, len); weighted (heads, len, len,
    d_k), z (heads, len, d_k); concat (len, d_model); output (len, d_model) = concat·W_Oᵀ + b."""
    x = np.asarray(x, dtype=np.float64)
    length, heads, d_k = x.shape[0], attention.n_heads, attention.d_head
    projections = {name: projection_weights(getattr(attention, f"{name}_proj")) for name in "qkv"}
    result = {name: np.zeros((heads, length, d_k)) for name in "qkvz"}
    for name in ("scores", "scaled", "weights"):
        result[name] = np.zeros((heads, length, length))
    result["weighted"] = np.zeros((heads, length, length, d_k))
    for h in range(heads):
        columns = slice(h * d_k, (h + 1) * d_k)
        for name, (weight, bias) in projections.items():  # step 1: q, k, v of every word
            for i in range(length):
                result[name][h, i] = weight[columns] @ x[i] + bias[columns]
        for i in range(length):  # the word whose new vector is being computed
            q = result["q"][h, i]
            for j in range(length):
                result["scores"][h, i, j] = float(np.dot(q, result["k"][h, j]))  # step 2
            result["scaled"][h, i] = result["scores"][h, i] / math.sqrt(d_k)  # step 3
            exps = np.exp(result["scaled"][h, i] - result["scaled"][h, i].max())  # step 4
            result["weights"][h, i] = exps / exps.sum()
            for j in range(length):  # step 5: each value vector times its weight
                result["weighted"][h, i, j] = result["weights"][h, i, j] * result["v"][h, j]
            result["z"][h, i] = result["weighted"][h, i].sum(axis=0)  # step 6
    result["concat"] = result["z"].transpose(1, 0, 2).reshape(length, heads * d_k)
    out_weight, out_bias = projection_weights(attention.out_proj)
    result["output"] = result["concat"] @ out_weight.T + out_bias
    return result


def attention_batched(attention, x, mask=None):
    """What `attention` (a MultiHeadAttention) computes in one batched call on `x` (len,
    d_model): weights (heads, len, len) from an AttentionRecorder, z (heads, len, d_k) read at
    the input of its output projection W_O by a forward hook, and the output (len, d_model)."""
    captured = []
    handle = attention.out_proj.register_forward_hook(
        lambda module, inputs, output: captured.append(inputs[0].numpy()))
    try:
        with mg.no_grad(), AttentionRecorder(attention) as recorder:
            output = attention(mg.tensor(np.asarray(x, dtype=np.float32)[None],
                                         device=attention.q_proj.weight.device), mask=mask)
    finally:
        handle.remove()
    length, heads, d_k = x.shape[0], attention.n_heads, attention.d_head
    (weights,) = recorder.weights[attention.record_key]
    z = captured[0][0].reshape(length, heads, d_k).transpose(1, 0, 2)
    return {"weights": weights[0], "z": z, "output": output.numpy()[0]}


def check_step_by_step(stepwise, batched, rtol=1e-4, atol=1e-5):
    """Assert that the step-by-step attention equals the batched module's: the weights, the z
    vectors of every head (before W_O) and the output (after W_O), to float32 tolerance
    (atol scaled by each quantity's largest magnitude). Raises AssertionError naming the
    quantity, the place and size of the largest difference; returns {quantity: max |diff|}."""
    differences = {}
    for name, what in (("weights", "attention weights softmax(q·k/√d_k)"),
                       ("z", "z vectors (before W_O)"), ("output", "output (after W_O)")):
        mine, theirs = (np.asarray(d[name], dtype=np.float64) for d in (stepwise, batched))
        if mine.shape != theirs.shape:
            raise AssertionError(f"step-by-step {what}: shape {mine.shape}, but "
                                 f"MultiHeadAttention's batched call gives {theirs.shape}")
        gap = np.abs(mine - theirs)
        scale = max(1.0, float(np.abs(theirs).max()))
        allowed = atol * scale + rtol * np.abs(theirs)
        if not np.all(gap <= allowed):
            worst = np.unravel_index(np.argmax(gap - allowed), gap.shape)
            raise AssertionError(
                f"step-by-step {what} differ from MultiHeadAttention's batched call: at index "
                f"{tuple(int(i) for i in worst)} the step-by-step value is {mine[worst]:.6g} "
                f"and the module's {theirs[worst]:.6g} (|difference| {gap[worst]:.3g}, "
                f"allowed {allowed[worst]:.3g}); largest |difference| {gap.max():.3g}")
        differences[name] = float(gap.max())
    return differences
