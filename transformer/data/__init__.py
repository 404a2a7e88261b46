"""Data for the translation tasks: tokenizer, vocabulary, sentence pairs and task loaders."""

from .example import Example
from .grammar import toy_en_es
from .tasks import DATA_TASKS, TASKS, load_task
from .tokenizer import WORDS, WordTokenizer, detokenize, tokenize
from .vocab import Vocab

__all__ = ["DATA_TASKS", "TASKS", "WORDS", "Example", "Vocab", "WordTokenizer", "detokenize",
           "load_task", "tokenize", "toy_en_es"]
