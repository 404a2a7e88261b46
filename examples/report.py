"""One page to look inside a training run, offline: its curves, its sample translations over
training, its gradient flow (when recorded with --record-flow) and an attention view of
chosen sentences (layer and head choosers; point at a word to see what it attends to).

    python examples/report.py --checkpoint runs/toy-en-es            # runs/toy-en-es/report.html
    python examples/report.py --checkpoint runs/toy-en-es --out report --sentence "the ball is blue"
    python examples/report.py --checkpoint runs/toy-en-es --curves-only   # curves.png, flow.png
    python examples/report.py --checkpoint runs/toy-en-es/last.npz   # before the first validation

Also writes attention.npz, the first sentence's attention for bertviz (docs/inspecting.md).
Needs plotly (the `examples` extra), except --curves-only.
"""

from transformer import cli
from transformer.monitoring import (
    attention_views,
    read_samples,
    write_attention_npz,
    write_curves,
    write_flow_figure,
    write_report,
)
from transformer.monitoring.report import plotly
from transformer.pipeline import SHOWCASE


def parse_arguments(argv=None):
    parser = cli.ArgumentParser(description=__doc__)
    cli.add_checkpoint_arguments(parser)
    parser.add_argument("--out", type=cli.output_folder,
                        help="folder to write into (default: the run folder)")
    parser.add_argument("--sentence", action="append", metavar="TEXT",
                        help="a sentence for the attention view (repeat for more; default: "
                             "the README's three on toy-en-es, else the run's sample "
                             "sentences)")
    parser.add_argument("--curves-only", action="store_true",
                        help="write curves.png (and flow.png, when the flow was recorded) only")
    parser.add_argument("--device", type=cli.device, default="cpu", help="cpu | cuda | cuda:N")
    return parser.parse_args(argv)


def default_sentences(folder, vocab, tokenizer):
    """The README's sentences where the vocabulary knows every word, else the run's sample
    sentences."""
    known = [s for s in SHOWCASE if not vocab.unknown(tokenizer.source(s))]
    if len(known) == len(SHOWCASE):
        return known
    samples = read_samples(folder)
    return [record["source"] for record in next(iter(samples.values()), [])]


def main(argv=None):
    """Everything is read and checked before --out is made: a mistake leaves nothing behind."""
    args = parse_arguments(argv)
    folder, which = cli.run_checkpoint(args.checkpoint, args.which)
    out = args.out if args.out is not None else folder.path
    if args.curves_only:
        if not folder.metrics_records():
            raise cli.UsageError(f"--curves-only: {folder.file('metrics.jsonl')} holds no "
                                 "metrics yet; train the run longer (it logs every "
                                 "--log-every steps), then draw its curves")
        out.mkdir(parents=True, exist_ok=True)
        for path in (write_curves(folder, out / "curves.png"),
                     write_flow_figure(folder, out / "flow.png")):
            if path is not None:
                print(f"wrote {path}")
        return 0
    plotly()  # the extra's error before any work
    vocab, tokenizer = folder.vocab(), folder.tokenizer()
    model = folder.load_model(which, args.device)
    sentences = args.sentence or default_sentences(folder, vocab, tokenizer)
    if not sentences:
        raise cli.UsageError("no sentence for the attention view: give --sentence TEXT (the "
                             "run's vocabulary does not know the README's sentences, and it "
                             "recorded no samples)")
    views = attention_views(model, vocab, tokenizer, sentences)
    out.mkdir(parents=True, exist_ok=True)
    print(f"wrote {write_report(folder, views, out / 'report.html')}")
    write_attention_npz(views[0], out / "attention.npz")
    print(f"wrote {out / 'attention.npz'} (attention of {views[0]['sentence']!r})")
    return 0


if __name__ == "__main__":
    cli.run(main)
