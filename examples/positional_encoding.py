"""The sinusoidal positional encoding of "Attention Is All You Need" (§3.5).

    python examples/positional_encoding.py --out runs/positional_encoding

Writes heat maps of the first 20 positions in both layouts (sines and cosines interleaved, as
the paper's formula; all sines then all cosines, as the Illustrated Transformer draws it) and
a plot of PE[pos]·PE[pos+k] against the offset k for a few positions, with their CSVs.

Since sin(a)·sin(b) + cos(a)·cos(b) = cos(a − b), PE[pos]·PE[pos+k] = Σᵢ cos(k·ωᵢ): it
depends on the offset k only, not on pos, and is the same in both layouts (they hold the
same pairs of values), peaking at k = 0 with d_model / 2.
"""

from pathlib import Path

import numpy as np

from transformer import cli
from transformer.instruments import plot_curves, plot_positional_encoding, write_csv
from transformer.positional import sinusoidal_encoding

LAYOUTS = {"interleaved": True, "concatenated": False}  # name -> `interleaved` argument
POSITIONS = (0, 10, 50)  # where PE[pos]·PE[pos+k] is measured


def dot_products(table, position, max_offset):
    """PE[position]·PE[position + k] for k = 0 .. max_offset."""
    return table[position:position + max_offset + 1] @ table[position]


def main(argv=None):
    parser = cli.ArgumentParser(description=__doc__)
    parser.add_argument("--d-model", type=cli.positive_int, default=512)
    parser.add_argument("--positions", type=cli.positive_int, default=20,
                        help="rows of the heat maps")
    parser.add_argument("--max-offset", type=cli.non_negative_int, default=100)
    parser.add_argument("--out", default="runs/positional_encoding", type=cli.output_folder,
                        help="folder for PNGs and CSVs")
    args = parser.parse_args(argv)
    if args.d_model % 2:
        parser.error(f"--d-model {args.d_model}: sinusoidal positions pair a sine with a "
                     "cosine, so d_model must be even")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    length = max(args.positions, max(POSITIONS) + args.max_offset + 1)
    tables = {name: sinusoidal_encoding(length, args.d_model, interleaved=interleaved)
              for name, interleaved in LAYOUTS.items()}

    for name, table in tables.items():
        plot_positional_encoding(table[:args.positions],
                                 f"sinusoidal positions, {name} sin/cos (d_model "
                                 f"{args.d_model})", path=out / f"pe_{name}.png")
    write_csv([{"position": position, "dimension": dimension,
                **{name: float(table[position, dimension]) for name, table in tables.items()}}
               for position in range(args.positions) for dimension in range(args.d_model)],
              out / "pe_table.csv")

    offsets = np.arange(args.max_offset + 1)
    dots = {position: dot_products(tables["interleaved"], position, args.max_offset)
            for position in POSITIONS}
    plot_curves({f"pos = {position}": (offsets, values) for position, values in dots.items()},
                "PE[pos]·PE[pos+k]: a function of the offset k only", "offset k",
                "PE[pos]·PE[pos+k]", path=out / "pe_dot_products.png")
    write_csv([{"position": position, "offset": int(k), "dot": float(value)}
               for position, values in dots.items() for k, value in zip(offsets, values)],
              out / "pe_dot_products.csv")

    spread = max(np.abs(values - dots[0]).max() for values in dots.values())
    layouts_differ = max(np.abs(dot_products(tables["concatenated"], position, args.max_offset)
                                - values).max() for position, values in dots.items())
    print(f"PE[pos]·PE[pos+k] at k = 0: {dots[0][0]:.2f} (d_model / 2 = {args.d_model / 2:g})")
    print(f"largest difference between pos = {', '.join(map(str, POSITIONS))}: {spread:.1e} "
          f"(float32 rounding): it depends on k only")
    print(f"largest difference between the two layouts: {layouts_differ:.1e}")
    print(f"plots and CSVs in {out}")


if __name__ == "__main__":
    cli.run(main)
