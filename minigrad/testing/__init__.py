"""Test doubles for what a machine may lack: `fake_cupy`, a strict CuPy stand-in on NumPy
that lets the CUDA backend run (and be counted) without a GPU."""
