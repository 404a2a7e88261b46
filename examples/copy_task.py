"""The Annotated Transformer's first example: learn to copy random symbol sequences.

    python examples/copy_task.py            # about a minute on 2 CPU cores

Ctrl-C stops after the current step, saves last.npz in --out and exits with status 130.
"""

import argparse
import sys

from transformer.pipeline import train_translation


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="runs/copy")
    parser.add_argument("--steps", type=int, default=1200)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    metrics = train_translation(
        "copy", args.out, device=args.device,
        model_options=dict(d_model=64, n_heads=4, n_encoder_layers=2, n_decoder_layers=2,
                           d_ff=128, dropout=0.0),
        training_options=dict(steps=args.steps, batch_size=64, warmup_steps=200,
                              eval_every=400, checkpoint_every=400, seed=args.seed))
    if metrics is None:  # interrupted by Ctrl-C: last.npz is saved
        sys.exit(130)
    print(f"held-out exact match: {metrics['test_exact_match']:.4f}")


if __name__ == "__main__":
    main()
