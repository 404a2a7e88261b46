"""Subword tokenization: one SentencePiece unigram model per language, trained on the train
split, whose pieces are united into the run's one joint `Vocab` (so the model and its shared
embeddings stay as they are).

SentencePiece (the `subword` extra) is imported here only. A piece is a word's start (marked
"▁", U+2581) or a continuation; the text is the pieces joined, each "▁" a space, so
`detokenize(source(s)) == s` for normal text (single spaces, no leading or trailing
whitespace; SentencePiece's NFKC normalization leaves such text as it is). Case is kept.
A character never seen in training is one piece the vocabulary does not hold (<unk>).
"""

from __future__ import annotations

import hashlib
import io
from typing import Any

MARK = "\u2581"  # SentencePiece's word-start mark
SIDES = ("source", "target")
TRAINING_SAMPLE = 1_000_000  # sentences per side


def _sentencepiece():
    try:
        import sentencepiece
    except ImportError as error:
        raise ImportError("subword vocabularies need SentencePiece: "
                          "pip install -e '.[subword]'") from error
    return sentencepiece


class SubwordTokenizer:
    """Two SentencePiece models, the source language's and the target language's.
    `source(text)` and `target(text)` split a sentence into pieces, `detokenize(pieces)`
    joins pieces of either into text."""

    kind = "subword"

    def __init__(self, source_model: bytes, target_model: bytes) -> None:
        spm = _sentencepiece()
        self.models = {"source": bytes(source_model), "target": bytes(target_model)}
        self._processors = {}
        for side, model in self.models.items():
            processor = spm.SentencePieceProcessor()
            try:
                processor.LoadFromSerializedProto(model)
            except RuntimeError:
                raise ValueError(f"the {side} tokenizer model is not a SentencePiece model "
                                 f"({len(model)} bytes)") from None
            self._processors[side] = processor

    @classmethod
    def train(cls, sources, targets, pieces: int, threads: int = 1) -> SubwordTokenizer:
        """Train a unigram model of at most `pieces` pieces on each side's sentences (the
        train split; iterables, read once). Fewer come out when the text does not hold that
        many. Of a larger corpus, a sample of TRAINING_SAMPLE sentences (always the same one
        for the same sentences) is what the models are trained on."""
        spm = _sentencepiece()
        models = []
        for side, sentences in zip(SIDES, (sources, targets)):
            model = io.BytesIO()
            spm.set_random_generator_seed(0)
            try:
                spm.SentencePieceTrainer.train(
                    sentence_iterator=iter(sentences), model_writer=model, vocab_size=pieces,
                    model_type="unigram", character_coverage=1.0, hard_vocab_limit=False,
                    unk_id=0, bos_id=-1, eos_id=-1, pad_id=-1, num_threads=threads,
                    input_sentence_size=TRAINING_SAMPLE, shuffle_input_sentence=True,
                    minloglevel=2)
            except RuntimeError as error:
                raise ValueError(f"SentencePiece could not train the {side} tokenizer with "
                                 f"{pieces} pieces: "
                                 f"{' '.join(str(error).split())}") from None
            models.append(model.getvalue())
        return cls(*models)

    def pieces(self, side) -> list[str]:
        """Every piece of `side`'s model except its unknown and control symbols, in id
        order."""
        processor = self._processors[side]
        return [processor.id_to_piece(i) for i in range(processor.get_piece_size())
                if not (processor.is_unknown(i) or processor.is_control(i))]

    def source(self, text) -> list[str]:
        return self._processors["source"].encode(text, out_type=str)

    def target(self, text) -> list[str]:
        return self._processors["target"].encode(text, out_type=str)

    @staticmethod
    def detokenize(pieces) -> str:
        return "".join(pieces).replace(MARK, " ").strip()

    @staticmethod
    def word_index(pieces) -> list[int]:
        """The word each piece belongs to, counted from 0: a piece marked "▁" starts the next
        word, so word i is the i-th whitespace-separated word of `detokenize(pieces)`."""
        index, word = [], -1
        for number, piece in enumerate(pieces):
            word += piece.startswith(MARK) or number == 0
            index.append(word)
        return index

    def digest(self) -> str:
        """A fingerprint of both models."""
        return hashlib.sha256(self.models["source"] + b"\0" + self.models["target"]
                              ).hexdigest()[:16]

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind,
                "pieces": {side: len(self.pieces(side)) for side in SIDES},
                "digest": self.digest()}
