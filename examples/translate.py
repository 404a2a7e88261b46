"""Translate with a trained run folder: sentences as arguments, or one per line on stdin.

    python examples/translate.py --checkpoint runs/toy-en-es "the ball is blue"
    echo "the black cat drank the milk" | python examples/translate.py --checkpoint runs/toy-en-es

One line of output per sentence, in order. Words the model never read in training are
reported on stderr. A sentence that cannot be translated (longer than the model reads) gets
an error line on stderr and an empty line in its place on stdout; the others are still
translated, and the exit status is then 1. Blank lines on stdin are skipped, with a warning.
"""

import sys
from textwrap import shorten

from transformer import cli
from transformer.translator import Translator


def read_sentences(args):
    """The sentences to translate: the arguments (none may be blank), else stdin's lines."""
    if args.sentences:
        blank = [i for i, s in enumerate(args.sentences, start=1) if not s.strip()]
        if blank:
            raise cli.UsageError(f"sentence argument(s) {', '.join(map(str, blank))} are "
                                 "blank; give each sentence as one non-empty argument")
        return args.sentences
    sentences = []
    for number, line in enumerate(sys.stdin, start=1):
        if line.strip():
            sentences.append(line.strip())
        else:
            print(f"translate: skipped blank line {number} of stdin", file=sys.stderr)
    if not sentences:
        raise cli.UsageError("no sentences given (as arguments or on stdin)")
    return sentences


def main():
    parser = cli.ArgumentParser(description=__doc__)
    parser.add_argument("sentences", nargs="*", help="sentences (default: read stdin)")
    parser.add_argument("--checkpoint", required=True, help="the training run folder")
    parser.add_argument("--which", default="best", choices=("best", "last"))
    parser.add_argument("--beam", type=cli.positive_int, default=1,
                        help="beam size (1 = greedy)")
    parser.add_argument("--device", type=cli.device, default=None, help="cpu | cuda | cuda:N")
    args = parser.parse_args()
    sentences = read_sentences(args)
    translator = Translator.from_checkpoint(args.checkpoint, args.which, args.device)
    problems = {i: translator.problem(s) for i, s in enumerate(sentences)}
    good = [s for i, s in enumerate(sentences) if problems[i] is None]
    translations = iter(translator.translate(good, beam_size=args.beam))
    for i, sentence in enumerate(sentences):
        if problems[i] is None:
            print(next(translations), flush=True)
        else:
            print(f"error: sentence {i + 1} ({shorten(sentence, 50)!r}): {problems[i]}; "
                  "not translated", file=sys.stderr)
            print()
    return 1 if len(good) < len(sentences) else 0


if __name__ == "__main__":
    cli.run(main)
