"""What a translation rests on: teacher-forced scores and cross-attention, the hard alignment
rule (heads averaged, pieces gathered into words) and its Pharaoh form, on a model built by
hand so that its alignment is known exactly."""

import numpy as np
import pytest

import minigrad as mg
from transformer import Transformer, TransformerConfig, Translator
from transformer.data import Vocab
from transformer.data.subword import SubwordTokenizer
from transformer.data.tokenizer import WORDS, detokenize, tokenize
from transformer.inspection import hard_alignment, line_words, pharaoh, teacher_forced

WORDS_OF_TOY = ["a", "b", "c", "d", "e", "f", "g", "h"]


@pytest.fixture(scope="module")
def position_matcher():
    """A Translator whose decoder layer 1 attends from target position j to source position j
    and whose layer 2 attends evenly everywhere.

    Every weight is zero but the LayerNorms' (ones) and layer 1's cross-attention query and
    key projections (identities): embeddings vanish, so every stream holds only LayerNorm of
    its sinusoidal position, all of one length; the query of position j then meets its own
    key with the largest dot product (Cauchy-Schwarz). Layer 2's zero queries give every
    source position the same weight, and the first one wins the tie."""
    vocab = Vocab(["<pad>", "<bos>", "<eos>", "<unk>", *WORDS_OF_TOY])
    model = Transformer(TransformerConfig(
        src_vocab_size=len(vocab), tgt_vocab_size=len(vocab), d_model=16, n_heads=1,
        n_encoder_layers=1, n_decoder_layers=2, d_ff=16, dropout=0.0, max_len=32))
    for name, parameter in model.named_parameters():
        parameter.data[...] = 1.0 if name.endswith("norm.weight") else 0.0
    cross = model.decoder.layers[0].cross_attn.sublayer
    for projection in (cross.q_proj, cross.k_proj):
        projection.weight.data[...] = 4.0 * np.eye(16, dtype=np.float32)
    return Translator(model, vocab, WORDS)


def test_scores_and_attention_of_a_given_translation(position_matcher):
    result = position_matcher.score("a b c d e", "h g f", attention=True, align=True,
                                    align_layer=1)
    assert result.source_tokens == ["a", "b", "c", "d", "e"]
    [translation] = result.translations
    assert translation.text == "h g f" and translation.tokens == ["h", "g", "f", "<eos>"]
    # every logit is 0: each token has probability 1 / vocabulary size
    np.testing.assert_allclose(translation.token_log_probs, [-np.log(12)] * 4, rtol=1e-6)
    assert translation.log_prob == pytest.approx(-4 * np.log(12))
    assert translation.score == pytest.approx(translation.log_prob / (9 / 6) ** 0.6)
    attention = translation.attention
    assert attention.shape == (2, 1, 4, 5)  # layers, heads, tokens (EOS too), source tokens
    np.testing.assert_allclose(attention.sum(axis=-1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(attention[0, 0, :4].argmax(axis=-1), [0, 1, 2, 3])
    np.testing.assert_allclose(attention[1], 0.2, rtol=1e-6)
    assert translation.alignment == [(0, 0), (1, 1), (2, 2)]  # EOS is no word
    assert translation.token_alignment == translation.alignment


def test_the_alignment_layer_is_chosen_and_defaults_to_the_last(position_matcher):
    def alignment(**layer):
        [translation] = position_matcher.score(["a b c d"], ["e f g h"], align=True,
                                               **layer)[0].translations
        return pharaoh(translation.alignment)

    assert alignment(align_layer=1) == "0-0 1-1 2-2 3-3"
    assert alignment(align_layer=2) == alignment() == "0-0 0-1 0-2 0-3"
    for wrong in (0, 3):
        with pytest.raises(ValueError, match=f"align_layer must be a decoder layer, 1 to 2, "
                                             f"got {wrong}"):
            alignment(align_layer=wrong)


def test_attention_and_alignment_only_when_asked(position_matcher):
    [translation] = position_matcher.translate_detailed("a b c").translations
    assert translation.attention is None and translation.alignment is None
    assert list(translation.as_dict()) == ["translation", "tokens", "token_log_probs",
                                           "log_prob", "score"]


def test_teacher_forced_log_probs_are_zero_at_padding_and_refuse_too_long_outputs(
        position_matcher):
    model = position_matcher.model
    src = mg.tensor([[4, 5, 6], [4, 5, 0]])
    log_probs = teacher_forced(model, src, np.array([[7, 8, 2], [7, 2, 0]]), 1)
    assert log_probs.dtype == np.float64 and log_probs.shape == (2, 3)
    assert log_probs[1, 2] == 0.0 and (log_probs[0] < 0).all()
    with pytest.raises(ValueError, match="outputs of 33 tokens; this model has 32 positions"):
        teacher_forced(model, src, np.full((2, 33), 4), 1)


def test_pieces_are_gathered_into_words_by_summing_sources_and_averaging_targets():
    """Target word 0 is pieces 0-1, word 1 is piece 2; source word 0 is pieces 0-1, word 1
    piece 2. A piece-by-piece argmax would align target piece 0 with source piece 2, but
    source word 0 holds more of the weight in all."""
    attention = np.array([[[0.3, 0.3, 0.4],    # target piece 0 (word 0)
                           [0.2, 0.3, 0.5],    # target piece 1 (word 0)
                           [0.1, 0.1, 0.8],    # target piece 2 (word 1)
                           [0.4, 0.3, 0.3]]])  # EOS: left out
    assert hard_alignment(attention, [0, 1, 2], [0, 1, 2]) == [(2, 0), (2, 1), (2, 2)]
    assert hard_alignment(attention, [0, 0, 1], [0, 0, 1]) == [(0, 0), (1, 1)]
    heads = np.stack([attention[0], attention[0][:, ::-1]])  # the heads are averaged first
    assert hard_alignment(heads, [0, 1, 2], [0, 1]) == [(0, 0), (0, 1)]
    assert hard_alignment(attention, [0, 1, 2], []) == []


def test_word_index_of_pieces_and_of_words():
    assert SubwordTokenizer.word_index(["▁la", "▁bol", "a", "▁es", "▁a", "z", "ul"]) == \
        [0, 1, 1, 2, 3, 3, 3]
    assert SubwordTokenizer.word_index(["la", "▁bola"]) == [0, 1]  # the first piece starts one
    assert WORDS.word_index(["la", "bola", "."]) == [0, 1, 2]


def test_pharaoh_form():
    assert pharaoh([(0, 0), (2, 1), (1, 2)]) == "0-0 2-1 1-2"
    assert pharaoh([]) == ""


def test_line_words_counts_whitespace_separated_words():
    text = "The queen's dog  barked."
    assert line_words(tokenize, detokenize, text, tokenize(text)) == [0, 1, 1, 2, 3, 3]
    decoded = ["la", "<unk>", "es", "azul", "."]  # an <unk> is one word of the written text
    assert line_words(tokenize, detokenize, detokenize(decoded), decoded) == [0, 1, 2, 3, 3]
