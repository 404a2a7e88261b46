"""Tools for testing ops and for machines that lack a GPU.

- `check_op(MyOp)`: the property checks minigrad's own ops get, run on an op written in user
  code (needs hypothesis: the `test` extra, `pip install minigrad-transformer[test]`);
- `fake_cupy`: a strict CuPy stand-in on NumPy that lets the CUDA backend run (and be counted)
  without a GPU.

Importing this package imports no test library; `check_op` imports hypothesis when called.
"""


def check_op(target, spec=None, reference=None, *, devices=("cpu",), max_examples=30,
             **fields) -> None:
    """Check an op on inputs hypothesis draws from its spec, as minigrad checks its own: values
    against the NumPy reference (float64), gradients and gradients of gradients against finite
    differences (float64) over drawn broadcasting shapes, float32 kept, integer inputs refused
    by a float-only op, inputs not modified, every entry masked where the spec takes a mask.

    `target`: a Function subclass or function declared with `mg.op` (its declaration is used),
    or an undeclared Function subclass with `spec` and `reference` given here; `fields`
    override other fields of the declaration (`accuracy`, `eps`, `gradgrad`, ...). Raises
    the first failure, with the drawn case that shows it (hypothesis shrinks it first)."""
    import dataclasses

    try:
        from hypothesis import given, settings
        from hypothesis import strategies as st
    except ImportError:
        raise ImportError("check_op needs hypothesis: install the 'testing' extra (pip install "
                          "'minigrad-transformer[testing]')") from None

    from ..ops.registry import describe
    from . import op_checks
    from .strategies import cases

    overrides = {key: value for key, value in (("spec", spec), ("reference", reference))
                 if value is not None} | fields
    record = getattr(target, "op", None)
    if record is None:
        record = describe(target, **overrides)
    elif overrides:
        record = dataclasses.replace(record, **overrides)

    @settings(max_examples=max_examples, deadline=None, database=None)
    @given(data=st.data())
    def check(data) -> None:
        case = data.draw(cases(record))
        for device in devices:
            op_checks.check_case(record, case, device)

    check()
