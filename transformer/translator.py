"""Translator: a trained run folder turned into a function from sentences to sentences, and
from sentences to what each translation rests on (`TranslationResult`)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from textwrap import shorten
from typing import Any

import numpy as np

import minigrad as mg

from .data.tokenizer import WORDS
from .decoding import beam_search_n_best, default_max_len, penalized_score
from .evaluation import translate_ids
from .inspection import (
    check_align_heads,
    check_align_layer,
    hard_alignment,
    line_words,
    pharaoh,
    teacher_forced,
)
from .run_folder import RunFolder


@dataclass
class Translation:
    """One translation of a sentence and what it rests on: its `tokens` (EOS last where
    produced), the log-probability of each given the source and the tokens before it, their
    sum `log_prob`, and `score`: log_prob divided by the GNMT length penalty, what beam search
    ranks by. On request the cross-attention `attention` (layers, heads, tokens, source
    tokens), and the `alignment`: (source word, target word) pairs, one per word of `text`,
    from the heads' average of one decoder layer (`inspection.hard_alignment`), and per token
    (`token_alignment`: the same as `alignment` in a word-level run)."""

    text: str
    tokens: list[str]
    token_log_probs: list[float]
    log_prob: float
    score: float
    attention: np.ndarray | None = None
    alignment: list[tuple[int, int]] | None = None
    token_alignment: list[tuple[int, int]] | None = None

    def as_dict(self, subword=False) -> dict:
        """The JSON form (docs/conventions.md, "Translation details"): alignments in Pharaoh
        form, the token alignment only where it differs in kind (`subword`)."""
        record = {"translation": self.text, "tokens": self.tokens,
                  "token_log_probs": [round(p, 6) for p in self.token_log_probs],
                  "log_prob": round(self.log_prob, 6), "score": round(self.score, 6)}
        if self.alignment is not None:
            record["alignment"] = pharaoh(self.alignment)
            if subword:
                record["token_alignment"] = pharaoh(self.token_alignment)
        if self.attention is not None:
            record["attention"] = np.round(self.attention.astype(np.float64), 6).tolist()
        return record


@dataclass(frozen=True)
class Aligning:
    """How to align: decoder `layer` (from 1), the average of `heads` (indices from 0),
    between the line's whitespace-separated `words` or the tokenizer's; whether `wanted`."""

    layer: int
    heads: list[int]
    words: bool
    wanted: bool


@dataclass
class TranslationResult:
    """A sentence, its tokens, and its translations, best first."""

    source: str
    source_tokens: list[str]
    translations: list[Translation]
    subword: bool = False

    def as_dict(self) -> dict:
        return {"source": self.source, "source_tokens": self.source_tokens,
                "translations": [t.as_dict(self.subword) for t in self.translations]}


class Translator:
    """`Translator.from_checkpoint("runs/toy-en-es").translate(["the ball is blue"])`."""

    def __init__(self, model, vocab, tokenizer=WORDS) -> None:
        self.model, self.vocab, self.tokenizer = model.eval(), vocab, tokenizer

    @classmethod
    def from_checkpoint(cls, run_dir, which="best", device=None) -> Translator:
        folder = RunFolder(run_dir)
        return cls(folder.load_model(which, device), folder.vocab(), folder.tokenizer())

    def problem(self, sentence) -> str | None:
        """Why `sentence` cannot be translated (blank, or longer than the model reads), or
        None."""
        tokens = self.tokenizer.source(sentence)
        if not tokens:
            return "the sentence is blank"
        if len(tokens) > self.model.config.max_len:
            return (f"the sentence has {len(tokens)} tokens; this model reads at most "
                    f"{self.model.config.max_len} (its max_len)")
        return None

    def warn_about_words(self, sentence) -> None:
        """Report on stderr the words of `sentence` the model never read in training: not in
        the vocabulary at all, or seen only on the target side."""
        tokens = self.tokenizer.source(sentence)
        unknown = self.vocab.unknown(tokens)
        if unknown:
            print(f"translate: unknown word(s) {', '.join(unknown)} in {sentence!r} "
                  "(read as <unk>)", file=sys.stderr)
        unseen = self.vocab.unseen_as_source(tokens)
        if unseen:
            print(f"translate: word(s) {', '.join(unseen)} in {sentence!r} appeared only in "
                  "translations in training, never in a source sentence; the model has not "
                  "learnt to read them", file=sys.stderr)

    def target_problem(self, translation) -> str | None:
        """Why `translation` cannot be scored (longer than the model writes), or None."""
        tokens = self.tokenizer.target(translation)
        if len(tokens) + 1 > self.model.config.max_len:  # and EOS
            return (f"the translation has {len(tokens)} tokens; this model writes at most "
                    f"{self.model.config.max_len - 1} (its max_len, less one for the end of "
                    "sentence)")
        return None

    def translate(self, sentences, beam_size=1, max_len=None, length_penalty=0.6) -> list[str]:
        """One translation per sentence, in order; unknown words are reported on stderr.
        ValueError names each sentence that cannot be translated (see `problem`).
        `length_penalty` is beam search's GNMT alpha (0: none)."""
        sentences, single = self._checked(sentences)
        if not sentences:
            return []
        decoded = translate_ids(self.model, self._source_ids(sentences), self.vocab, beam_size,
                                max_len, length_penalty=length_penalty)
        results = [self.tokenizer.detokenize(self.vocab.decode(row)) for row in decoded]
        return results[0] if single else results

    def translate_detailed(self, sentences, beam_size=1, n_best=1, attention=False,
                           align=False, align_layer=None, max_len=None, length_penalty=0.6,
                           align_heads=None, align_words=False, on_step=None) -> Any:
        """A `TranslationResult` per sentence (one for a string): its `n_best` (<= beam_size)
        best translations by beam search (GNMT `length_penalty` alpha, 0: none), best first,
        with their scores and per-token log-probabilities, and on request the cross-attention
        and the alignment of decoder layer `align_layer` (from 1; default the
        last), averaged over `align_heads` (numbers from 1; default all), between the
        tokenizer's words or, with `align_words`, the whitespace-separated words of the
        sentence and of the translation. beam_size=1 is greedy decoding, whose one
        translation is the one `translate` gives. `on_step` watches beam search step by step
        (`decoding.BeamStep`)."""
        sentences, single = self._checked(sentences)
        aligning = Aligning(check_align_layer(self.model, align_layer),
                            check_align_heads(self.model, align_heads), align_words, align)
        if not sentences:
            return []
        src = self._source_ids(sentences)
        max_len = max_len or default_max_len(self.model, src.shape[1])
        lists = beam_search_n_best(self.model, src, beam_size, max_len, self.vocab.bos_id,
                                   self.vocab.eos_id, n_best, length_penalty,
                                   on_step=on_step)
        owners = [b for b, found in enumerate(lists) for _ in found]
        hypotheses = [h for found in lists for h in found]
        cross = [None] * len(hypotheses)
        if attention or align:  # recorded by teacher forcing: the decoder is causal
            _, cross = self._teacher_forced(src, owners, [h.tokens for h in hypotheses], True)
        translations = [self._translation(sentences[b], h.tokens, h.token_log_probs, c,
                                          attention, aligning, length_penalty)
                        for b, h, c in zip(owners, hypotheses, cross)]
        return self._results(sentences, owners, translations, single)

    def score(self, sentences, translations, attention=False, align=False, align_layer=None,
              length_penalty=0.6, align_heads=None, align_words=False) -> Any:
        """A `TranslationResult` per sentence (one for a string) holding its given
        translation, scored by the model under teacher forcing (fairseq's
        `--score-reference`): each token's log-probability, EOS included, their sum and the
        score beam search would give it (with `length_penalty`); on request its
        cross-attention and alignment (as `translate_detailed`). The
        text is kept as given; a word the vocabulary lacks is read as <unk> (its token),
        reported on stderr."""
        sentences, single = self._checked(sentences)
        translations = [translations] if single else list(translations)
        if len(translations) != len(sentences):
            raise ValueError(f"score: {len(sentences)} sentence(s) but {len(translations)} "
                             "translation(s); give one translation per sentence")
        problems = [f"translation {i} ({shorten(t, 50)!r}): {self.target_problem(t)}"
                    for i, t in enumerate(translations, start=1) if self.target_problem(t)]
        if problems:
            raise ValueError("score: " + "; ".join(problems))
        aligning = Aligning(check_align_layer(self.model, align_layer),
                            check_align_heads(self.model, align_heads), align_words, align)
        if not sentences:
            return []
        for translation in translations:
            unknown = self.vocab.unknown(self.tokenizer.target(translation))
            if unknown:
                print(f"score: unknown word(s) {', '.join(unknown)} in the translation "
                      f"{translation!r} (scored as <unk>)", file=sys.stderr)
        ids = [np.array(self.vocab.encode(self.tokenizer.target(t), add_eos=True))
               for t in translations]
        src = self._source_ids(sentences)
        owners = list(range(len(sentences)))
        log_probs, cross = self._teacher_forced(src, owners, ids, attention or align)
        scored = [self._translation(s, i, p[:len(i)], c, attention, aligning, length_penalty,
                                    t)
                  for s, t, i, p, c in zip(sentences, translations, ids, log_probs, cross)]
        return self._results(sentences, owners, scored, single)

    # ----- the parts -------------------------------------------------------------------------

    def _checked(self, sentences):
        """`sentences` as a list, and whether one string was given; ValueError naming each
        that cannot be translated; unknown words reported on stderr."""
        single = isinstance(sentences, str)
        sentences = [sentences] if single else list(sentences)
        problems = [f"sentence {i} ({shorten(s, 50)!r}): {self.problem(s)}"
                    for i, s in enumerate(sentences, start=1) if self.problem(s)]
        if problems:
            raise ValueError("translate: " + "; ".join(problems))
        for sentence in sentences:
            self.warn_about_words(sentence)
        return sentences, single

    def _source_ids(self, sentences):
        """(batch, width) int64 ids of the sentences, padded, on the model's device."""
        ids = [self.vocab.encode(self.tokenizer.source(s)) for s in sentences]
        width = max(len(i) for i in ids)
        padded = [row + [self.vocab.pad_id] * (width - len(row)) for row in ids]
        return mg.tensor(padded, dtype="int64", device=self.model.device)

    def _teacher_forced(self, src, owners, outputs, attention):
        """Per output (ids of the source row `owners[i]`): its tokens' log-probabilities, and
        its cross-attention (layers, heads, len, src_len) or None."""
        padded = np.full((len(outputs), max(len(o) for o in outputs)), self.vocab.pad_id)
        for row, output in enumerate(outputs):
            padded[row, :len(output)] = output
        rows = mg.tensor(np.array(owners), device=self.model.device)
        found = teacher_forced(self.model, src[rows], padded, self.vocab.bos_id, attention)
        log_probs, cross = found if attention else (found, [None] * len(outputs))
        return list(log_probs), list(cross)

    def _translation(self, sentence, ids, token_log_probs, cross, attention, aligning,
                     length_penalty, text=None):
        """A Translation of output `ids` of `sentence` (its `text`: by default, the ids
        detokenised); `cross` (layers, heads, len, src_len) its cross-attention or None;
        `aligning` how to align."""
        source_tokens = self.tokenizer.source(sentence)
        ids = [int(i) for i in ids]
        tokens = [self.vocab.id_to_token(i) for i in ids]
        log_prob = float(np.sum(token_log_probs))
        translation = Translation(
            self.tokenizer.detokenize(self.vocab.decode(ids)) if text is None else text, tokens,
            [float(p) for p in token_log_probs], log_prob,
            penalized_score(log_prob, len(ids), length_penalty))
        if cross is not None:
            cross = cross[:, :, :len(ids), :len(source_tokens)]
            if attention:
                translation.attention = cross
            if aligning.wanted:
                layer = cross[aligning.layer - 1][aligning.heads]
                target = tokens[:-1] if ids and ids[-1] == self.vocab.eos_id else tokens
                translation.token_alignment = hard_alignment(
                    layer, range(len(source_tokens)), range(len(target)))
                if aligning.words:
                    source_words = line_words(self.tokenizer.source, self.tokenizer.detokenize,
                                              sentence, source_tokens)
                    target_words = line_words(self.tokenizer.target, self.tokenizer.detokenize,
                                              translation.text, target)
                else:
                    source_words = self.tokenizer.word_index(source_tokens)
                    target_words = self.tokenizer.word_index(target)
                translation.alignment = hard_alignment(layer, source_words, target_words)
        return translation

    def _results(self, sentences, owners, translations, single):
        results = [TranslationResult(s, self.tokenizer.source(s), [], self.tokenizer.kind
                                     == "subword") for s in sentences]
        for owner, translation in zip(owners, translations):
            results[owner].translations.append(translation)
        return results[0] if single else results
