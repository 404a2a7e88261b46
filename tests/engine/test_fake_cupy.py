"""The CuPy stand-in (minigrad/testing/fake_cupy/) behaves as CuPy 14 where CuPy and NumPy
differ."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from minigrad.testing import fake_cupy
from minigrad.testing.fake_cupy import DeviceSynchronized

cp = fake_cupy.cupy
NAMES = Path(fake_cupy.__file__).with_name("cupy_names.json")


@pytest.fixture(autouse=True)
def on_device_0():
    with cp.cuda.Device(0):
        fake_cupy.monitor.reset()
        yield


def test_the_name_list_is_cupy_14s():
    names = json.loads(NAMES.read_text())
    assert names["version"].startswith("14.")
    assert {"put_along_axis", "take_along_axis", "fuse", "asnumpy"} <= set(names["cupy"])
    assert "flags" in names["cupy.ndarray"] and "get" in names["cupy.ndarray"]


def test_names_cupy_lacks_raise_attribute_error():
    with pytest.raises(AttributeError, match="lacks it"):
        _ = cp.geomspace  # NumPy has it, CuPy 14 does not
    with pytest.raises(AttributeError, match="lacks it"):
        _ = cp.random.Generator
    assert cp.put_along_axis and cp.random.Philox4x3210 and cp.cuda.Device


def test_flags_are_cupys_three():
    flags = cp.ones(3).flags
    assert flags.c_contiguous and flags.owndata
    with pytest.raises(AttributeError):
        _ = flags.writeable


def test_implicit_conversion_to_numpy_is_refused():
    x = cp.arange(3)
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(x)
    with pytest.raises(TypeError, match="Unsupported type"):
        x + np.ones(3)
    np.testing.assert_array_equal(x.get(), [0, 1, 2])
    np.testing.assert_array_equal(cp.asnumpy(x), [0, 1, 2])
    assert type(np.exp(x)) is cp.ndarray  # NumPy's functions dispatch to CuPy's


def test_reductions_return_arrays_and_numpy_scalars_mix_in():
    x = cp.ones(3, dtype=np.float32)
    assert type(x.sum()) is cp.ndarray and x.sum().shape == ()
    assert (x * np.float32(2)).dtype == np.float32
    assert (x * np.float64(2)).dtype == np.float64  # NumPy 2's rule: NumPy scalars are strong
    assert (x * 2.0).dtype == np.float32


def test_integer_array_indices_wrap_around():
    x = cp.arange(3) * 10
    np.testing.assert_array_equal(x[cp.asarray([3, 5, -1])].get(), [0, 20, 20])
    np.testing.assert_array_equal(cp.take_along_axis(x, cp.asarray([4]), axis=0).get(), [10])
    with pytest.raises(IndexError):
        x[3]  # an integer scalar out of range raises, as in CuPy


def test_devices_arrays_know_theirs_and_mixing_fails():
    a = cp.ones(2)
    with cp.cuda.Device(1):
        b = cp.ones(2)
        assert b.device.id == 1
        with pytest.raises(ValueError, match=r"resides \(0\).*current device \(1\)"):
            a + b
    assert a.device.id == 0
    with pytest.raises(ValueError, match="Peer access"):
        b * 2
    with pytest.raises(RuntimeError, match="invalid device"):
        cp.cuda.Device(2)


def test_generators_compute_on_their_device():
    rng = cp.random.default_rng(cp.random.Philox4x3210(0))
    with cp.cuda.Device(1), pytest.raises(ValueError, match="random generator"):
        rng.random(3)
    assert fake_cupy.monitor.bit_generators == {"Philox4x3210": 1}


def test_reads_are_counted_and_can_be_forbidden():
    x = cp.arange(4.0)
    int(x[0]), float(x.sum()), x.tolist(), x[x > 1], bool(x.any())
    assert fake_cupy.monitor.syncs == {"int()": 1, "float()": 1, "tolist": 1,
                                       "boolean mask indexing": 1, "bool()": 1}
    with fake_cupy.monitor.forbid_synchronize():
        y = cp.where(x > 1, x, 0) * 2  # no read
        with pytest.raises(DeviceSynchronized, match="item"):
            y.sum().item()
        with pytest.raises(DeviceSynchronized, match="boolean mask assignment"):
            y[y > 2] = 0


def test_launches_follow_the_rule():
    x = cp.zeros((4, 3), dtype=np.float32)  # a fill
    fake_cupy.monitor.reset()
    x.reshape(3, 4), x.T, x[1:], cp.broadcast_to(x[:1], (4, 3)), cp.empty(5)  # views: none
    assert fake_cupy.monitor.launch_count == 0
    index = cp.asarray([0, 2])  # a copy from the host
    x + 1, cp.exp(x, out=x), x.sum(axis=1), x @ x.T, x[index], x.astype(np.float64)
    assert fake_cupy.monitor.launch_count == 7
    assert cp.exp(x, out=x) is x


def test_fuse_runs_eagerly_as_one_launch():
    @cp.fuse()
    def scaled_exp(a, b):
        return cp.exp(a) * b + 1

    x = cp.arange(3.0)
    fake_cupy.monitor.reset()
    np.testing.assert_allclose(scaled_exp(x, 2.0).get(), np.exp(np.arange(3.0)) * 2 + 1)
    assert fake_cupy.monitor.launches == {"fuse:scaled_exp": 1}

    @cp.fuse()
    def indexed(a):
        return cp.concatenate([a, a])

    with pytest.raises(TypeError, match="not supported inside a fused function"):
        indexed(x)


def test_fuse_computes_scalars_as_cupys_fusion_does():
    """Two Python scalars inside a fused function: the first loop they fit, float16
    (`_guess_routine_from_in_types` without the weak-scalar guard); a typed scalar keeps its
    dtype; without an array argument the function is plain Python."""
    @cp.fuse()
    def keep(x, smoothing):
        return (1 - smoothing) * x

    x = cp.ones(2, dtype=np.float32)
    assert keep(x, 0.1).get()[0] == np.float32(np.float16(0.9))
    assert keep(x, np.float32(0.1)).get()[0] == np.float32(1) - np.float32(0.1)
    assert keep(1.0, 0.1) == 0.9


@pytest.mark.parametrize("body", [lambda x: cp.sum(x, axis=-1, keepdims=True),
                                  lambda x: cp.mean(x, axis=-1)])
def test_fuse_refuses_keepdims_and_mean(body):
    fused = cp.fuse(kernel_name="refused")(body)
    with pytest.raises(TypeError, match="keepdims|'mean' is not supported"):
        fused(cp.ones((2, 3)))


def test_results_of_ufuncs_reductions_and_fused_functions_are_c_contiguous():
    """CuPy makes a ufunc's (a matmul's, a reduction's, a fused function's) output as a new
    C-contiguous array, where NumPy keeps the inputs' order: a transposed operand gives a
    C-contiguous result."""
    x = cp.ones((3, 4, 5), dtype=np.float32).transpose(2, 0, 1)
    fused = cp.fuse()(lambda a: a * 2)
    results = [x * 2, cp.exp(x), -x, x + x, cp.sum(x.transpose(1, 0, 2), axis=0), fused(x),
               cp.where(x > 0, x, 0), x.T @ x.T.transpose(0, 2, 1), x.sum(axis=2)]
    assert all(result.flags.c_contiguous for result in results)
    # astype keeps the order (order K), as CuPy's does
    assert cp.ones((4, 5), np.float32).T.astype(np.float64).flags.f_contiguous
    out = cp.empty((5, 3, 4), np.float32)
    assert cp.exp(x, out=out) is out


@pytest.mark.parametrize("body, what", [
    (lambda a: a.sum(), "'sum' of an array"), (lambda a: a[0] + 1, "'indexing'"),
    (lambda a: a.reshape(-1) * 2, "'reshape'"), (lambda a: a * a.shape[0], "'shape'"),
    (lambda a: a.T * 2, "'T'"), (lambda a: a.max(axis=0), "'max'"),
    (lambda a: a.__setitem__(0, 1.0), "'indexed assignment'"),
    (lambda a: a @ a, "'matmul' is not a CuPy ufunc")])
def test_fuse_refuses_what_cupys_fusion_variables_lack(body, what):
    """Inside a fused function an argument has dtype, ndim, operators, astype, copy and
    `x[...] = y` only (`_FusionVarArray`); a method or an index would send CuPy to its slower
    new fusion for good, silently."""
    with pytest.raises(TypeError, match=f"cupy.fuse: {what}"):
        cp.fuse(kernel_name="refused")(body)(cp.ones((3, 3)))


def test_fuse_allows_what_cupys_fusion_variables_have():
    @cp.fuse()
    def allowed(a, out):
        out[...] = cp.sum(a.astype(np.float64).copy() * a.ndim, axis=0) + (a.dtype == a.dtype)
        return out

    out = cp.empty(3)
    assert allowed(cp.ones((2, 3), np.float32), out).get().tolist() == [5.0] * 3


def test_fused_loops_are_cupys_own():
    """A fused ufunc is typed by CuPy's loops (`cupy_names.json`, from `cupy.<ufunc>.types`),
    the first that takes the operands, not NumPy's: int16 by int16 division is CuPy's 'qq->d'
    (NumPy's first that takes them, 'ff->f', would give float32)."""
    assert json.loads(NAMES.read_text())["ufunc loops"]["true_divide"][0] == "qq->d"
    halves = cp.fuse()(lambda a, b: a / b)(cp.ones(2, np.int16), cp.full(2, 2, np.int16))
    assert halves.dtype == np.float64 and halves.get().tolist() == [0.5, 0.5]


def test_fuse_computes_only_with_its_reductions_result_after_it():
    """After its one reduction a fused function may use the reduction's result, values made
    from it and constants, as CuPy's fusion (which raises 'Shape mismatch' otherwise): an
    argument, or a value computed before the reduction, raises there; so does a second
    reduction."""
    @cp.fuse()
    def nonzero_sum(a):
        total = cp.sum(a, axis=-1)
        return cp.where(total == 0, 1, total)

    assert nonzero_sum(cp.zeros((2, 3))).get().tolist() == [1.0, 1.0]
    x = cp.ones((2, 3))
    for body in (lambda a, n: cp.sum(a, axis=-1) / n, lambda a, n: n * cp.sum(a, axis=-1)):
        with pytest.raises(TypeError, match="after the fused function's reduction"):
            cp.fuse()(body)(x, 3.0)
    with pytest.raises(TypeError, match="a second reduction"):
        cp.fuse()(lambda a: cp.sum(cp.sum(a, axis=-1), axis=0))(x)

    @cp.fuse()
    def before(a, n):
        scale = n * 2  # computed before the reduction
        return cp.sum(a, axis=-1) * scale

    with pytest.raises(TypeError, match="after the fused function's reduction"):
        before(x, 3.0)


def test_a_0d_array_is_not_an_index():
    with pytest.raises(TypeError):
        range(cp.asarray(3))


def test_cuda_source_kernels_run_on_a_gpu_only():
    kernel = cp.ElementwiseKernel("float32 x", "float32 y", "y = x")
    with pytest.raises(NotImplementedError, match="GPU only"):
        kernel(cp.ones(2, dtype=np.float32))


def test_python_m_runs_a_script_with_the_stand_in_as_cupy(tmp_path):
    script = tmp_path / "on_gpu.py"
    script.write_text("import sys\nimport minigrad as mg\n"
                      "from minigrad.testing.fake_cupy import monitor\n"
                      "x = mg.tensor([1.0, 2.0], device='cuda')\n"
                      "print((x * x).sum().item(), monitor.launch_count > 0, sys.argv[1:])\n",
                      encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [
        str(root), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([sys.executable, "-m", "minigrad.testing.fake_cupy", str(script),
                             "--flag"], capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[0] == "5.0 True ['--flag']"
