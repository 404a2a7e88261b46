"""Translator: a trained run folder turned into a function from sentences to sentences."""

import sys
from textwrap import shorten

import minigrad as mg

from .data.tokenizer import WORDS
from .evaluation import translate_ids
from .run_folder import RunFolder


class Translator:
    """`Translator.from_checkpoint("runs/toy-en-es").translate(["the ball is blue"])`."""

    def __init__(self, model, vocab, tokenizer=WORDS):
        self.model, self.vocab, self.tokenizer = model.eval(), vocab, tokenizer

    @classmethod
    def from_checkpoint(cls, run_dir, which="best", device=None):
        folder = RunFolder(run_dir)
        return cls(folder.load_model(which, device), folder.vocab(), folder.tokenizer())

    def problem(self, sentence):
        """Why `sentence` cannot be translated (blank, or longer than the model reads), or
        None."""
        tokens = self.tokenizer.source(sentence)
        if not tokens:
            return "the sentence is blank"
        if len(tokens) > self.model.config.max_len:
            return (f"the sentence has {len(tokens)} tokens; this model reads at most "
                    f"{self.model.config.max_len} (its max_len)")
        return None

    def warn_about_words(self, sentence):
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

    def translate(self, sentences, beam_size=1, max_len=None):
        """One translation per sentence, in order; unknown words are reported on stderr.
        ValueError names each sentence that cannot be translated (see `problem`)."""
        single = isinstance(sentences, str)
        sentences = [sentences] if single else list(sentences)
        if not sentences:
            return []
        problems = [f"sentence {i} ({shorten(s, 50)!r}): {self.problem(s)}"
                    for i, s in enumerate(sentences, start=1) if self.problem(s)]
        if problems:
            raise ValueError("translate: " + "; ".join(problems))
        for sentence in sentences:
            self.warn_about_words(sentence)
        ids = [self.vocab.encode(self.tokenizer.source(s)) for s in sentences]
        width = max(len(i) for i in ids)
        padded = [row + [self.vocab.pad_id] * (width - len(row)) for row in ids]
        src = mg.tensor(padded, dtype="int64", device=self.model.device)
        decoded = translate_ids(self.model, src, self.vocab, beam_size, max_len)
        results = [self.tokenizer.detokenize(self.vocab.decode(row)) for row in decoded]
        return results[0] if single else results
