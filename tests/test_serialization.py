"""mg.save / mg.load: exact round trips, atomic writes, and a clear CheckpointError for every
kind of bad file (never running code from it)."""

import json
import os
import pickle
import zipfile

import numpy as np
import pytest

import minigrad as mg
from minigrad.errors import CheckpointError


def sample_state():
    rng = np.random.default_rng(0)
    weight = mg.tensor(rng.standard_normal((3, 4)).astype(np.float32))
    return {
        "model": {"encoder.weight": weight, "bias": mg.tensor(np.zeros(4, np.float64))},
        "arrays": [rng.standard_normal(5), np.arange(6, dtype=np.int64).reshape(2, 3),
                   np.array([True, False]), np.array(2.5, np.float32)],
        "tuple": (1, "two", (3.0, None)),
        "scalars": {"int": 7, "big": 2 ** 100, "float": 0.1, "true": True, "none": None,
                    "str": "héllo", "nan": float("nan"), "inf": float("inf"),
                    "-inf": float("-inf")},
        "empty": {"list": [], "dict": {}, "tuple": ()},
        "tied": [weight, weight],
    }


def assert_same(a, b):
    """Equal values, types and dtypes, bit for bit (NaN equal to NaN)."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, mg.Tensor):
        assert_same(a.numpy(), b.numpy())
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            assert_same(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b)
    else:
        assert a == b


def test_round_trip_is_exact(tmp_path):
    state = sample_state()
    mg.save(state, tmp_path / "ckpt.npz")
    loaded = mg.load(tmp_path / "ckpt.npz")
    assert_same(state, loaded)
    assert loaded["tied"][0] is loaded["tied"][1]  # one object saved once stays one object
    assert loaded["model"]["bias"].device == "cpu"


def test_numpy_scalars_are_saved_as_python_numbers(tmp_path):
    mg.save({"loss": np.float32(0.5), "step": np.int64(3), "ok": np.bool_(True)}, tmp_path / "c")
    loaded = mg.load(tmp_path / "c")
    assert loaded == {"loss": 0.5, "step": 3, "ok": True}
    assert [type(v) for v in loaded.values()] == [float, int, bool]


def test_writes_exactly_the_path_and_nothing_else(tmp_path):
    mg.save({"x": np.ones(2)}, tmp_path / "last")
    assert os.listdir(tmp_path) == ["last"]
    with np.load(tmp_path / "last", allow_pickle=False) as archive:
        assert sorted(archive.files) == ["__minigrad__", "a0"]
        header = json.loads(bytes(archive["__minigrad__"]).decode())
    assert header["format"] == "minigrad-checkpoint" and header["version"] == 1
    assert header["structure"] == {"x": {"__array__": "a0", "dtype": "float64", "shape": [2],
                                         "tensor": False}}


def test_overwrites_atomically_and_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.npz"
    mg.save({"version": "old"}, path)
    mg.save({"version": "new"}, path)
    assert mg.load(path) == {"version": "new"}

    def crash(*args, **kwargs):
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(KeyboardInterrupt):
        mg.save({"version": "newer", "x": np.ones(1000)}, path)
    assert mg.load(path) == {"version": "new"}
    assert os.listdir(tmp_path) == ["ckpt.npz"]


def test_values_that_cannot_be_saved(tmp_path):
    path = tmp_path / "ckpt"
    with pytest.raises(CheckpointError, match=r"key 1 of type int.*must be str"):
        mg.save({"a": {1: 2}}, path)
    with pytest.raises(CheckpointError, match=r"state\['a'\]\[0\] is a set"):
        mg.save({"a": [{1, 2}]}, path)
    with pytest.raises(CheckpointError, match="dtype object"):
        mg.save({"a": np.array([object()])}, path)
    with pytest.raises(CheckpointError, match="reserved"):
        mg.save({"__array__": 1}, path)
    assert not os.listdir(tmp_path)


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "ckpt.npz"
    mg.save({"w": np.arange(20000, dtype=np.float32), "b": mg.tensor(np.ones(3))}, path)
    return path


def test_truncated_file(saved):
    data = saved.read_bytes()
    saved.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match=r"ckpt\.npz is truncated or corrupt"):
        mg.load(saved)


def test_flipped_bytes_in_the_middle(saved):
    data = bytearray(saved.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 16] = bytes(b ^ 0xFF for b in data[middle:middle + 16])
    saved.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"ckpt\.npz is truncated or corrupt.*CRC"):
        mg.load(saved)


def test_empty_file(tmp_path):
    (tmp_path / "empty.npz").write_bytes(b"")
    with pytest.raises(CheckpointError, match="empty.npz"):
        mg.load(tmp_path / "empty.npz")


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        mg.load(tmp_path / "nothing.npz")


class MakesMarker:
    """Unpickling this would create a file: the proof that code ran."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_object_array_in_an_npz_is_refused_without_running_code(tmp_path):
    marker = tmp_path / "code-ran"
    path = tmp_path / "evil.npz"
    with open(path, "wb") as file:
        np.savez(file, a0=np.array([MakesMarker(marker)], dtype=object))
    with pytest.raises(CheckpointError, match=r"evil\.npz .*not a minigrad checkpoint"):
        mg.load(path)
    assert not marker.exists()


def test_object_array_named_in_a_valid_structure_is_refused(tmp_path):
    """Our own header, pointing at an object array: the array is refused, nothing runs."""
    marker = tmp_path / "code-ran"
    path = tmp_path / "evil.npz"
    header = json.dumps({"format": "minigrad-checkpoint", "version": 1, "structure": {
        "x": {"__array__": "a0", "dtype": "object", "shape": [1], "tensor": False}}})
    with open(path, "wb") as file:
        np.savez(file, __minigrad__=np.frombuffer(header.encode(), np.uint8),
                 a0=np.array([MakesMarker(marker)], dtype=object))
    with pytest.raises(CheckpointError, match=r"evil\.npz holds pickled data"):
        mg.load(path)
    assert not marker.exists()


def test_plain_pickle_renamed_npz_is_refused_without_running_code(tmp_path):
    marker = tmp_path / "code-ran"
    path = tmp_path / "evil.npz"
    path.write_bytes(pickle.dumps({"model": MakesMarker(marker)}))
    with pytest.raises(CheckpointError, match=r"evil\.npz holds pickled data.*refused"):
        mg.load(path)
    assert not marker.exists()


def write_npz(path, header=None, **arrays):
    entries = dict(arrays)
    if header is not None:
        entries["__minigrad__"] = np.frombuffer(json.dumps(header).encode(), np.uint8)
    with open(path, "wb") as file:
        np.savez(file, **entries)


def header(structure, version=1):
    return {"format": "minigrad-checkpoint", "version": version, "structure": structure}


ARRAY = {"__array__": "a0", "dtype": "float32", "shape": [2], "tensor": True}


def test_plain_npz_without_our_marker(tmp_path):
    write_npz(tmp_path / "plain.npz", weights=np.ones(2))
    with pytest.raises(CheckpointError, match=r"plain\.npz .*not a minigrad checkpoint.*weights"):
        mg.load(tmp_path / "plain.npz")


def test_wrong_format_marker(tmp_path):
    write_npz(tmp_path / "other.npz", {"format": "something-else", "version": 1})
    with pytest.raises(CheckpointError, match="format marker"):
        mg.load(tmp_path / "other.npz")


def test_npy_file(tmp_path):
    np.save(tmp_path / "array.npy", np.ones(3))
    with pytest.raises(CheckpointError, match=r"array\.npy is a single \.npy array"):
        mg.load(tmp_path / "array.npy")


def test_unknown_version(tmp_path):
    write_npz(tmp_path / "future.npz", header({"w": ARRAY}, version=7), a0=np.ones(2, np.float32))
    with pytest.raises(CheckpointError, match=r"future\.npz .*version 7.*reads version 1"):
        mg.load(tmp_path / "future.npz")


def test_missing_array_entry(tmp_path):
    write_npz(tmp_path / "ckpt.npz", header({"w": ARRAY}))
    with pytest.raises(CheckpointError, match=r"ckpt\.npz lacks the array entry 'a0'"):
        mg.load(tmp_path / "ckpt.npz")


def test_dtype_mismatch(tmp_path):
    write_npz(tmp_path / "ckpt.npz", header({"w": ARRAY}), a0=np.ones(2, np.float64))
    with pytest.raises(CheckpointError, match=r"'a0' is float64 of shape \[2\].*float32"):
        mg.load(tmp_path / "ckpt.npz")


def test_shape_mismatch(tmp_path):
    write_npz(tmp_path / "ckpt.npz", header({"w": ARRAY}), a0=np.ones(3, np.float32))
    with pytest.raises(CheckpointError, match=r"'a0' is float32 of shape \[3\].*shape \[2\]"):
        mg.load(tmp_path / "ckpt.npz")


def test_unexpected_entry(tmp_path):
    write_npz(tmp_path / "ckpt.npz", header({"w": ARRAY}), a0=np.ones(2, np.float32),
              a1=np.ones(1))
    with pytest.raises(CheckpointError, match=r"entries its structure does not use: \['a1'\]"):
        mg.load(tmp_path / "ckpt.npz")


def test_malformed_structure(tmp_path):
    write_npz(tmp_path / "ckpt.npz", header({"w": {"__array__": "a0"}}),
              a0=np.ones(2, np.float32))
    with pytest.raises(CheckpointError, match="corrupt"):
        mg.load(tmp_path / "ckpt.npz")


def test_loads_onto_the_asked_device(saved, device):
    loaded = mg.load(saved, device=device)
    assert isinstance(loaded["b"], mg.Tensor) and loaded["b"].device.startswith(device)
    assert isinstance(loaded["w"], np.ndarray)


def test_zip_member_checksums_are_verified(saved):
    """Not only the zip directory: the data itself is covered (CRC of each member)."""
    with zipfile.ZipFile(saved) as archive:
        assert archive.testzip() is None
