"""Running the subject's model and watching it: what residual blocks see, the attention
weights recorded, greedy translations, and the toy grammar's reference translation."""

from contextlib import contextmanager, nullcontext

import minigrad as mg

from ..attention import AttentionRecorder
from ..decoding import default_max_len, greedy_decode


@contextmanager
def observing(blocks):
    """Within the block, every call of the ResidualBlocks `blocks` ({key: block}) appends
    (x, branch, s, out) as NumPy arrays to `seen[key]`; their observers are restored after."""
    seen: dict[str, list] = {key: [] for key in blocks}
    previous = {key: block.observer for key, block in blocks.items()}

    def observer_of(key):
        def observe(block, x, branch, s, out) -> None:
            seen[key].append(tuple(t.numpy() for t in (x, branch, s, out)))
        return observe

    for key, block in blocks.items():
        block.observer = observer_of(key)
    try:
        yield seen
    finally:
        for key, block in blocks.items():
            block.observer = previous[key]


def sublayer_input(block, x):
    """What a ResidualBlock feeds its sublayer: LN(x) under pre-LN, x itself otherwise."""
    if block.norm_first and block.residual != "rezero":
        return block.norm(x)
    return x


def encode_observed(subject, tokens, blocks):
    """Run the encoder on `tokens` (no gradient), observing `blocks`; returns what they saw and
    the attention weights recorded: ({key: [(x, branch, s, out)]}, {record key: [weights]})."""
    with mg.no_grad(), observing(blocks) as seen, AttentionRecorder(subject.model) as recorder:
        subject.model.encode(subject.ids(tokens))
    return seen, recorder.weights


def first_attention(subject, tokens):
    """The first encoder layer's self-attention block, the input its sublayer received when
    the model encoded `tokens`, and the block's branch output F(x)."""
    block = subject.model.encoder.layers[0].self_attn
    seen, _ = encode_observed(subject, tokens, {"block": block})
    x, branch, _, _ = seen["block"][0]
    with mg.no_grad():
        inner = sublayer_input(block, subject.tensor(x)).numpy()[0]
    return block, inner, branch[0]


def greedy(subject, tokens, with_attention=False):
    """Greedy decoding of a source: (produced ids up to EOS included, logits (steps, vocab),
    recorded attention weights or None)."""
    model, vocab = subject.model, subject.vocab
    recorder = AttentionRecorder(model) if with_attention else None
    with recorder if recorder is not None else nullcontext():
        ids, logits = greedy_decode(model, subject.ids(tokens), default_max_len(model, len(tokens)),
                                    vocab.bos_id, vocab.eos_id, return_logits=True)
    produced = ids.numpy()[0].tolist()
    if vocab.eos_id in produced:
        produced = produced[:produced.index(vocab.eos_id) + 1]
    return produced, logits.numpy()[0, :len(produced)], recorder.weights if recorder else None


def translation(subject, tokens) -> str:
    """The greedy translation of `tokens` as text."""
    produced, _, _ = greedy(subject, tokens)
    return " ".join(subject.vocab.decode(produced))


def words(vocab, ids) -> list[str]:
    return [vocab.id_to_token(i) for i in ids]


def reference(tokens):
    """The toy grammar's Spanish for an English sentence of its language (None otherwise)."""
    try:
        from ..data.parse import parse
        from ..data.syntax import spanish

        return spanish(parse(" ".join(tokens)))
    except (ValueError, KeyError):  # outside the grammar: the caller uses the model's output
        return None
