"""What attention looks at while a trained model translates one sentence.

    python examples/attention_maps.py --checkpoint runs/toy-en-es
    python examples/attention_maps.py --checkpoint runs/toy-en-es --sentence "the ball is blue"

The sentence is translated greedily; the translation is then fed back once (teacher forcing
gives the same weights as the decoding steps) with an AttentionRecorder. Writes, into --out,
heat maps of each decoder layer's cross-attention and each encoder layer's self-attention
(one panel per head), a map of where one source word (--word, "it" by default) attends in
every encoder layer and head, as the Illustrated Transformer shows for "it" in the default
sentence, and every weight in attention.csv. Prints which source word each target word
attends to most, and the words the chosen one attends to most in each encoder head.
"""

import re
import sys
from pathlib import Path

import numpy as np

import minigrad as mg
from transformer import AttentionRecorder, cli, greedy_decode
from transformer.data import tokenize
from transformer.decoding import default_max_len
from transformer.instruments import plot_attention, write_csv
from transformer.translator import Translator

DEFAULT_SENTENCE = "the animal didn't cross the street because it was too tired"


def attention_while_translating(model, vocab, sentence):
    """(source tokens, produced target tokens, {(stack, layer, sublayer): weights (heads,
    q_len, k_len)}) for the greedy translation of `sentence`; the row of a target token is
    the attention of the step that produced it."""
    source = tokenize(sentence)
    unknown = vocab.unknown(source)
    if unknown:
        print(f"unknown word(s) {', '.join(unknown)}: read as {vocab.id_to_token(vocab.unk_id)}",
              file=sys.stderr)
    src = mg.tensor([vocab.encode(source)], dtype="int64", device=model.device)
    max_len = default_max_len(model, len(source))
    produced = greedy_decode(model, src, max_len, vocab.bos_id, vocab.eos_id).numpy()[0].tolist()
    if vocab.eos_id in produced:
        produced = produced[:produced.index(vocab.eos_id) + 1]
    tgt_in = mg.tensor([[vocab.bos_id] + produced[:-1]], dtype="int64", device=model.device)
    with mg.no_grad(), AttentionRecorder(model) as recorder:
        model(src, tgt_in)
    weights = {key: calls[0][0] for key, calls in recorder.weights.items()}  # one call, row 0
    return source, [vocab.id_to_token(i) for i in produced], weights


def layers_of(weights, stack, sublayer):
    """The layer numbers recorded for (stack, sublayer), in order."""
    return sorted(layer for s, layer, sub in weights if (s, sub) == (stack, sublayer))


def attention_rows(weights, source, target, decoder_inputs):
    """Every weight as a CSV row. A decoder query is named by the token its step produced;
    decoder self-attention keys by the decoder's input tokens (BOS, then the target)."""
    rows = []
    for (stack, layer, sublayer), per_head in sorted(weights.items()):
        queries = source if stack == "encoder" else target
        keys = decoder_inputs if (stack, sublayer) == ("decoder", "self_attn") else source
        for (head, query, key), weight in np.ndenumerate(per_head):
            rows.append({"stack": stack, "layer": layer, "sublayer": sublayer, "head": head + 1,
                         "query": query, "query_token": queries[query], "key": key,
                         "key_token": keys[key], "weight": float(weight)})
    return rows


def show_cross_attention(weights, source, target, out):
    """A heat map per decoder layer; for each target word, the most attended source word."""
    layers = layers_of(weights, "decoder", "cross_attn")
    for layer in layers:
        plot_attention(weights[("decoder", layer, "cross_attn")], target, source,
                       f"decoder layer {layer}: cross-attention of each head",
                       xlabel="source", ylabel="target", path=out / f"cross_attention_{layer}.png")
    print("most attended source word (cross-attention, mean over heads), layer by layer:")
    for position, token in enumerate(target):
        strongest = [source[int(weights[("decoder", layer, "cross_attn")][:, position]
                                .mean(axis=0).argmax())] for layer in layers]
        print(f"  {token:>14} <- {'  '.join(strongest)}")


def show_encoder_attention(weights, source, word, out):
    """A heat map per encoder layer, and where `word` attends in every layer and head."""
    layers = layers_of(weights, "encoder", "self_attn")
    for layer in layers:
        plot_attention(weights[("encoder", layer, "self_attn")], source, source,
                       f"encoder layer {layer}: self-attention of each head",
                       path=out / f"encoder_self_attention_{layer}.png")
    if word not in source:
        print(f"{word!r} is not in the sentence: no map of where it attends")
        return
    position = source.index(word)
    of_word = np.stack([weights[("encoder", layer, "self_attn")][:, position]
                        for layer in layers])  # (layers, heads, src_len)
    file_name = "encoder_attention_of_" + re.sub(r"\W", "_", word) + ".png"
    plot_attention(of_word, [f"head {h + 1}" for h in range(of_word.shape[1])], source,
                   f"where {word!r} attends in each encoder layer",
                   panel_titles=[f"layer {layer}" for layer in layers], ylabel="head",
                   path=out / file_name)
    print(f"where {word!r} attends most (encoder self-attention), layer and head:")
    for layer, per_head in zip(layers, of_word):
        for head, row in enumerate(per_head, start=1):
            top = np.argsort(row)[::-1][:3]
            print(f"  layer {layer} head {head}: "
                  + ", ".join(f"{source[k]} {row[k]:.2f}" for k in top))


def main(argv=None):
    parser = cli.ArgumentParser(description=__doc__)
    cli.add_checkpoint_arguments(parser)
    parser.add_argument("--sentence", default=DEFAULT_SENTENCE)
    parser.add_argument("--word", help="the source word whose encoder self-attention is "
                                       "shown (default: 'it', where the sentence has it)")
    parser.add_argument("--out", default="runs/attention_maps", type=cli.output_folder,
                        help="folder for PNGs and CSV")
    args = parser.parse_args(argv)
    words = tokenize(args.sentence)
    if args.word is not None and args.word.lower() not in words:
        parser.error(f"--word {args.word!r} is not a word of --sentence {args.sentence!r}; "
                     f"choose one of: {', '.join(dict.fromkeys(words))}")
    folder, which = cli.run_checkpoint(args.checkpoint, args.which)
    model, vocab = folder.load_model(which), folder.vocab()
    problem = Translator(model, vocab).problem(args.sentence)
    if problem:
        parser.error(f"--sentence {args.sentence!r}: {problem}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    source, target, weights = attention_while_translating(model, vocab, args.sentence)
    print(f"source:      {' '.join(source)}")
    print(f"translation: {' '.join(target)}")
    decoder_inputs = [vocab.id_to_token(vocab.bos_id)] + target[:-1]
    write_csv(attention_rows(weights, source, target, decoder_inputs), out / "attention.csv")
    show_cross_attention(weights, source, target, out)
    show_encoder_attention(weights, source, (args.word or "it").lower(), out)
    print(f"plots and attention.csv in {out}")


if __name__ == "__main__":
    cli.run(main)
