"""The autograd engine: freed graphs, seeds, deep graphs, hooks, grad(), grad modes and
anomaly mode."""

import weakref

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import Function
from minigrad.errors import AnomalyError, GraphError, ShapeError


def leaf(values):
    return mg.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


def test_backward_twice_through_a_freed_graph_names_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(GraphError, match="retain_graph"):
        y.backward()


def test_grad_through_a_freed_graph_names_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    z = y * 2
    y.backward()
    with pytest.raises(GraphError, match="retain_graph"):
        mg.grad(z, x)
    with pytest.raises(GraphError, match="retain_graph"):
        z.backward()


def test_retain_graph_allows_a_second_backward():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 2 * x.numpy())


class Saving(Function):
    """x · 2, keeping a scratch array on itself in forward as ops keep what backward needs."""

    def forward(self, x):
        self.scratch = self.xp.stack([x, x])  # an array even for a 0-d x
        return x * 2

    def backward(self, grad):
        return grad * 2


def test_backward_frees_the_graph_and_what_its_ops_saved():
    x = leaf([1.0, 2.0])
    middle = Saving.apply(x)
    middle_scratch = weakref.ref(middle.grad_fn.scratch)
    gone = weakref.ref(middle)
    loss = Saving.apply(middle.tanh().sum())
    loss_scratch = weakref.ref(loss.grad_fn.scratch)
    del middle
    loss.backward()
    # nothing but the graph held the intermediate tensor: freed with what its op saved; the
    # caller holds the loss, whose op lets go of what it saved all the same
    assert gone() is None and middle_scratch() is None and loss_scratch() is None
    np.testing.assert_allclose(x.grad.numpy(), 4 * (1 - np.tanh(2 * x.numpy()) ** 2))


def test_leaves_accumulate_gradients_across_backward_calls():
    x = leaf([1.0, -3.0])
    (x * 3).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 + 2 * x.numpy())


def test_non_scalar_backward_needs_a_gradient():
    x = leaf([1.0, 2.0])
    y = x * 2
    with pytest.raises(GraphError, match=r"shape \(2,\)"):
        y.backward()
    y.backward(mg.tensor([1.0, -1.0], dtype="float64"))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -2.0])


def test_gradient_of_the_wrong_shape_is_refused():
    y = leaf([1.0, 2.0]) * 2
    with pytest.raises(ShapeError, match=r"\(3,\).*\(2,\)"):
        y.backward(mg.tensor([1.0, 1.0, 1.0], dtype="float64"))


def test_backward_of_a_constant_is_refused():
    with pytest.raises(GraphError, match="does not require grad"):
        mg.tensor([1.0]).sum().backward()


def test_a_chain_of_100000_ops_goes_backward_without_recursion():
    x = leaf([0.5])
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])


def test_hooks_see_and_replace_gradients_until_removed():
    x = leaf([1.0, 2.0])
    seen = []

    def times_ten(grad):
        seen.append(grad.numpy())
        return grad * 10

    y = x * 2
    handle = y.register_hook(times_ten)
    (y * mg.tensor([1.0, 3.0], dtype="float64")).sum().backward()
    np.testing.assert_allclose(seen[0], [1.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 60.0])

    handle.remove()
    x.grad = None
    y = x * 2
    y.register_hook(lambda grad: None)  # a hook returning None leaves the gradient as is
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    assert len(seen) == 1


def test_hook_on_a_leaf_replaces_what_accumulates():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda grad: grad * 0)
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


def test_retain_grad_keeps_a_non_leaf_gradient():
    x = leaf([1.0, 2.0])
    y = x * 3
    z = y * y
    y.retain_grad()
    z.sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), 2 * y.numpy())
    assert z.grad is None


def test_gradients_summed_in_place_never_change_a_shared_gradient():
    """An add passes one gradient array to both its inputs; summing a tensor's gradients (in
    place from the third consumer on) must not change the other input's."""
    x = leaf([1.0, 2.0])
    p, q = x * 1, x * 1
    p.retain_grad()
    q.retain_grad()
    loss = (p * 2).sum() + (p * 3).sum() + (p * 4).sum() + (p + q).sum()  # p + q goes first
    loss.backward()
    np.testing.assert_array_equal(q.grad.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(p.grad.numpy(), [10.0, 10.0])
    np.testing.assert_array_equal(x.grad.numpy(), [11.0, 11.0])


def test_a_0d_gradient_summed_over_consumers_is_a_writable_array():
    """NumPy's arithmetic on 0-d arrays gives scalars; `.grad` holds an array all the same,
    which an optimizer can edit in place."""
    x = leaf(2.0)
    y = x * 1
    (y * 2 + y * 3 + y * 4 + y * 5).backward()
    assert isinstance(x.grad.data, np.ndarray) and x.grad.shape == ()
    x.grad.data[...] = 0.0
    assert x.grad.item() == 0.0


def test_an_ops_output_is_made_as_tensor_make_makes_a_tensor():
    """`Function.apply` writes `Tensor._make` out (the hot path): every slot set alike."""
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    for out in (x * 2, mg.Tensor._make(x.data, x.backend, True, (x * 2).grad_fn)):
        for slot in set(mg.Tensor.__slots__) - {"__weakref__"}:
            assert hasattr(out, slot), slot
        assert (out.grad, out._retains_grad, out._hooks, out.requires_grad) == (
            None, False, None, True)
        assert out.backend is x.backend and out.grad_fn is not None
    with mg.no_grad():
        out = x * 2
    assert out.requires_grad is False and out.grad_fn is None


def test_an_op_given_numbers_and_arrays_makes_them_constants_beside_its_tensor():
    x = leaf([1.0, 2.0])
    y = 2 - x * np.array([3.0, 4.0]) / 2
    assert y.dtype == np.float64
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [-1.5, -2.0])


def test_grad_with_create_graph_gives_second_derivatives():
    x = leaf([1.0, -2.0, 0.5])
    (first,) = mg.grad((x ** 3).sum(), x, create_graph=True)
    np.testing.assert_allclose(first.numpy(), 3 * x.numpy() ** 2)
    (second,) = mg.grad(first.sum(), x)
    np.testing.assert_allclose(second.numpy(), 6 * x.numpy())
    assert x.grad is None  # grad() returns gradients, it does not accumulate them


def test_grad_of_an_unused_input():
    x, unused = leaf([1.0]), leaf([2.0])
    y = (x * x).sum()
    with pytest.raises(GraphError, match="allow_unused"):
        mg.grad(y, [x, unused], retain_graph=True)
    gx, gu = mg.grad(y, [x, unused], allow_unused=True)
    np.testing.assert_allclose(gx.numpy(), [2.0])
    assert gu is None


def test_no_grad_records_nothing_and_enable_grad_records_inside_it():
    x = leaf([1.0])
    with mg.no_grad():
        y = x * 2
        with mg.enable_grad():
            z = x * 2
    assert y.grad_fn is None and not y.requires_grad
    assert z.grad_fn is not None and z.requires_grad
    assert mg.is_grad_enabled()


def test_no_grad_as_a_decorator():
    @mg.no_grad()
    def double(t):
        return t * 2

    assert double(leaf([1.0])).grad_fn is None
    assert mg.is_grad_enabled()


def test_backward_records_nothing_without_create_graph():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    assert x.grad.grad_fn is None and not x.grad.requires_grad


def test_detect_anomaly_names_the_op_and_where_it_was_created_in_forward():
    x = leaf([-1.0, 1.0])
    with np.errstate(invalid="ignore"), mg.detect_anomaly(), pytest.raises(
            AnomalyError, match=r"log.*test_autograd\.py"):
        mg.log(x)


def test_detect_anomaly_names_the_op_whose_backward_made_a_nan():
    x = leaf([0.0, 4.0])
    with np.errstate(divide="ignore"), mg.detect_anomaly():
        y = mg.sqrt(x).sum()
        with pytest.raises(AnomalyError, match=r"sqrt.*test_autograd\.py"):
            y.backward()


def test_without_anomaly_mode_a_nan_passes_silently():
    x = leaf([0.0])
    with np.errstate(divide="ignore"):
        mg.sqrt(x).sum().backward()
    assert np.isinf(x.grad.numpy()).all()



class ScaleRows(Function):
    """x (n, 1) times a constant (n, m): backward returns the gradient at the broadcast shape."""

    name = "scale_rows"

    def forward(self, x, factors=None):
        self.factors = factors
        return x * factors

    def backward(self, grad):
        return (grad * self.constant(self.factors),)


def test_the_engine_sums_a_broadcast_gradient_back_to_its_input():
    x = leaf([[1.0], [2.0]])
    factors = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    ScaleRows.apply(x, factors=factors).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[6.0], [15.0]])
