"""Word-level tokenizer shared by every translation task.

Rules of `tokenize`:

- the text is lower-cased;
- a word is a run of letters and digits (accented letters such as á é í ó ú ñ ü ä ö ß
  count as letters); a hyphenated compound stays one word ("well-known");
- a negative contraction is one token: "didn't", "won't", "doesn't", "can't";
- any other clitic after a word is a token of its own, apostrophe first: "girl's" →
  "girl" "'s", "we'll" → "we" "'ll"; so is the apostrophe of a plural possessive:
  "girls'" → "girls" "'";
- every other character (. , ! ? ; : " ( ) ¿ ¡ and the rest) is a token by itself;
- whitespace only separates tokens.

Both the straight (') and the typographic (’) apostrophe are apostrophes.

`detokenize` undoes this for normally spaced text, so `detokenize(tokenize(s)) ==
s.lower()` when words are separated by single spaces, . , ! ? ; : ) and clitics touch the
word before them, ( ¿ ¡ touch the word after them, and double quotes hug what they quote.
Single quotes used as quotation marks are not restored.
"""

import re

_APOSTROPHES = "'’"
_A = f"[{_APOSTROPHES}]"
_TOKEN = re.compile(
    rf"\w+n{_A}t\b"  # negative contraction: didn't, won't
    rf"|\w+(?:-\w+)*"  # word or hyphenated compound
    rf"|(?<=\w){_A}\w+"  # clitic after a word: 's, 'll, 're
    rf"|(?<=s){_A}"  # plural possessive: girls'
    r"|\S"  # any other character
)
_CLOSING = frozenset(".,!?;:)")
_OPENING = frozenset("(¿¡")


def tokenize(text: str) -> list[str]:
    """Split `text` into lower-case tokens by the rules above."""
    return _TOKEN.findall(text.lower())


def detokenize(tokens) -> str:
    """Join tokens into normally spaced text: the inverse of `tokenize` on such text."""
    pieces = []
    glue_next = True  # no space before the first token
    quote_open = False
    for token in tokens:
        if token == '"':
            quote_open = not quote_open
            glue = glue_next or not quote_open  # a closing quote touches the word before it
            glue_next = quote_open  # an opening quote touches the word after it
        else:
            glue = glue_next or token in _CLOSING or token[0] in _APOSTROPHES
            glue_next = token in _OPENING
        pieces.append(token if glue else " " + token)
    return "".join(pieces)


class WordTokenizer:
    """The word-level tokenizer as a run's tokenizer: the same rules on both sides.
    (`transformer.data.subword.SubwordTokenizer` has the same methods.)"""

    kind = "word"

    @staticmethod
    def source(text) -> list[str]:
        return tokenize(text)

    @staticmethod
    def target(text) -> list[str]:
        return tokenize(text)

    @staticmethod
    def detokenize(tokens) -> str:
        return detokenize(tokens)

    @staticmethod
    def word_index(tokens) -> list[int]:
        """The word each token belongs to, counted from 0: every token is a word."""
        return list(range(len(tokens)))

    def describe(self) -> dict[str, str]:
        return {"kind": self.kind}


WORDS = WordTokenizer()
