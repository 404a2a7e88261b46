"""An op defined outside minigrad: softplus(x) = log(1 + eˣ), whose derivative is sigmoid(x),
written as PyTorch users write a `torch.autograd.Function`, then checked as minigrad checks
its own ops.

    python examples/custom_op.py [--examples 20]

The declaration (`@mg.op`) gives the op its public function (`softplus`, with forward's
parameters), its NumPy reference and the spec its inputs are drawn from; `check_op` then
draws shapes and values from the spec and checks the values against the reference, the
gradient and the gradient of the gradient against finite differences, dtypes, and that no
input is modified (it needs hypothesis: `pip install minigrad-transformer[testing]`). In a
test suite:

    def test_softplus():
        mg.testing.check_op(Softplus)
"""

import numpy as np

import minigrad as mg
from transformer import cli


@mg.op(reference=lambda x, beta=1.0: np.logaddexp(0, beta * x) / beta,
       spec=mg.InputSpec("unary", low=-4.0, high=4.0, options={"beta": (1.0, 2.0)}))
class Softplus(mg.Function):
    """log(1 + e^(beta·x)) / beta, stable for large |x|."""

    name = "softplus"
    float_only = True

    def forward(self, x, beta=1.0):  # arrays in, an array out; parameters by keyword
        self.beta = beta
        return self.xp.logaddexp(0, beta * x) / beta

    def backward(self, grad):  # Tensor ops, so that the gradient is differentiable again
        (x,) = self.inputs
        return (grad * (x * self.beta).sigmoid(),)


softplus = Softplus.op.call  # softplus(x, beta=1.0)


def main(argv=None):
    parser = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=cli.positive_int, default=20,
                        help="how many drawn cases check_op tries")
    args = parser.parse_args(argv)
    x = mg.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    y = softplus(x, beta=2.0)
    y.sum().backward()
    print("softplus:", y.numpy().round(4), "gradient:", x.grad.numpy().round(4))
    mg.testing.check_op(Softplus, max_examples=args.examples)
    print("check_op: values, gradients, gradients of gradients, dtypes: all pass")


if __name__ == "__main__":
    cli.run(main)
