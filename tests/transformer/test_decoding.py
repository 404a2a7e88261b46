"""Greedy decoding and beam search: layout of the results, EOS and padding, the key/value cache
against re-running the decoder, beam size 1 against greedy, and beam scores against the
model's own probabilities (and against exhaustive search); n-best lists and their per-token
log-probabilities."""

import itertools

import numpy as np
import pytest

import minigrad as mg
from minigrad.nn import functional as F
from transformer import Transformer, TransformerConfig, beam_search, greedy_decode
from transformer.decoding import beam_search_n_best, default_max_len
from transformer.masks import padding_mask

PAD, BOS, EOS, VOCAB, MAX_LEN = 0, 1, 2, 12, 10
NEVER = VOCAB  # an id the model cannot produce: decoding runs to max_len


def tiny_model(vocab=VOCAB, seed=0, **changes):
    mg.manual_seed(seed)
    config = TransformerConfig(src_vocab_size=vocab, tgt_vocab_size=vocab, d_model=16,
                               n_heads=2, n_encoder_layers=2, n_decoder_layers=2, d_ff=32,
                               dropout=0.1, **changes)
    return Transformer(config).eval()


@pytest.fixture(scope="module")
def model():
    return tiny_model()


@pytest.fixture(scope="module")
def src():
    rows = np.random.default_rng(0).integers(3, VOCAB, (4, 6))
    rows[1, 4:] = PAD
    return mg.tensor(rows)


@pytest.fixture(scope="module")
def free_run(model, src):
    """Greedy output when no EOS can stop it: (batch, MAX_LEN)."""
    return greedy_decode(model, src, MAX_LEN, BOS, NEVER).numpy()


def cut_at(tokens, eos):
    """What decoding with `eos` must give, from a run that ignored it: each row up to its first
    EOS, then PAD; as wide as the longest row."""
    out = np.full_like(tokens, PAD)
    lengths = []
    for row, out_row in zip(tokens, out):
        ends = np.flatnonzero(row == eos)
        length = ends[0] + 1 if ends.size else len(row)
        out_row[:length] = row[:length]
        lengths.append(length)
    return out[:, :max(lengths)]


def sequence_scores(model, src, tokens, eos, alpha):
    """Each row's log-probability under teacher forcing, up to its first EOS (or the whole row),
    divided by the GNMT penalty ((5 + length) / 6)^alpha."""
    tgt_in = np.concatenate([np.full((len(tokens), 1), BOS), tokens[:, :-1]], axis=1)
    log_probs = F.log_softmax(model(src, mg.tensor(tgt_in)), axis=-1).numpy()
    picked = np.take_along_axis(log_probs, tokens[:, :, None], axis=2)[:, :, 0]
    scores = []
    for row, logp in zip(tokens, picked):
        ends = np.flatnonzero(row == eos)
        length = ends[0] + 1 if ends.size else len(row)
        scores.append(logp[:length].sum() / ((5 + length) / 6) ** alpha)
    return np.array(scores)


def test_greedy_returns_int64_ids_on_the_models_device(model, src):
    tokens, logits = greedy_decode(model, src, MAX_LEN, BOS, EOS, return_logits=True)
    assert tokens.dtype == np.int64 and tokens.device == model.device
    assert tokens.ndim == 2 and tokens.shape[0] == 4 and 1 <= tokens.shape[1] <= MAX_LEN
    assert logits.shape == tokens.shape + (VOCAB,) and logits.dtype == np.float32
    assert not tokens.requires_grad and not logits.requires_grad


def test_greedy_stops_at_eos_and_pads_after_it(model, src, free_run):
    for eos in np.unique(free_run):
        tokens = greedy_decode(model, src, MAX_LEN, BOS, int(eos)).numpy()
        np.testing.assert_array_equal(tokens, cut_at(free_run, eos))


def test_stop_at_eos_false_runs_exactly_max_len_steps(model, src, free_run):
    eos = int(free_run[0, 1])
    tokens, logits = greedy_decode(model, src, MAX_LEN, BOS, eos, return_logits=True,
                                   stop_at_eos=False)
    assert tokens.shape == (4, MAX_LEN) and logits.shape == (4, MAX_LEN, VOCAB)
    expected = cut_at(free_run, eos)
    np.testing.assert_array_equal(tokens.numpy()[:, :expected.shape[1]], expected)
    assert (tokens.numpy()[:, expected.shape[1]:] == PAD).all()


def test_greedy_logits_are_the_models_logits_for_the_fed_prefix(model, src, free_run):
    eos = int(free_run[0, 2])
    tokens, logits = greedy_decode(model, src, MAX_LEN, BOS, eos, return_logits=True)
    tokens = tokens.numpy()
    tgt_in = np.concatenate([np.full((4, 1), BOS), tokens[:, :-1]], axis=1)  # PAD after EOS too
    np.testing.assert_allclose(logits.numpy(), model(src, mg.tensor(tgt_in)).numpy(), atol=1e-5)
    finished = np.cumsum(tokens == eos, axis=1) - (tokens == eos) > 0  # steps after an EOS
    np.testing.assert_array_equal(logits.numpy().argmax(-1)[~finished], tokens[~finished])


@pytest.mark.parametrize("changes", [{}, {"norm_first": True, "positional": "learned"}])
def test_cached_and_uncached_decoding_agree(src, changes):
    model = tiny_model(**changes)
    eos = int(greedy_decode(model, src, MAX_LEN, BOS, NEVER).numpy()[0, 2])
    cached = greedy_decode(model, src, MAX_LEN, BOS, eos, return_logits=True)
    uncached = greedy_decode(model, src, MAX_LEN, BOS, eos, use_cache=False, return_logits=True)
    np.testing.assert_array_equal(cached[0].numpy(), uncached[0].numpy())
    np.testing.assert_allclose(cached[1].numpy(), uncached[1].numpy(), atol=1e-5)
    cached = beam_search(model, src, 3, MAX_LEN, BOS, eos, return_scores=True)
    uncached = beam_search(model, src, 3, MAX_LEN, BOS, eos, use_cache=False, return_scores=True)
    np.testing.assert_array_equal(cached[0].numpy(), uncached[0].numpy())
    np.testing.assert_allclose(cached[1].numpy(), uncached[1].numpy(), atol=1e-5)


@pytest.mark.parametrize("length_penalty", [0.0, 0.6, 1.0])
def test_beam_of_one_is_greedy(model, src, free_run, length_penalty):
    for eos in list(np.unique(free_run)) + [NEVER]:
        greedy = greedy_decode(model, src, MAX_LEN, BOS, int(eos)).numpy()
        beam = beam_search(model, src, 1, MAX_LEN, BOS, int(eos), length_penalty).numpy()
        np.testing.assert_array_equal(beam, greedy)


@pytest.mark.parametrize("beam_size", [1, 2, 4])
def test_beam_layout_and_scores(model, src, free_run, beam_size):
    """EOS ends a row, PAD follows; each returned score is the penalized log-probability the
    model gives the returned tokens."""
    eos = int(free_run[0, 1])
    tokens, scores = beam_search(model, src, beam_size, MAX_LEN, BOS, eos, return_scores=True)
    assert tokens.dtype == np.int64 and tokens.device == model.device
    assert scores.shape == (4,) and scores.dtype == np.float32
    tokens = tokens.numpy()
    assert tokens.shape[0] == 4 and 1 <= tokens.shape[1] <= MAX_LEN
    after_eos = np.cumsum(tokens == eos, axis=1) - (tokens == eos) > 0
    assert (tokens[after_eos] == PAD).all()
    assert (scores.numpy() <= 0).all()
    np.testing.assert_allclose(scores.numpy(), sequence_scores(model, src, tokens, eos, 0.6),
                               rtol=1e-5, atol=1e-5)


def test_wider_beams_find_outputs_at_least_as_probable(model, src, free_run):
    """Without a length penalty, a wider beam here never returns a less probable output (not a
    theorem of beam search, but true of this model and these sources)."""
    eos = int(free_run[0, 1])
    scores = [beam_search(model, src, k, MAX_LEN, BOS, eos, length_penalty=0.0,
                          return_scores=True)[1].numpy() for k in (1, 2, 4, 8)]
    for narrow, wide in itertools.pairwise(scores):
        assert (wide >= narrow - 1e-6).all()


@pytest.mark.parametrize("seed", [1, 2])
def test_a_beam_wider_than_the_search_space_finds_the_best_output(seed):
    """Vocabulary 5, 3 steps, no length penalty: 25 beams keep every prefix, so beam search
    must find the exhaustive optimum over all outputs (ending at EOS, or 3 tokens long)."""
    vocab, steps = 5, 3
    model = tiny_model(vocab=vocab, seed=seed).to(dtype="float64")
    src = mg.tensor(np.array([[3, 4, 3, 4], [4, 4, 3, PAD]]))
    outputs = [seq for n in range(1, steps + 1)
               for seq in itertools.product(range(vocab), repeat=n)
               if EOS not in seq[:-1] and (seq[-1] == EOS or n == steps)]
    padded = np.array([list(seq) + [PAD] * (steps - len(seq)) for seq in outputs])
    tokens, scores = beam_search(model, src, 25, steps, BOS, EOS, length_penalty=0.0,
                                 return_scores=True)
    for row in range(2):
        sources = mg.tensor(np.repeat(src.numpy()[row:row + 1], len(padded), axis=0))
        exhaustive = sequence_scores(model, sources, padded, EOS, 0.0)
        assert scores.numpy()[row] == pytest.approx(exhaustive.max(), abs=1e-9)
        np.testing.assert_array_equal(tokens.numpy()[row],
                                      padded[exhaustive.argmax()][:tokens.shape[1]])


def teacher_forced_log_probs(model, src_row, tokens):
    """Each token's log-probability given the ones before it, from one forward pass."""
    tgt_in = mg.tensor(np.concatenate([[BOS], tokens[:-1]])[None])
    log_probs = F.log_softmax(model(src_row, tgt_in), axis=-1).numpy()[0]
    return log_probs[np.arange(len(tokens)), tokens]


@pytest.mark.parametrize("beam_size, n_best", [(1, 1), (4, 4), (6, 3)])
def test_n_best_lists_are_ordered_distinct_and_scored_by_the_model(model, src, free_run,
                                                                    beam_size, n_best):
    eos = int(free_run[0, 1])
    lists = beam_search_n_best(model, src, beam_size, MAX_LEN, BOS, eos, n_best)
    best = beam_search(model, src, beam_size, MAX_LEN, BOS, eos).numpy()
    assert len(lists) == 4
    for row, hypotheses in enumerate(lists):
        assert len(hypotheses) == n_best
        assert len({tuple(h.tokens) for h in hypotheses}) == n_best
        scores = [h.score for h in hypotheses]
        assert scores == sorted(scores, reverse=True)
        np.testing.assert_array_equal(hypotheses[0].tokens, best[row, :len(hypotheses[0].tokens)])
        for h in hypotheses:
            assert h.tokens.dtype == np.int64 and len(h.token_log_probs) == len(h.tokens)
            assert eos not in h.tokens[:-1] and (h.tokens[-1] == eos or len(h.tokens) == MAX_LEN)
            assert h.log_prob == pytest.approx(h.token_log_probs.sum(), abs=1e-9)
            assert h.score == pytest.approx(h.log_prob / ((5 + len(h.tokens)) / 6) ** 0.6)
            np.testing.assert_allclose(h.token_log_probs,
                                       teacher_forced_log_probs(model, src[row:row + 1], h.tokens),
                                       atol=1e-5)


def test_n_best_lists_are_the_same_with_and_without_the_cache(model, src, free_run):
    eos = int(free_run[0, 1])
    cached = beam_search_n_best(model, src, 4, MAX_LEN, BOS, eos, 4)
    uncached = beam_search_n_best(model, src, 4, MAX_LEN, BOS, eos, 4, use_cache=False)
    for mine, theirs in zip(itertools.chain(*cached), itertools.chain(*uncached)):
        np.testing.assert_array_equal(mine.tokens, theirs.tokens)
        np.testing.assert_allclose(mine.token_log_probs, theirs.token_log_probs, atol=1e-5)


def test_explicit_source_mask_is_the_default_one(model, src):
    mask = padding_mask(src, PAD)
    np.testing.assert_array_equal(greedy_decode(model, src, 5, BOS, EOS, src_mask=mask).numpy(),
                                  greedy_decode(model, src, 5, BOS, EOS).numpy())
    np.testing.assert_array_equal(beam_search(model, src, 2, 5, BOS, EOS, src_mask=mask).numpy(),
                                  beam_search(model, src, 2, 5, BOS, EOS).numpy())


def test_decoding_changes_nothing_on_the_model(src):
    model = tiny_model().train()  # decoding must not switch it to evaluation
    before = {name: p.numpy() for name, p in model.named_parameters()}
    greedy_decode(model, src, 4, BOS, EOS)
    beam_search(model, src, 2, 4, BOS, EOS)
    assert model.training and all(m.training for m in model.modules())
    for name, parameter in model.named_parameters():
        assert parameter.grad is None
        np.testing.assert_array_equal(parameter.numpy(), before[name])


def test_invalid_arguments(model, src):
    with pytest.raises(ValueError, match="max_len"):
        greedy_decode(model, src, 0, BOS, EOS)
    with pytest.raises(ValueError, match="beam_size"):
        beam_search(model, src, 0, MAX_LEN, BOS, EOS)
    with pytest.raises(ValueError, match=r"n_best must be between 1 and beam_size \(2\), got 3"):
        beam_search_n_best(model, src, 2, MAX_LEN, BOS, EOS, 3)


def test_default_max_len_is_twice_the_source_plus_ten_within_the_positions(model):
    positions_after_bos = model.config.max_len - 1
    assert default_max_len(model, 3) == 16
    assert default_max_len(model, positions_after_bos) == positions_after_bos
