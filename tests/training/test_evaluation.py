"""Evaluation: corpus BLEU and chrF as sacrebleu computes them on plain text, and exact match,
token accuracy, loss and per-phenomenon scores of a model whose every output is scripted, so
the right numbers are known by hand."""

import math

import numpy as np
import pytest
import sacrebleu

import minigrad as mg
from transformer import evaluation
from transformer.data import Example, Vocab, tokenize
from transformer.evaluation import corpus_scores, evaluate, same_text, translate_ids

HYPOTHESES = ["el gato negro bebió la leche", "la bola es roja", "el perro come",
              "los niños no cruzaron la calle porque estaban cansados"]
REFERENCES = ["el gato negro bebió la leche", "la bola es azul", "el perro no come",
              "los niños no cruzaron la calle porque estaban demasiado cansados"]
# sacrebleu 2.6.0: corpus_bleu(HYPOTHESES, [REFERENCES]).score (13a: here the spaces' split)
PINNED_BLEU = 76.78231190873535


# ----- BLEU and chrF --------------------------------------------------------------------------

def test_identical_corpora_score_100():
    assert corpus_scores(REFERENCES, REFERENCES) == {"bleu": pytest.approx(100.0),
                                                     "chrf": pytest.approx(100.0)}


def test_scores_are_sacrebleus_numbers_on_plain_text():
    ours = corpus_scores(HYPOTHESES, REFERENCES)
    assert ours["bleu"] == pytest.approx(sacrebleu.corpus_bleu(HYPOTHESES, [REFERENCES]).score,
                                         abs=1e-9)
    assert ours["bleu"] == pytest.approx(PINNED_BLEU, abs=1e-9)
    assert ours["chrf"] == pytest.approx(
        sacrebleu.corpus_chrf(HYPOTHESES, [REFERENCES]).score, abs=1e-9)


def test_scores_ignore_case_and_split_punctuation_as_sacrebleu_does():
    """Word-level output is lower case and spaced as the detokenizer spaces it."""
    cased = corpus_scores(["the cat sat."], ["The cat sat."])
    assert cased == {"bleu": pytest.approx(100.0), "chrf": pytest.approx(100.0)}
    assert corpus_scores(["the cat sat"], ["The cat sat."])["bleu"] < 100


def test_bleu_of_nothing_in_common_is_zero():
    assert corpus_scores(["a b c d"], ["e f g h"])["bleu"] == 0.0


def test_same_text_ignores_case_and_spacing_only():
    assert same_text("the  ball is blue", "The ball is blue")
    assert not same_text("the ball is blue", "the ball is blue.")


# ----- a scripted model -----------------------------------------------------------------------

EXAMPLES = [  # source, reference, phenomenon, what the model answers
    ("a b c d", "w x y z", "alpha", "w x y z"),  # right
    ("a b c e", "w x y v", "alpha", "w x y z"),  # one token wrong
    ("b c d", "x y z", "beta", "x y z"),  # right
    ("e e e e", "v v v v", "beta", "v v v"),  # one token short
    ("d c b a", "z y x w", "beta", "z y x w"),  # right
]
SCALE = 5.0  # the logit of the scripted token; every other logit is 0


class ScriptedModel:
    """Answers each source with a fixed sentence, whatever its decoder input: the logits at
    target position t pick token t of answer + EOS (then padding), by a margin of SCALE."""

    def __init__(self, vocab, answers):
        self.vocab = vocab
        self.answers = {tuple(vocab.encode(tokenize(source))): vocab.encode(tokenize(answer))
                        for source, answer in answers.items()}

    def eval(self):
        return self

    def answer(self, src_row):
        return self.answers[tuple(int(t) for t in src_row if t != self.vocab.pad_id)]

    def __call__(self, src, tgt_in, src_mask=None, tgt_mask=None):
        batch, length = tgt_in.shape
        logits = np.zeros((batch, length, len(self.vocab)), np.float32)
        for row, source in enumerate(src.numpy()):
            script = self.answer(source) + [self.vocab.eos_id]
            script += [self.vocab.pad_id] * (length - len(script))
            logits[row, np.arange(length), script[:length]] = SCALE
        return mg.tensor(logits)


@pytest.fixture
def scripted(monkeypatch):
    """(model, examples, vocab), with decoding replaced by the model's script (what greedy
    decoding of a model that ignores its decoder input gives)."""
    examples = [Example(source, target, phenomenon)
                for source, target, phenomenon, _ in EXAMPLES]
    vocab = Vocab.build([tokenize(e.src) + tokenize(e.tgt) for e in examples])
    model = ScriptedModel(vocab, {source: answer for source, _, _, answer in EXAMPLES})

    def scripted_translate_ids(model, src, vocab, beam_size=1, max_len=None, src_mask=None):
        return [model.answer(row) for row in src.numpy()]

    monkeypatch.setattr(evaluation, "translate_ids", scripted_translate_ids)
    return model, examples, vocab


def test_exact_match_and_phenomena_count_whole_sentences(scripted):
    model, examples, vocab = scripted
    metrics = evaluate(model, examples, vocab, batch_size=2)  # batches of sorted lengths
    assert metrics["exact_match"] == pytest.approx(3 / 5)
    assert metrics["phenomena"] == {"alpha": pytest.approx(1 / 2), "beta": pytest.approx(2 / 3)}
    assert metrics["max_length_ratio"] == 1.0  # no answer is longer than its reference


def test_max_length_ratio_is_the_longest_output_over_its_reference(monkeypatch):
    examples = [Example("a b", "x y", "alpha"), Example("b c d", "y z w", "alpha")]
    vocab = Vocab.build([tokenize(e.src) + tokenize(e.tgt) for e in examples])
    model = ScriptedModel(vocab, {"a b": "x y x y x", "b c d": "y"})  # a loop, a stop
    monkeypatch.setattr(evaluation, "translate_ids",
                        lambda model, src, vocab, beam_size=1, max_len=None, src_mask=None:
                        [model.answer(row) for row in src.numpy()])
    assert evaluate(model, examples, vocab)["max_length_ratio"] == 2.5


def test_token_accuracy_counts_teacher_forced_target_tokens_eos_included(scripted):
    model, examples, vocab = scripted
    # right answers: 5/5, 4/4, 5/5 (EOS included); "w x y z" for "w x y v": 4/5; "v v v" for
    # "v v v v": 3/5 (it answers EOS where v is due, then padding where EOS is)
    assert evaluate(model, examples, vocab)["token_accuracy"] == pytest.approx(21 / 24)


def test_loss_is_the_mean_cross_entropy_over_target_tokens(scripted):
    model, examples, vocab = scripted
    log_partition = math.log(math.exp(SCALE) + len(vocab) - 1)  # log sum_j exp(logit_j)
    right, wrong = log_partition - SCALE, log_partition  # -log p(target)
    expected = (21 * right + 3 * wrong) / 24
    assert evaluate(model, examples, vocab)["loss"] == pytest.approx(expected, rel=1e-5)


def test_bleu_compares_each_answer_with_its_own_reference(scripted):
    model, examples, vocab = scripted
    expected = sacrebleu.corpus_bleu([answer for *_, answer in EXAMPLES],
                                     [[target for _, target, _, _ in EXAMPLES]]).score
    metrics = evaluate(model, examples, vocab, batch_size=2)
    assert metrics["bleu"] == pytest.approx(expected, abs=1e-9)
    assert 0 < metrics["bleu"] < 100


def test_without_decoding_only_the_teacher_forced_metrics_are_given(scripted):
    model, examples, vocab = scripted
    assert set(evaluate(model, examples, vocab, decode=False)) == {"loss", "token_accuracy"}


# ----- translate_ids --------------------------------------------------------------------------

def test_translate_ids_cuts_at_eos_and_drops_padding(monkeypatch):
    vocab = Vocab.build([["p", "q", "r"]])
    p, q, r = vocab.encode(["p", "q", "r"])
    eos, pad = vocab.eos_id, vocab.pad_id
    decoded = mg.tensor(np.array([[p, q, eos, pad], [r, eos, q, pad], [p, q, r, p]]))
    calls = []

    def fake_decoder(name):
        def decode(*args, **kwargs):
            calls.append(name)
            return decoded
        return decode

    monkeypatch.setattr(evaluation, "greedy_decode", fake_decoder("greedy"))
    monkeypatch.setattr(evaluation, "beam_search", fake_decoder("beam"))

    class Model:
        class config:
            max_len = 64

    src = mg.tensor(np.array([[p, q], [r, pad], [p, p]]))
    assert translate_ids(Model(), src, vocab) == [[p, q], [r], [p, q, r, p]]
    translate_ids(Model(), src, vocab, beam_size=2)
    assert calls == ["greedy", "beam"]
