"""Every attention weight of chosen sentences: each sentence translated greedily
(`Translator.translate_detailed`), then its source and translation run through the model once
more, teacher-forced, with an AttentionRecorder: encoder self-attention, decoder
self-attention and cross-attention of every layer and head, what the decoder saw while
decoding (it is causal). The report page draws them; `write_attention_npz` exports one
sentence for bertviz."""

from typing import Any

import numpy as np

import minigrad as mg

from ..attention import AttentionRecorder
from ..masks import padding_mask
from ..translator import Translator

KINDS = {"encoder_attention": ("encoder", "self_attn"),
         "decoder_attention": ("decoder", "self_attn"),
         "cross_attention": ("decoder", "cross_attn")}


def attention_views(model, vocab, tokenizer, sentences) -> list[dict[str, Any]]:
    """Per sentence a dict: `sentence`, `translation`, `encoder_tokens` (the source tokens),
    `decoder_tokens` (the decoder's input: `<bos>` and the translation's tokens; row i of the
    decoder's attention is what it looked at while writing token i + 1, the last row
    `<eos>`), and for each of KINDS a list over layers of float32 arrays (1, heads, queries,
    keys): encoder (source, source), decoder (decoder, decoder), cross (decoder, source)."""
    translator = Translator(model, vocab, tokenizer)
    views = []
    for sentence, result in zip(sentences, translator.translate_detailed(list(sentences))):
        best = result.translations[0]
        source_ids = vocab.encode(tokenizer.source(sentence))
        output_ids = vocab.encode(best.tokens)
        decoder_ids = [vocab.bos_id] + [i for i in output_ids if i != vocab.eos_id]
        src = mg.tensor([source_ids], dtype="int64", device=model.device)
        tgt_in = mg.tensor([decoder_ids], dtype="int64", device=model.device)
        with mg.no_grad(), AttentionRecorder(model) as recorder:
            model(src, tgt_in, padding_mask(src, vocab.pad_id))
        view = {"sentence": sentence, "translation": best.text,
                "encoder_tokens": [vocab.id_to_token(i) for i in source_ids],
                "decoder_tokens": [vocab.id_to_token(i) for i in decoder_ids]}
        for kind, (stack, sublayer) in KINDS.items():
            layers = len(getattr(model, stack).layers)
            view[kind] = [np.asarray(recorder.weights[(stack, number, sublayer)][0], np.float32)
                          for number in range(1, layers + 1)]
        views.append(view)
    return views


def write_attention_npz(view, path) -> None:
    """One of `attention_views`' sentences as an .npz for bertviz: `encoder_attention`,
    `decoder_attention`, `cross_attention` each (layers, 1, heads, queries, keys) (so that
    `list(array)` is bertviz's per-layer list), `encoder_tokens`, `decoder_tokens`,
    `sentence`, `translation`."""
    arrays: dict[str, Any] = {kind: np.stack(view[kind]) for kind in KINDS}
    np.savez(path, **arrays, encoder_tokens=np.array(view["encoder_tokens"]),
             decoder_tokens=np.array(view["decoder_tokens"]),
             sentence=np.array(view["sentence"]), translation=np.array(view["translation"]))
