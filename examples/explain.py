"""The Illustrated Transformer, live on your own model: type a sentence and watch every step
the two articles draw, computed by the model's own forward pass, each number traced to the
line of code that computed it (docs/illustrated/explain.md).

    python examples/explain.py --checkpoint runs/toy-en-es
    python examples/explain.py --checkpoint runs/toy-en-es --export explained.html \\
        --sentence "the black cat drank the milk" --sentence "the ball is blue"

The first starts the app on 127.0.0.1 and prints its address (open it in a browser; Ctrl-C
stops it); it fetches nothing from anywhere, and serves nothing beyond this machine. The
second writes the same page for the given sentences as one offline HTML file, keeping an
existing FILE unless --overwrite. --beam and --length-penalty decode as translate.py does
(the page's translation is translate.py's); in the app they are the page's starting options.
"""

import errno
from pathlib import Path

from transformer import cli
from transformer.illustrated.app import ExplainServer
from transformer.illustrated.export import export_page
from transformer.translator import Translator

DEFAULT_PORT = 8048


def check_flags(args, parser):
    if args.export is None:
        if args.sentence:
            parser.error("--sentence gives the sentences of an exported page; add --export "
                         "FILE (the app takes its sentences on the page)")
        if args.overwrite:
            parser.error("--overwrite lets --export replace its FILE; add --export FILE")
        return
    if args.port is not None:
        parser.error(f"--port {args.port} is the app's; --export {args.export} writes a file "
                     "instead of serving: give one of them")
    if not args.sentence:
        parser.error(f"--export {args.export} needs the sentences to explain: add --sentence "
                     "\"...\" (repeatable)")
    if blank := [i for i, s in enumerate(args.sentence, start=1) if not s.strip()]:
        parser.error(f"--sentence number {', '.join(map(str, blank))} "
                     f"{'is' if len(blank) == 1 else 'are'} blank; give each sentence as one "
                     "non-empty argument")
    if args.export.is_dir():
        parser.error(f"--export {args.export} is a folder; give the HTML file to write")
    if not args.export.parent.is_dir():
        parser.error(f"--export {args.export}: the folder {args.export.parent} does not "
                     "exist; make it first")
    if args.export.exists() and not args.overwrite:
        parser.error(f"--export {args.export} exists; add --overwrite to replace it, or give "
                     "another file")


def serve(translator, origin, args):
    port = DEFAULT_PORT if args.port is None else args.port
    try:
        server = ExplainServer(translator, origin, port, args.beam, args.length_penalty)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise cli.UsageError(f"--port {port} is in use; give another --port, or "
                                 "--port 0 for a free one") from None
        raise
    print(f"explaining {origin} at {server.address} (Ctrl-C stops it)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", flush=True)
    finally:
        server.server_close()


def main():
    parser = cli.ArgumentParser(description=__doc__)
    cli.add_checkpoint_arguments(parser)
    cli.add_decoding_arguments(parser)
    parser.add_argument("--device", type=cli.device, default=None, help="cpu | cuda | cuda:N")
    parser.add_argument("--port", type=cli.port, default=None,
                        help=f"the app's port on 127.0.0.1 (default {DEFAULT_PORT}; 0: a free "
                             "one)")
    parser.add_argument("--export", type=Path, default=None, metavar="FILE",
                        help="write the page of the --sentence(s) to FILE instead of serving")
    parser.add_argument("--sentence", action="append", default=[],
                        help="a sentence of the exported page (repeatable)")
    parser.add_argument("--overwrite", action="store_true",
                        help="let --export replace an existing FILE")
    args = parser.parse_args()
    check_flags(args, parser)
    folder, which = cli.run_checkpoint(args.checkpoint, args.which)
    translator = Translator.from_checkpoint(folder.path, which, args.device)
    origin = f"{folder.path} ({which} checkpoint)"
    if args.export is None:
        return serve(translator, origin, args)
    problems = [f"--sentence {s!r}: {translator.problem(s)}" for s in args.sentence
                if translator.problem(s)]
    if problems:
        raise cli.UsageError("; ".join(problems))
    path = export_page(translator, args.sentence, args.export, origin, args.beam,
                       args.length_penalty, args.overwrite)
    print(f"wrote {path} ({path.stat().st_size / 2**20:.2f} MB, {len(args.sentence)} "
          "sentence(s))")
    return 0


if __name__ == "__main__":
    cli.run(main)
