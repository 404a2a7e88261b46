"""Translate with a trained run folder: sentences as arguments, or one per line on stdin.

    python examples/translate.py --checkpoint runs/toy-en-es "the ball is blue"
    echo "the black cat drank the milk" | python examples/translate.py --checkpoint runs/toy-en-es

One line of output per input line, in order, each printed as soon as it is translated: lines
read from stdin are translated as they arrive (those already waiting together), so the tool
works line by line in a pipe. Words the model never read in training are reported on stderr.
A blank line gets an empty line (under --json an object with an "error") and a note on
stderr naming the line; a sentence the model cannot translate (longer than it reads) the
same, with an `error:` note, and the exit status is then 1. --checkpoint takes a run folder
or a checkpoint file in it (RUN/best.npz, RUN/last.npz).

What a translation rests on (docs/translating.md; the forms in docs/conventions.md,
"Translation details"):

    --n-best K     the K best of beam search (K <= --beam), each line "N<TAB>translation",
                   N the sentence's number from 1
    --scores       after the translation: <TAB>score<TAB>log-probability<TAB>each token's
                   log-probability (EOS last), space-separated
    --align        after those: <TAB>the alignment in Pharaoh form ("0-0 1-2 ...", source
                   first) between token positions (the tokenizer's words: "queen's" is two,
                   "queen" "'s"; a subword run's pieces grouped into words) from the heads'
                   average of decoder layer --align-layer (default the last); --align-heads
                   1,3 averages those heads only
    --align-words  the same between the words of the line and of the translation as
                   whitespace separates them ("queen's" is one)
    --length-penalty ALPHA   beam search ranks by log-probability / ((5 + length) / 6)^ALPHA
                   (GNMT; default 0.6, 0 turns it off); --scores prints that score
    --json         one JSON object per sentence instead, with every figure
    --attention    (with --json) the cross-attention of every layer and head
    --score-target FILE   score the translations of FILE (one per sentence, line by line)
                   under the model instead of translating, as fairseq's --score-reference;
                   a blank line of either file gets an empty line; a summary on stderr at
                   the end: sentences, average log-probability per token, perplexity
"""

import argparse
import json
import math
import sys
from pathlib import Path
from queue import Empty, Queue
from textwrap import shorten
from threading import Thread
from typing import NamedTuple

from transformer import cli
from transformer.inspection import pharaoh
from transformer.translator import Translator

BATCH_LIMIT = 256  # lines translated together at most (when that many are already waiting)


def arrived_batches(stream, limit=BATCH_LIMIT):
    """The lines of `stream` as lists of (number from 1, line without its end): each list the
    lines that have arrived by the time the one before is done (at least one, at most
    `limit`), so that no line waits for the next one to arrive. A thread reads the stream."""
    arrived = Queue()

    def read():
        for line in stream:
            arrived.put(line)
        arrived.put(None)

    Thread(target=read, daemon=True).start()
    number, ended = 0, False
    while not ended:
        batch, line = [], arrived.get()
        while True:
            if line is None:
                ended = True
                break
            number += 1
            batch.append((number, line.rstrip("\r\n")))
            if len(batch) == limit:
                break
            try:
                line = arrived.get_nowait()
            except Empty:
                break
        if batch:
            yield batch


def input_batches(args):
    """The input as batches of (number, line), and the name of its lines ("stdin", or
    "sentence argument"). Blank arguments are a usage error: they cannot be meant."""
    if args.sentences:
        blank = [i for i, s in enumerate(args.sentences, start=1) if not s.strip()]
        if blank:
            raise cli.UsageError(f"sentence argument(s) {', '.join(map(str, blank))} are "
                                 "blank; give each sentence as one non-empty argument")
        return iter([list(enumerate(args.sentences, start=1))]), "sentence argument"
    return arrived_batches(sys.stdin), "stdin"


def read_targets(path):
    """The lines of the --score-target file."""
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise cli.UsageError(f"--score-target {path} is not UTF-8 text ({error.reason} at "
                             f"byte {error.start})") from None


def count_mismatch(path, targets, lines):
    return cli.UsageError(f"--score-target {path} has {len(targets)} line(s) but the input "
                          f"has {lines}; give one translation per input line")


def head_numbers(text):
    """--align-heads: head numbers from 1, comma-separated."""
    try:
        return [cli.positive_int(part) for part in text.split(",")]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"{text!r} is not head numbers from 1, "
                                         "comma-separated (1,3)") from None


def check_flags(args, parser):
    if args.attention and not args.json:
        parser.error("--attention prints the weights in the JSON form only; add --json")
    args.align = args.align or args.align_words
    for flag, value in (("--align-layer", args.align_layer), ("--align-heads", args.align_heads)):
        if value is not None and not args.align:
            parser.error(f"{flag} {value if isinstance(value, int) else ','.join(map(str, value))}"
                         f" chooses what --align reads; add --align or --align-words")
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


class Gap(NamedTuple):
    """An input line not translated: the `note` naming the line and its file, the line
    (`source`), the reason alone (`what`), and whether the model `refused` it (rather than the
    line being blank)."""

    note: str
    source: str
    what: str
    refused: bool

    @classmethod
    def of(cls, where, source, what, refused):
        note = f"{where} ({shorten(source, 50)!r}): {what}" if refused else f"{where} is blank"
        return cls(note, source, what, refused)


def print_gap(number, gap, args):
    """The empty line (or JSON object with an `error`) of input line `number`, and its note on
    stderr (`error:` where the model refused the line)."""
    print(f"{'error' if gap.refused else 'translate'}: {gap.note}; "
          f"{'not scored' if args.score_target is not None else 'not translated'}, an empty "
          "line in its place", file=sys.stderr)
    if args.json:
        print(json.dumps({"line": number, "source": gap.source, "error": gap.what},
                         ensure_ascii=False), flush=True)
    else:
        print(flush=True)


class Session:
    """What translate.py does to each batch of input lines, and what it counts."""

    def __init__(self, translator, args, name) -> None:
        self.translator, self.args, self.name = translator, args, name
        self.targets = None if args.score_target is None else read_targets(args.score_target)
        self.detail = {"attention": args.attention, "align": args.align,
                       "align_layer": args.align_layer, "align_heads": args.align_heads,
                       "align_words": args.align_words, "length_penalty": args.length_penalty}
        self.lines = self.refused = self.non_blank = 0
        self.scored = [0, 0, 0.0]  # --score-target's sentences, tokens, log-probability

    def gap(self, number, sentence, target):
        """Why line `number` cannot be translated (or scored against `target`): a Gap, or
        None."""
        where = f"line {number} of {self.name}"
        if not sentence:
            return Gap.of(where, sentence, "the sentence is blank", False)
        if problem := self.translator.problem(sentence):
            return Gap.of(where, sentence, problem, True)
        if target is None:
            return None
        where = f"line {number} of {self.args.score_target} (the translation of {where})"
        if not target:
            return Gap.of(where, target, "the translation is blank", False)
        if problem := self.translator.target_problem(target):
            return Gap.of(where, target, problem, True)
        return None

    def run(self, batch) -> None:
        """Translate (or score) `batch`, (number, line) pairs, and print a line for each."""
        args, translator = self.args, self.translator
        self.lines = batch[-1][0]
        if self.targets is not None and self.lines > len(self.targets):
            raise cli.UsageError(f"--score-target {args.score_target} has {len(self.targets)} "
                                 f"line(s) but the input has more (line {self.lines} of "
                                 f"{self.name}); give one translation per input line")
        work = [(number, line.strip(), None if self.targets is None else
                 self.targets[number - 1].strip()) for number, line in batch]
        gaps = {number: self.gap(number, sentence, target) for number, sentence, target in work}
        self.non_blank += sum(1 for _, sentence, _ in work if sentence)
        good = [(n, s, t) for n, s, t in work if gaps[n] is None]
        sentences = [s for _, s, _ in good]
        if not good:
            results = []
        elif args.score_target is not None:
            results = translator.score(sentences, [t for _, _, t in good], **self.detail)
            for translation in (result.translations[0] for result in results):
                self.scored[0] += 1
                self.scored[1] += len(translation.tokens)
                self.scored[2] += translation.log_prob
        elif args.n_best is None and not (args.scores or args.align or args.json):
            results = translator.translate(sentences, beam_size=args.beam,
                                           length_penalty=args.length_penalty)
        else:
            results = translator.translate_detailed(sentences, args.beam, args.n_best or 1,
                                                    **self.detail)
        results = iter(results)
        for number, _, _ in work:
            if (gap := gaps[number]) is not None:
                self.refused += gap.refused
                print_gap(number, gap, args)
            elif isinstance(result := next(results), str):
                print(result, flush=True)
            else:
                print_result(number, result, args)

    def finish(self) -> int:
        """Check the whole input, print --score-target's summary; the exit status."""
        if self.non_blank == 0:
            raise cli.UsageError("no sentences given (as arguments or on stdin)")
        if self.targets is not None and self.lines != len(self.targets):
            raise count_mismatch(self.args.score_target, self.targets, self.lines)
        sentences, tokens, log_prob = self.scored
        if sentences:
            average = log_prob / tokens
            print(f"scored {sentences} sentence(s), {tokens} tokens (EOS included): "
                  f"average log-probability per token {average:.4f}, perplexity "
                  f"{math.exp(-average):.4f}", file=sys.stderr)
        return 1 if self.refused else 0


def main():
    parser = cli.ArgumentParser(description=__doc__)
    parser.add_argument("sentences", nargs="*", help="sentences (default: read stdin)")
    cli.add_checkpoint_arguments(parser)
    cli.add_decoding_arguments(parser)
    parser.add_argument("--device", type=cli.device, default=None, help="cpu | cuda | cuda:N")
    parser.add_argument("--n-best", type=cli.positive_int, default=None, metavar="K",
                        help="print the K best translations of each sentence (K <= --beam)")
    parser.add_argument("--scores", action="store_true",
                        help="print each translation's score and log-probabilities")
    parser.add_argument("--align", action="store_true",
                        help="print each translation's alignment of token positions "
                             "(Pharaoh i-j)")
    parser.add_argument("--align-words", action="store_true",
                        help="--align between whitespace-separated words")
    parser.add_argument("--align-layer", type=cli.positive_int, default=None, metavar="N",
                        help="the decoder layer whose attention aligns (default the last)")
    parser.add_argument("--align-heads", type=head_numbers, default=None, metavar="H,H",
                        help="the heads whose average aligns, numbers from 1 (default all)")
    parser.add_argument("--json", action="store_true", help="one JSON object per sentence")
    parser.add_argument("--attention", action="store_true",
                        help="with --json, the cross-attention of every layer and head")
    parser.add_argument("--score-target", type=Path, default=None, metavar="FILE",
                        help="score these translations (one per input line) instead of "
                             "translating")
    args = parser.parse_args()
    check_flags(args, parser)
    folder, which = cli.run_checkpoint(args.checkpoint, args.which)
    batches, name = input_batches(args)
    translator = Translator.from_checkpoint(folder.path, which, args.device)
    layers = len(translator.model.decoder.layers)
    if args.align_layer is not None and args.align_layer > layers:
        raise cli.UsageError(f"--align-layer {args.align_layer}: this model has {layers} "
                             "decoder layers")
    heads = translator.model.config.n_heads
    if args.align_heads is not None and max(args.align_heads) > heads:
        raise cli.UsageError(f"--align-heads {','.join(map(str, args.align_heads))}: this "
                             f"model has {heads} heads (1 to {heads})")
    session = Session(translator, args, name)
    if args.sentences and session.targets is not None \
            and len(session.targets) != len(args.sentences):
        raise count_mismatch(args.score_target, session.targets, len(args.sentences))
    for batch in batches:
        session.run(batch)
    return session.finish()


if __name__ == "__main__":
    cli.run(main)
