"""Forward-mode AD of the reference engine (reference_engine/forward_ad.py).

Every gradcheck row (each registry op with a sample, in each of its forms, and the rows
written by hand: views, in-place ops, setitem, ...) has its tangent checked against a
central difference of the row's function along the same direction, so a JVP formula that
is wrong fails here whatever torch says. The API's rules and error texts follow.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

import reference_engine as torch
from reference_engine import forward_ad as fwAD
from reference_engine import messages
from reference_engine.autograd_meta import OpSpec, record
from tests.reference_engine.test_gradcheck import OPS, _outputs

# rows that make a dual level themselves (backward-mode checks of make_dual/unpack_dual)
_OWN_LEVEL = ("make_dual", "unpack_dual_primal")
# rows whose op has no forward-mode formula in torch's derivatives.yaml (index_reduce,
# torch.cholesky): the engine refuses them in torch's words, as torch does; the op's name
# in that text
_NO_FORMULA = {"index_reduce": "index_reduce", "index_reduce_mean": "index_reduce",
               "cholesky_lower": "cholesky", "igamma_other": "igamma",
               # (h28nnf) cdist's and pdist's ATen ops
               "cdist": "_cdist_forward", "nn.functional.pdist": "_pdist_forward",
               "pdist_p3": "_pdist_forward", "cdist_batched": "_cdist_forward",
               **{f"cdist_p{p}": "_cdist_forward" for p in (0.0, 1.0, 0.5, 3.0, float("inf"))},
               **dict.fromkeys(("cdist_mm", "cdist_mm_batched"), "_euclidean_dist"),
               # (h30ops) embedding_bag's ATen op
               **dict.fromkeys(("nn.functional.embedding_bag", "embedding_bag_mean_2d",
                                "embedding_bag_max_last_offset"), "_embedding_bag"),
               # (h31ops) grid sampling's ATen ops
               **dict.fromkeys(("nn.functional.grid_sample", "grid_sampler_2d",
                                "grid_sample_bicubic_border", "grid_sample_bicubic_reflection",
                                "grid_sample_nearest_border"), "grid_sampler_2d"),
               **dict.fromkeys(("grid_sampler_3d", "grid_sample_3d_reflection"),
                               "grid_sampler_3d"),
               # (h33ops) ormqr's entry has no result formula line at all
               **dict.fromkeys(("ormqr", "ormqr_left_transpose", "ormqr_right_transpose"),
                               "ormqr"),
               # (h33ops) the fused CPU attention kernel
               **dict.fromkeys(("nn.functional.scaled_dot_product_attention",
                                "sdpa_fused_scaled"),
                               "_scaled_dot_product_flash_attention_for_cpu")}
# (h29ops2) rows whose op has a derivatives.yaml entry with no result formula: torchgen's
# generated code refuses forward mode with its longer text (messages.fwad_no_formula)
_NO_RESULT_FORMULA = {"nn.functional.multi_margin_loss": "multi_margin_loss",
                      "nn.functional.multi_margin_loss_none": "multi_margin_loss",
                      "nn.functional.multilabel_margin_loss": "multilabel_margin_loss_forward",
                      # (h32ops) ctc_loss's ATen op, directly and behind log_softmax
                      "nn.functional.ctc_loss": "_ctc_loss",
                      "ctc_loss_through_log_softmax": "_ctc_loss"}
# rows whose op torch gives a forward formula that the engine does not model yet: expected
# to fail (strict: one that starts to pass must leave this list)
_ENGINE_GAPS = {"batch_norm_eval": "native_batch_norm's jvp (derivatives.yaml batch_norm_jvp) "
                                   "is not modelled: eval-mode BatchNorm1d refuses forward mode"}
# Ops whose jvp the engine computes as torch 2.13 does, where torch's is not the derivative:
# the central difference tells them apart, so the test fails there, as it must.
_TORCH_WRONG = {n: "torch 2.13's cholesky_inverse_jvp (FunctionsManual.cpp) multiplies "
                   "-X dCF X CF, not -X dCF CF X: a wrong tangent for a non-diagonal factor "
                   "(pytorch/pytorch#196682, fix in PR #197010); the engine models torch's"
                for n in ("cholesky_inverse_lower", "cholesky_inverse_upper")}
EPS = 1e-6


@pytest.fixture(autouse=True)
def _float64_and_no_level() -> Any:
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)
    while fwAD._current_level >= 0:
        fwAD.exit_dual_level()


@pytest.mark.parametrize("name", sorted(_NO_FORMULA))
def test_an_op_torch_gives_no_formula_refuses_forward_mode(name: str) -> None:
    f, shapes = OPS[name]
    with fwAD.dual_level():
        # (a square input gets a dominant diagonal: cholesky's domain)
        duals = [fwAD.make_dual(torch.ones(s) + (torch.tensor(np.eye(s[0])) if len(s) == 2
                                                 and s[0] == s[1] else 0), torch.ones(s))
                 for s in shapes]
        with pytest.raises(NotImplementedError) as info:  # TORCH_CHECK_NOT_IMPLEMENTED
            f(*duals)
    assert str(info.value) == messages.fwad_not_implemented(_NO_FORMULA[name])


@pytest.mark.parametrize("name", sorted(_NO_RESULT_FORMULA))
def test_an_op_with_no_result_formula_refuses_forward_mode(name: str) -> None:
    f, shapes = OPS[name]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(torch.ones(s), torch.ones(s)) for s in shapes]
        with pytest.raises(NotImplementedError) as info:
            f(*duals)
    assert str(info.value) == messages.fwad_no_formula(_NO_RESULT_FORMULA[name])


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(reason=_ENGINE_GAPS[n], strict=True,
                                            raises=NotImplementedError))
    if n in _ENGINE_GAPS else
    pytest.param(n, marks=pytest.mark.xfail(reason=_TORCH_WRONG[n], strict=True,
                                            raises=AssertionError))
    if n in _TORCH_WRONG else n
    for n in OPS if n not in _OWN_LEVEL and n not in _NO_FORMULA
    and n not in _NO_RESULT_FORMULA])
def test_tangent_matches_central_difference(name: str) -> None:
    f, shapes = OPS[name]
    rng = np.random.default_rng(zlib.crc32(f"jvp[{name}]".encode()))
    xs = [rng.uniform(-1, 1, s) for s in shapes]
    vs = [rng.uniform(-1, 1, s) for s in shapes]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(torch.tensor(x), torch.tensor(v)) for x, v in zip(xs, vs,
                                                                                 strict=True)]
        tangents = [fwAD.unpack_dual(o).tangent for o in _outputs(f(*duals))]
        got = [None if t is None else np.array(t._data) for t in tangents]
    plus = _outputs(f(*[torch.tensor(x + EPS * v) for x, v in zip(xs, vs, strict=True)]))
    minus = _outputs(f(*[torch.tensor(x - EPS * v) for x, v in zip(xs, vs, strict=True)]))
    for k, (t, p, m) in enumerate(zip(got, plus, minus, strict=True)):
        expected = (p._data - m._data) / (2 * EPS)
        assert t is not None or not np.any(expected), f"output {k} has no tangent"
        np.testing.assert_allclose(np.zeros_like(expected) if t is None else t, expected,
                                   rtol=1e-4, atol=1e-5, err_msg=f"output {k}")


def test_a_level_gives_tangents_and_its_exit_removes_them() -> None:
    primal, tangent = torch.ones(2), torch.tensor([1.0, 2.0])
    assert fwAD.unpack_dual(primal) == (primal, None)   # no level: as-is
    with fwAD.dual_level() as level:
        assert level == 0 and fwAD._current_level == 0
        dual = fwAD.make_dual(primal, tangent)
        assert fwAD.unpack_dual(dual).tangent is tangent
        assert dual._base is primal and fwAD.unpack_dual(primal).tangent is None
        out = dual * 3
        np.testing.assert_array_equal(fwAD.unpack_dual(out).tangent._data, [3.0, 6.0])
    assert fwAD._current_level == -1
    with fwAD.dual_level():
        assert fwAD.unpack_dual(dual).tangent is None and fwAD.unpack_dual(out).tangent is None


def test_tangents_ignore_grad_mode_but_not_detach() -> None:
    with fwAD.dual_level():
        dual = fwAD.make_dual(torch.ones(2), torch.ones(2))
        with torch.no_grad():
            assert fwAD.unpack_dual(dual * 2).tangent is not None
        assert fwAD.unpack_dual(dual.detach() * 2).tangent is None
        copy = dual.clone()
        copy.detach_()
        assert fwAD.unpack_dual(copy).tangent is None


def test_inplace_writes_the_tangent_it_has_and_the_base_tangent_of_a_view() -> None:
    with fwAD.dual_level():
        tangent = torch.ones(2)
        dual = fwAD.make_dual(torch.ones(2), tangent)
        dual *= 2
        np.testing.assert_array_equal(tangent._data, [2.0, 2.0])   # written in place
        view = dual.narrow(0, 0, 1)
        view *= 2
        np.testing.assert_array_equal(tangent._data, [4.0, 2.0])
        plain = torch.zeros(2)
        plain[0] = dual[1]   # a view of a tensor without tangent: the base gets zeros first
        np.testing.assert_array_equal(fwAD.unpack_dual(plain).tangent._data, [2.0, 0.0])
        other = torch.zeros(2)
        alias = other.detach()   # not a forward view: its base gets nothing
        alias += dual
        assert fwAD.unpack_dual(other).tangent is None
        np.testing.assert_array_equal(fwAD.unpack_dual(alias).tangent._data, [4.0, 2.0])


def test_a_view_reads_the_tangent_its_base_gets_later() -> None:
    with fwAD.dual_level():
        base = torch.zeros(2, 2)
        row = base[1]
        base.copy_(fwAD.make_dual(torch.ones(2, 2), torch.tensor([[1.0, 2.0], [3.0, 4.0]])))
        np.testing.assert_array_equal(fwAD.unpack_dual(row).tangent._data, [3.0, 4.0])


@pytest.mark.parametrize(("call", "kind", "text"), [
    (lambda: fwAD.make_dual(torch.ones(2), torch.ones(2)), RuntimeError, messages.FWAD_NO_LEVEL),
    (lambda: fwAD.exit_dual_level(), RuntimeError, messages.FWAD_LEVEL_NEGATIVE),
])
def test_errors_outside_a_level(call: Any, kind: type[Exception], text: str) -> None:
    with pytest.raises(kind) as info:
        call()
    assert str(info.value) == text


def test_errors_inside_a_level() -> None:
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=r"^Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError) as size:
            fwAD.make_dual(torch.ones(2), torch.ones(3))
        assert str(size.value) == messages.fwad_size_mismatch([2], [3])
        assert "Tensor is of size [2] while the given forward gradient is of size [3]." \
            in str(size.value)
        dual = fwAD.make_dual(torch.ones(2), torch.ones(2))
        with pytest.raises(RuntimeError, match="already has a forward gradient at the same "
                                               "level 0"):
            fwAD.make_dual(dual, torch.ones(2))
        with pytest.raises(ValueError, match=r"primal to be floating point or complex, but "
                                             r"got: torch\.int64"):
            fwAD.make_dual(torch.ones(2, dtype=torch.int64), torch.ones(2))
        with pytest.raises(RuntimeError, match="not the last one that was created"):
            fwAD.exit_dual_level(level=3)


def test_a_tangent_of_another_dtype_is_kept_and_one_of_another_layout_is_copied() -> None:
    with fwAD.dual_level():
        wide = torch.ones(2, dtype=torch.float64)
        assert fwAD.unpack_dual(fwAD.make_dual(torch.ones(2, dtype=torch.float32), wide)
                                ).tangent is wide
        spread = torch.ones(1).expand(2)
        kept = fwAD.unpack_dual(fwAD.make_dual(torch.ones(2), spread)).tangent
        assert kept is not spread and kept.stride() == (1,)


def test_an_op_without_a_formula_says_so_in_torchs_words() -> None:
    spec = OpSpec("AtanhBackward0", ("self",))
    with fwAD.dual_level():
        dual = fwAD.make_dual(torch.ones(2), torch.ones(2))
        with pytest.raises(RuntimeError) as info:
            record(spec, torch.ones(2), [dual])
    assert str(info.value) == messages.fwad_not_implemented("atanh")
    assert str(info.value).startswith("Trying to use forward AD with atanh that does not "
                                      "support it because it has not been implemented yet.")
