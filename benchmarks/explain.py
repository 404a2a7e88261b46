"""Milliseconds to compute one sentence's full set of views for the explain page:
`transformer.illustrated.explanation.explain` (translate.py's decoding, the recorded pass, the
nine sections' panels) and its JSON text, as the app sends it. The target: within 1 second on
2 CPU cores for the main job's model.

    python benchmarks/explain.py [--checkpoint RUN [--which best|last]] [--sentence "..."]
        [--beam K] [--length-penalty A] [--repeats 20] [--json]

Without --checkpoint the model is the main job's, freshly initialized from seed 0 on the
toy-en-es vocabulary (an untrained model decodes to its length limit: more steps than a
trained one). minigrad on the CPU only (no --framework).
"""

import json
import resource
import statistics
import time

import minigrad as mg
from transformer import cli
from transformer.builders import fresh_setup
from transformer.data.tokenizer import WORDS
from transformer.illustrated import ANIMAL
from transformer.illustrated.explanation import explain
from transformer.model import Transformer
from transformer.translator import Translator


def translator_of(checkpoint, which):
    """The run's Translator on the CPU, or the main job's model fresh from seed 0."""
    if checkpoint is not None:
        folder, which = cli.run_checkpoint(checkpoint, which)
        return Translator.from_checkpoint(folder.path, which, "cpu"), str(checkpoint)
    vocab, config = fresh_setup()
    mg.manual_seed(0)
    return Translator(Transformer(config), vocab, WORDS), "main job, fresh (seed 0)"


def main(argv=None):
    parser = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_checkpoint_arguments(parser, required=False)
    parser.add_argument("--sentence", default=ANIMAL, help="default: the first article's "
                                                           f"{ANIMAL!r}")
    cli.add_decoding_arguments(parser)
    parser.add_argument("--repeats", type=cli.positive_int, default=20)
    parser.add_argument("--json", action="store_true", help="print one JSON record, last")
    args = parser.parse_args(argv)
    translator, model = translator_of(args.checkpoint, args.which)
    if problem := translator.problem(args.sentence):
        raise cli.UsageError(f"--sentence {args.sentence!r}: {problem}")
    times, size = [], 0
    for _ in range(args.repeats + 1):  # the first one warms up
        started = time.perf_counter()
        size = len(json.dumps(explain(translator, args.sentence, args.beam,
                                      args.length_penalty)).encode())
        times.append(time.perf_counter() - started)
    times = times[1:]
    record = {"benchmark": "explain", "config": model, "framework": "minigrad", "device": "cpu",
              "figure": "median_ms", "median_ms": 1000 * statistics.median(times),
              "min_ms": 1000 * min(times), "max_ms": 1000 * max(times),
              "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
              "json_bytes": size, "sentence": args.sentence, "beam": args.beam,
              "length_penalty": args.length_penalty, "repeats": args.repeats}
    print(f"{model}: the views of {args.sentence!r} (beam {args.beam}) in "
          f"{record['median_ms']:.0f} ms (median of {len(times)}; {record['min_ms']:.0f}-"
          f"{record['max_ms']:.0f}), JSON {size / 1e6:.2f} MB")
    if args.json:
        print(json.dumps(record))


if __name__ == "__main__":
    cli.run(main)
