"""Export a trained model's weights as a safetensors file, for other tools (PyTorch,
Hugging Face, ...): every parameter under its dotted name, and the model config in the
file's metadata (docs/conventions.md, "Weights for other tools").

    python examples/export_weights.py --checkpoint runs/toy-en-es --out toy.safetensors

`transformer.weights.import_weights(FILE)` reads it back into a Transformer. An existing
--out file is kept unless --overwrite is given.
"""

from pathlib import Path

from transformer import cli
from transformer.weights import export_weights


def main(argv=None):
    parser = cli.ArgumentParser(description=__doc__)
    cli.add_checkpoint_arguments(parser)
    parser.add_argument("--out", required=True, type=Path, help="the .safetensors file")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    args = parser.parse_args(argv)
    if args.out.is_dir():
        parser.error(f"--out {args.out} is a folder; give a file name")
    if args.out.exists() and not args.overwrite:
        parser.error(f"--out {args.out} exists; nothing was written: choose another file, or "
                     "pass --overwrite")
    if not args.out.parent.is_dir():
        parser.error(f"--out {args.out}: the folder {args.out.parent} does not exist")
    folder, which = cli.run_checkpoint(args.checkpoint, args.which)
    model = folder.load_model(which)
    export_weights(model, args.out, overwrite=args.overwrite)
    print(f"wrote {args.out}: {model.num_parameters()} parameters of {folder.checkpoint(which)}")
    return 0


if __name__ == "__main__":
    cli.run(main)
