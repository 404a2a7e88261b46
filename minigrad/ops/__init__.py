"""The op set: one differentiable op = one Function subclass, registered in `registry.py`."""
