"""Engine error texts that no case can pin: their errors have no kind of their own
(conformance/case/kinds.py classifies them `unknown`, which `raises` does not take), so they
are compared with torch's text here. Found by mutation testing (benchmarks/README.md, seed 26:
constant_pad_nd's length check at `len(pad) // 3` let a pad of two pairs through for a 1-d
tensor)."""

from __future__ import annotations

import warnings

import pytest
import torch

import reference_engine as engine


@pytest.mark.parametrize("shape, pad", [((2,), (1, 1, 1, 1)), ((2, 3), (0, 1, 2, 3, 4, 5)),
                                        ((2, 3), (1, 1, 1, 1, 1, 1, 1, 1))])
def test_constant_pad_nd_refuses_a_pad_longer_than_twice_the_dims(shape: tuple[int, ...],
                                                                   pad: tuple[int, ...]) -> None:
    with pytest.raises(RuntimeError) as theirs:
        torch.constant_pad_nd(torch.ones(shape), pad)
    with pytest.raises(RuntimeError) as ours:
        engine.constant_pad_nd(engine.ones(shape), pad)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("a, b, left", [((3, 3), (2, 2), True), ((3, 3), (2, 2), False),
                                        ((3, 3), (2,), True), ((3, 3), (3, 2), False),
                                        ((2, 3, 3), (2, 4, 1), True)])
def test_linalg_solve_names_the_equation_of_incompatible_shapes(
        a: tuple[int, ...], b: tuple[int, ...], left: bool) -> None:
    """The text says "AX = B" for a left solve and "XA = B" for a right one (seed 28's
    ops/solve.py:93 AddNot, which swapped them, was left: no item reached the line)."""
    with pytest.raises(RuntimeError) as theirs:
        torch.linalg.solve(torch.ones(a), torch.ones(b), left=left)
    with pytest.raises(RuntimeError) as ours:
        engine.linalg.solve(engine.ones(a), engine.ones(b), left=left)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("shape, dim, index", [((2, 3), 1, [0, 1]), ((2, 3, 2), 0, [[0]]),
                                               ((2,), 0, [[0]])])
def test_gather_refuses_an_index_of_another_dim_count(shape: tuple[int, ...], dim: int,
                                                      index: list) -> None:
    """gather_shape_check: the index has as many dims as the input, fewer as more (seed
    32's ops/basic/indexing.py:84 NotEq_Gt let fewer through)."""
    with pytest.raises(RuntimeError) as theirs:
        torch.gather(torch.ones(shape), dim, torch.tensor(index))
    with pytest.raises(RuntimeError) as ours:
        engine.gather(engine.ones(shape), dim, engine.tensor(index))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["amax", "amin"])
@pytest.mark.parametrize("shape, dim", [((0,), ()), ((2, 0), 1)])
def test_amax_amin_of_an_empty_tensor_name_themselves(name: str, shape: tuple[int, ...],
                                                       dim: int | tuple) -> None:
    """ReduceOpsUtils.h's zero-numel checks name the op (seed 33's ops/extremes.py:74 AddNot
    swapped "amax" and "amin")."""
    with pytest.raises((RuntimeError, IndexError)) as theirs:
        getattr(torch, name)(torch.empty(shape), dim)
    with pytest.raises((RuntimeError, IndexError)) as ours:
        getattr(engine, name)(engine.empty(shape), dim)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["householder_product", "ormqr"])
@pytest.mark.parametrize("shape, tau_shape", [((2, 3, 3), (1, 3)), ((2, 3, 3), (3, 3)),
                                              ((2, 1, 3, 3), (2, 2, 3))])
def test_householder_refuses_tau_of_other_batch_dims(name: str, shape: tuple[int, ...],
                                                     tau_shape: tuple[int, ...]) -> None:
    """tau's batch dims equal the input's, smaller as larger (seed 34's
    ops/householder.py:204 NotEq_Gt let a smaller batch, (1,) against (2,), through)."""
    with pytest.raises(RuntimeError) as theirs:
        if name == "ormqr":
            torch.ormqr(torch.ones(shape), torch.ones(tau_shape), torch.ones(shape))
        else:
            torch.linalg.householder_product(torch.ones(shape), torch.ones(tau_shape))
    with pytest.raises(RuntimeError) as ours:
        if name == "ormqr":
            engine.ormqr(engine.ones(shape), engine.ones(tau_shape), engine.ones(shape))
        else:
            engine.linalg.householder_product(engine.ones(shape), engine.ones(tau_shape))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("padding", [-1, (0, -1), -2])
def test_unfold_refuses_negative_padding(padding: int | tuple[int, int]) -> None:
    """im2col_shape_check: padding non-negative, -1 too (seed 34's ops/folding.py:106
    NumberReplacer made the check `min(pad) >= -1`)."""
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.functional.unfold(torch.ones(1, 1, 4, 4), 2, padding=padding)
    with pytest.raises(RuntimeError) as ours:
        engine.nn.functional.unfold(engine.ones(1, 1, 4, 4), 2, padding=padding)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "bool"])
@pytest.mark.parametrize("size, stride, offset", [((3, 3), (3, 1), 1), ((2, 5), (1, 2), 0)])
def test_as_strided_out_of_bounds_names_the_element_size(dtype: str, size: tuple[int, ...],
                                                         stride: tuple[int, ...],
                                                         offset: int) -> None:
    """setStorage's text gives the itemsize and the byte counts it implies (seed 35's
    ops/shape_views.py:201 `bits // 8` made `bits - 8` survived: the 32 items that run
    as_strided stay in bounds)."""
    with pytest.raises(RuntimeError) as theirs:
        torch.zeros(9, dtype=getattr(torch, dtype)).as_strided(size, stride, offset)
    with pytest.raises(RuntimeError) as ours:
        engine.zeros(9, dtype=getattr(engine, dtype)).as_strided(size, stride, offset)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("call", [
    "x0.chunk(2, 0)", "x0.chunk(0, 0)", "x.chunk(0)", "x.chunk(-1)", "x.chunk(0, 5)",
    "x0.split(1)", "x.split(-1)", "x.split(-1, 5)", "x.split(0)", "x0.split([1])",
    "x.split([1, -1, 3])", "x.split([1, -1])", "x.split([5, 1])", "x0.unsafe_split(1)",
    "x.unsafe_split(0)", "x0.unsafe_chunk(1)", "x.unsafe_chunk(0)",
    "x.unsafe_split_with_sizes([1, -1, 3])", "x0.split_with_sizes([1])"])
def test_split_and_chunk_check_as_aten(call: str) -> None:
    """TensorShape.cpp's split, split_with_sizes, chunk and unsafe_ forms: a 0-d tensor,
    chunks < 1, a negative or (of a non-empty dim) zero split size, a negative entry before
    a wrong sum; chunk's and split's checks before the dim is wrapped. The default probe
    with every row drawn (h38ops, program 140) met chunk of a 0-d tensor: the engine raised
    Python's IndexError out of `shape[d]`."""
    errors = []
    for module in (torch, engine):
        with pytest.raises((RuntimeError, IndexError)) as raised:
            eval(call, {"x": module.ones(3), "x0": module.ones(())})
        errors.append((type(raised.value), str(raised.value)))
    assert errors[1] == errors[0]


@pytest.mark.parametrize("call", [
    "x.gather(0, i(1, 'uint8'))", "x.gather(0, i(1, 'int16'))",
    "x.masked_scatter(i(3, 'uint8'), x)", "x.masked_scatter(i(3, 'int8'), x.double())",
    "x.index_put((i(3, 'uint8'),), t(5.0))", "t([256], dtype=u8)", "t([-256], dtype=u8)",
    "t([-0.5], dtype=u8)", "x.to(u8).fill_(256)"])
def test_uint8_refusals_as_atens(call: str) -> None:
    """uint8 (the engine's since h38ops, for OpInfo's gather and masked_scatter samples): a
    non-empty gather index of another dtype than int32/int64, a non-bool mask (a uint8
    mask's deprecation warning first), index_put's masked_fill_ of a single value refusing
    a uint8 mask, and checked_convert's range (-255 to 255 from an integer, 0 to 255 from
    a float)."""
    seen = []
    for module in (torch, engine):
        names = {"x": module.ones(3), "u8": module.uint8, "t": module.tensor,
                 "i": lambda shape, name, m=module: m.zeros(shape, dtype=getattr(m, name))}
        with warnings.catch_warnings(record=True) as caught, \
                pytest.raises(RuntimeError) as raised:
            warnings.simplefilter("always")
            eval(call, names)
        seen.append((str(raised.value),
                     [str(w.message).split(" (Triggered internally")[0] for w in caught]))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("call", ["x[i(3, 'uint8')]", "x.gather(0, i((2, 0), 'uint8'))",
                                  "x.gather(0, i(0, 'uint8'))", "x.to(u8).fill_(-1)",
                                  "t([-1, 255], dtype=u8)", "x.to(u8) * 300"])
def test_uint8_values_as_atens(call: str) -> None:
    """A uint8 index tensor is a mask (with its deprecation warning); gather checks nothing
    of an empty index; a negative integer wraps into uint8."""
    seen = []
    for module in (torch, engine):
        names = {"x": module.tensor([1.0, 2.0, 3.0]), "u8": module.uint8, "t": module.tensor,
                 "i": lambda shape, name, m=module: m.ones(shape, dtype=getattr(m, name))}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = eval(call, names)
        seen.append((out.tolist(), str(out.dtype), tuple(out.shape),
                     [str(w.message).split(" (Triggered internally")[0] for w in caught]))
    assert seen[1] == seen[0]
