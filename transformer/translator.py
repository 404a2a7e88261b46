"""Translator: a trained run folder turned into a function from sentences to sentences."""

import sys

import minigrad as mg

from .data.tokenizer import detokenize, tokenize
from .evaluation import translate_ids
from .run_folder import RunFolder


class Translator:
    """`Translator.from_checkpoint("runs/toy-en-es").translate(["the ball is blue"])`."""

    def __init__(self, model, vocab):
        self.model, self.vocab = model.eval(), vocab

    @classmethod
    def from_checkpoint(cls, run_dir, which="best", device=None):
        folder = RunFolder(run_dir)
        return cls(folder.load_model(which, device), folder.vocab())

    def translate(self, sentences, beam_size=1, max_len=None):
        """One translation per sentence, in order; unknown words are reported on stderr."""
        single = isinstance(sentences, str)
        sentences = [sentences] if single else list(sentences)
        token_lists = [tokenize(s) for s in sentences]
        for sentence, tokens in zip(sentences, token_lists):
            unknown = self.vocab.unknown(tokens)
            if unknown:
                print(f"translate: unknown word(s) {', '.join(unknown)} in {sentence!r} "
                      "(read as <unk>)", file=sys.stderr)
        ids = [self.vocab.encode(tokens) or [self.vocab.unk_id] for tokens in token_lists]
        width = max(len(i) for i in ids)
        padded = [row + [self.vocab.pad_id] * (width - len(row)) for row in ids]
        src = mg.tensor(padded, dtype="int64", device=self.model.device)
        decoded = translate_ids(self.model, src, self.vocab, beam_size, max_len)
        results = [detokenize(self.vocab.decode(row)) for row in decoded]
        return results[0] if single else results
