"""Translate with a trained run folder: sentences as arguments, or one per line on stdin.

    python examples/translate.py --checkpoint runs/toy-en-es "the ball is blue"
    echo "the black cat drank the milk" | python examples/translate.py --checkpoint runs/toy-en-es
"""

import argparse
import sys

from minigrad.errors import CheckpointError
from transformer.translator import Translator


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sentences", nargs="*", help="sentences (default: read stdin)")
    parser.add_argument("--checkpoint", required=True, help="the training run folder")
    parser.add_argument("--which", default="best", choices=("best", "last"))
    parser.add_argument("--beam", type=int, default=1, help="beam size (1 = greedy)")
    parser.add_argument("--device", default=None)
    args = parser.parse_args()
    sentences = args.sentences or [line.strip() for line in sys.stdin if line.strip()]
    if not sentences:
        parser.error("no sentences given (as arguments or on stdin)")
    try:
        translator = Translator.from_checkpoint(args.checkpoint, args.which, args.device)
    except CheckpointError as error:
        sys.exit(f"translate: {error}")
    for translation in translator.translate(sentences, beam_size=args.beam):
        print(translation)


if __name__ == "__main__":
    main()
