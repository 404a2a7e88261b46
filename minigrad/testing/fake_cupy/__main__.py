"""`python -m minigrad.testing.fake_cupy SCRIPT [ARGS]`: SCRIPT run with the stand-in as
CuPy (`install.main`)."""

import sys

from minigrad.testing.fake_cupy import main

if __name__ == "__main__":  # not when a walk of the package imports it
    main(sys.argv[1:])
