"""A small convolutional network on scikit-learn's 8x8 handwritten digits (1797 images, 10
classes): two 3x3 convolutions with ReLU and 2x2 max pooling, then a linear layer, trained
with Adam on 80% of the images and tested on the rest. minigrad's F.conv2d, F.max_pool2d,
F.cross_entropy at work beyond the Transformer.

    pip install -e '.[digits]'      # scikit-learn, for the digits
    python examples/digits_cnn.py   # a few seconds on 2 CPU cores

Seeds 0-4 (n = 5) on a 2-core AMD EPYC (AVX-512): test accuracy 0.973, sample sd 0.007, 95%
interval 0.964-0.982; each run 1-6 s of training.
"""

import time

import numpy as np

import minigrad as mg
from minigrad import nn, optim
from minigrad.nn import functional as F
from transformer import cli


class DigitsCNN(nn.Module):
    """(N, 1, 8, 8) -> conv 3x3 (8) -> relu -> pool 2 -> conv 3x3 (16) -> relu -> pool 2
    -> (N, 16·2·2) -> linear -> (N, 10) logits."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Parameter(mg.zeros(8, 1, 3, 3))
        self.conv2 = nn.Parameter(mg.zeros(16, 8, 3, 3))
        for weight in (self.conv1, self.conv2):
            fan_in = weight.shape[1] * 9
            nn.init.normal_(weight, std=float(np.sqrt(2 / fan_in)))  # He: for ReLU
        self.bias1, self.bias2 = nn.Parameter(mg.zeros(8)), nn.Parameter(mg.zeros(16))
        self.out = nn.Linear(64, 10)

    def forward(self, images: mg.Tensor) -> mg.Tensor:
        x = F.max_pool2d(F.conv2d(images, self.conv1, self.bias1, padding=1).relu(), 2)
        x = F.max_pool2d(F.conv2d(x, self.conv2, self.bias2, padding=1).relu(), 2)
        return self.out(x.flatten(1))


def load_split(seed):
    """The digits scaled to [0, 1], (N, 1, 8, 8) float32, split 80/20 at random."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise SystemExit("error: the digits come with scikit-learn: pip install scikit-learn") \
            from None
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]
    order = np.random.default_rng(seed).permutation(len(images))
    cut = int(0.8 * len(images))
    train, test = order[:cut], order[cut:]
    return (images[train], digits.target[train]), (images[test], digits.target[test])


def accuracy(model, images, labels) -> float:
    with mg.no_grad():
        predicted = model(mg.tensor(images)).numpy().argmax(axis=1)
    return float((predicted == labels).mean())


def main():
    parser = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=cli.positive_int, default=15)
    parser.add_argument("--batch-size", type=cli.positive_int, default=32)
    parser.add_argument("--seed", type=cli.non_negative_int, default=0)
    args = parser.parse_args()
    mg.manual_seed(args.seed)
    (train_images, train_labels), (test_images, test_labels) = load_split(args.seed)
    model = DigitsCNN()
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(len(train_images))
        total = 0.0
        for first in range(0, len(order), args.batch_size):
            batch = order[first:first + args.batch_size]
            loss = F.cross_entropy(model(mg.tensor(train_images[batch])),
                                   mg.tensor(train_labels[batch]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.numpy()) * len(batch)
        print(f"epoch {epoch:2d}: train loss {total / len(order):.4f}, test accuracy "
              f"{accuracy(model, test_images, test_labels):.4f}")
    print(f"test accuracy {accuracy(model, test_images, test_labels):.4f} on "
          f"{len(test_labels)} images after {time.perf_counter() - start:.1f} s of training")


if __name__ == "__main__":
    cli.run(main)
