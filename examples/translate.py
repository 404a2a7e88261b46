"""Translate with a trained run folder: sentences as arguments, or one per line on stdin.

    python examples/translate.py --checkpoint runs/toy-en-es "the ball is blue"
    echo "the black cat drank the milk" | python examples/translate.py --checkpoint runs/toy-en-es

One line of output per sentence, in order. Words the model never read in training are
reported on stderr. A sentence that cannot be translated (longer than the model reads) gets
an error line on stderr and an empty line in its place on stdout; the others are still
translated, and the exit status is then 1. Blank lines on stdin are skipped, with a warning.

What a translation rests on (docs/translating.md; the forms in docs/conventions.md,
"Translation details"):

    --n-best K     the K best of beam search (K <= --beam), each line "N<TAB>translation",
                   N the sentence's number from 1
    --scores       after the translation: <TAB>score<TAB>log-probability<TAB>each token's
                   log-probability (EOS last), space-separated
    --align        after those: <TAB>the word alignment in Pharaoh form ("0-0 1-2 ...",
                   source word first) from decoder layer --align-layer (default the last)
    --json         one JSON object per sentence instead, with every figure
    --attention    (with --json) the cross-attention of every layer and head
    --score-target FILE   score the translations of FILE (one per sentence, line by line)
                   under the model instead of translating, as fairseq's --score-reference
"""

import json
import sys
from pathlib import Path
from textwrap import shorten

from transformer import cli
from transformer.inspection import pharaoh
from transformer.translator import Translator


def read_sentences(args):
    """The sentences to translate, as (number, sentence): the arguments (none may be blank),
    else stdin's lines (blank ones skipped, with a warning); and how many lines the input
    has."""
    if args.sentences:
        blank = [i for i, s in enumerate(args.sentences, start=1) if not s.strip()]
        if blank:
            raise cli.UsageError(f"sentence argument(s) {', '.join(map(str, blank))} are "
                                 "blank; give each sentence as one non-empty argument")
        return list(enumerate(args.sentences, start=1)), len(args.sentences)
    lines = list(enumerate(sys.stdin, start=1))
    if not any(line.strip() for _, line in lines):
        raise cli.UsageError("no sentences given (as arguments or on stdin)")
    return skip_blank(lines, "stdin"), len(lines)


def skip_blank(lines, name):
    """The (number, line) pairs of `lines` that are not blank, stripped; a warning for each
    blank one."""
    kept = []
    for number, line in lines:
        if line.strip():
            kept.append((number, line.strip()))
        else:
            print(f"translate: skipped blank line {number} of {name}", file=sys.stderr)
    return kept


def pair_with_targets(sentences, path, input_lines):
    """(number, sentence, translation) for each sentence and its line of `path`; a pair
    with a blank translation is skipped, with a warning."""
    try:
        targets = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise cli.UsageError(f"--score-target {path} is not UTF-8 text ({error.reason} at "
                             f"byte {error.start})") from None
    if len(targets) != input_lines:
        raise cli.UsageError(f"--score-target {path} has {len(targets)} line(s) but the input "
                             f"has {input_lines}; give one translation per input line")
    kept = {number for number, _ in skip_blank(enumerate(targets, start=1), str(path))}
    return [(number, sentence, targets[number - 1].strip())
            for number, sentence in sentences if number in kept]


def check_flags(args, parser):
    if args.attention and not args.json:
        parser.error("--attention prints the weights in the JSON form only; add --json")
    if args.align_layer is not None and not args.align:
        parser.error(f"--align-layer {args.align_layer} chooses the layer --align reads; add "
                     "--align")
    if args.score_target is not None:
        if args.n_best is not None or args.beam != 1:
            parser.error("--score-target scores the translations it is given: --beam and "
                         "--n-best do not apply")
        if not args.score_target.exists() or args.score_target.is_dir():
            parser.error(f"--score-target {args.score_target} is not a file; give the "
                         "translations to score, one per input line")
    elif args.n_best is not None and args.n_best > args.beam:
        decoding = "greedy decoding (--beam 1) gives one translation" if args.beam == 1 \
            else f"beam search keeps --beam {args.beam} hypotheses"
        parser.error(f"--n-best {args.n_best} is larger than --beam {args.beam}: {decoding}; "
                     f"give --beam {args.n_best} or more")


def plain(translation, args):
    """A translation's line: the text, then the fields asked for, tab-separated."""
    fields = [translation.text]
    if args.scores or args.score_target is not None:
        fields += [f"{translation.score:.4f}", f"{translation.log_prob:.4f}",
                   " ".join(f"{p:.4f}" for p in translation.token_log_probs)]
    if args.align:
        fields.append(pharaoh(translation.alignment))
    return "\t".join(fields)


def print_result(number, result, args):
    if args.json:
        print(json.dumps({"line": number, **result.as_dict()}, ensure_ascii=False), flush=True)
        return
    for translation in result.translations:
        prefix = f"{number}\t" if args.n_best is not None else ""
        print(prefix + plain(translation, args), flush=True)


def print_problem(number, sentence, problem, args):
    print(f"error: sentence {number} ({shorten(sentence, 50)!r}): {problem}; not "
          f"{'scored' if args.score_target is not None else 'translated'}", file=sys.stderr)
    if args.json:
        print(json.dumps({"line": number, "source": sentence, "error": problem},
                         ensure_ascii=False), flush=True)
    else:
        print()


def main():
    parser = cli.ArgumentParser(description=__doc__)
    parser.add_argument("sentences", nargs="*", help="sentences (default: read stdin)")
    parser.add_argument("--checkpoint", required=True, help="the training run folder")
    parser.add_argument("--which", default="best", choices=("best", "last"))
    parser.add_argument("--beam", type=cli.positive_int, default=1,
                        help="beam size (1 = greedy)")
    parser.add_argument("--device", type=cli.device, default=None, help="cpu | cuda | cuda:N")
    parser.add_argument("--n-best", type=cli.positive_int, default=None, metavar="K",
                        help="print the K best translations of each sentence (K <= --beam)")
    parser.add_argument("--scores", action="store_true",
                        help="print each translation's score and log-probabilities")
    parser.add_argument("--align", action="store_true",
                        help="print each translation's word alignment (Pharaoh i-j)")
    parser.add_argument("--align-layer", type=cli.positive_int, default=None, metavar="N",
                        help="the decoder layer whose attention aligns (default the last)")
    parser.add_argument("--json", action="store_true", help="one JSON object per sentence")
    parser.add_argument("--attention", action="store_true",
                        help="with --json, the cross-attention of every layer and head")
    parser.add_argument("--score-target", type=Path, default=None, metavar="FILE",
                        help="score these translations (one per input line) instead of "
                             "translating")
    args = parser.parse_args()
    check_flags(args, parser)
    lines, input_lines = read_sentences(args)
    translator = Translator.from_checkpoint(args.checkpoint, args.which, args.device)
    if args.align_layer is not None and args.align_layer > len(translator.model.decoder.layers):
        raise cli.UsageError(f"--align-layer {args.align_layer}: this model has "
                             f"{len(translator.model.decoder.layers)} decoder layers")
    detail = {"attention": args.attention, "align": args.align,
              "align_layer": args.align_layer}
    if args.score_target is not None:
        work = pair_with_targets(lines, args.score_target, input_lines)
    else:
        work = [(number, sentence, None) for number, sentence in lines]
    problems = {number: translator.problem(sentence) or
                (target is not None and translator.target_problem(target)) or None
                for number, sentence, target in work}
    good = [(number, sentence, target) for number, sentence, target in work
            if problems[number] is None]
    if not good:
        results = []
    elif args.score_target is not None:
        results = translator.score([s for _, s, _ in good], [t for _, _, t in good], **detail)
    elif args.n_best is None and not (args.scores or args.align or args.json):
        results = translator.translate([s for _, s, _ in good], beam_size=args.beam)
    else:
        results = translator.translate_detailed([s for _, s, _ in good], args.beam,
                                                args.n_best or 1, **detail)
    results = iter(results)
    for number, sentence, _ in work:
        if problems[number] is not None:
            print_problem(number, sentence, problems[number], args)
        elif isinstance(result := next(results), str):
            print(result, flush=True)
        else:
            print_result(number, result, args)
    return 1 if len(good) < len(work) else 0


if __name__ == "__main__":
    cli.run(main)
