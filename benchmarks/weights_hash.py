"""A sha256 of the weights after training steps on the CPU: whether a change of the engine
keeps the CPU float path bit for bit (the same digest before and after).

Trains the benchmark Transformer (`configs.py`, dropout and label smoothing on, Adam and the
moving average as `train_step.py`) for `--steps` steps from seed 0 on one fixed batch, then
prints the sha256 of every parameter's bytes, in order, and of the losses.

    python benchmarks/weights_hash.py [--config tiny] [--steps 60]
"""

import argparse
import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from configs import CONFIGS  # noqa: E402
from train_step import MinigradStep  # noqa: E402


def weights_digest(config: str, steps: int) -> tuple[str, str]:
    """(sha256 of the parameters' bytes, sha256 of the losses' bytes) after `steps` steps."""
    runner = MinigradStep(CONFIGS[config], "cpu", ema_decay=0.999)
    losses = hashlib.sha256()
    for _ in range(steps):
        runner.zero_grad()
        loss = runner.forward_loss()
        losses.update(loss.numpy().tobytes())
        runner.backward(loss)
        runner.optimizer_step()
    weights = hashlib.sha256(b"".join(p.numpy().tobytes() for p in runner.model.parameters()))
    return weights.hexdigest(), losses.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", choices=list(CONFIGS), default="tiny")
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    weights, losses = weights_digest(args.config, args.steps)
    print(f"{args.config} {args.steps} steps: weights {weights} losses {losses}")


if __name__ == "__main__":
    main()
