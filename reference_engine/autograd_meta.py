"""How an op becomes part of the graph: OpSpec (the declarative entry, in the spirit of
derivatives.yaml), OpNode (the grad_fn it creates) and record() (the glue).

An OpSpec names, for each forward input, which saved values its gradient formula
reads. torch saves an *input* only if some input whose formula reads it requires
grad, but always saves the *result* when any formula reads it; record() applies
exactly that rule, which is what makes version-counter errors match torch.

Each op keeps its two derivatives side by side as derivatives.yaml does (`self: <backward>`,
`result: <jvp>`). `jvp` is one of:
- a formula `jvp(c)` giving the result's tangent, where `c` (forward_ad.JvpCtx) offers the
  forward inputs by name (`c.self`, `c.other`: primals, which carry no tangent), the result
  (`c.result`), the op's attributes, and each input's tangent as `<name>_t` (`c.self_t`;
  zeros where an input has none, like torch's efficient zero tensor);
- "auto_linear": the op is linear in its inputs, so the tangent is the op applied to the
  tangents (derivatives.yaml's `result: auto_linear`); the op's forward is named by
  `@linear_forward(SPEC)` on its definition;
- "auto_element_wise": for an op of one input, the backward formula applied to the tangent
  (`result: auto_element_wise`);
- None: no formula; forward mode through the op raises torch's "not implemented" error.
record() computes it when an input carries a tangent at the current dual level
(forward_ad.record_tangent), whatever the grad mode, as torch does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import (
    engine,  # engine.py imports tensor.py, which imports the ops: used at call time
    forward_ad,
    messages,
)
from .grad_mode import is_recording
from .graph import Edge, Node, node_class
from .saved import SavedVariable
from .tensor import Tensor

Grads = Sequence[Tensor | None]
Jvp = Callable[[Any], Tensor | Grads]
JVP_SHORTHANDS = ("auto_linear", "auto_element_wise")


def linear_forward(*specs: OpSpec) -> Callable[[Callable[..., Tensor]], Callable[..., Tensor]]:
    """Name the decorated function as the forward of these auto_linear specs."""
    def register(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
        for spec in specs:
            assert spec.jvp == "auto_linear", spec.grad_fn
            forward_ad.LINEAR_FORWARDS[spec.grad_fn] = fn
        return fn
    return register


class Ctx:
    """What a backward formula sees: saved tensors (checked on access), attributes,
    and which inputs need a gradient."""

    def __init__(self, node: OpNode) -> None:
        self._node = node
        # torch's generated apply unpacks each saved value once, in the order it was saved,
        # before any formula runs: saved-tensor unpack hooks run once per value and apply.
        # Each becomes an attribute (ctx.self, ctx.result); no saved name is a Ctx member's.
        for name, sv in node.saved.items():
            setattr(self, name, sv.unpack(node))

    def __getattr__(self, name: str) -> Any:
        # only what is not a saved value: the node's attributes
        return self.__dict__["_node"].attrs[name]

    def grads(self, *formulas: Callable[[], Tensor | None]) -> list[Tensor | None]:
        """Evaluate each input's formula only if the running backward wants that input's
        gradient (torch's task_should_compute_output): a formula not run unpacks nothing.
        They run in the order torch's generated apply runs them, its derivatives.yaml
        entry's input names sorted (load_derivatives sorts them: mul's `other` before
        `self`), which orders the nodes a create_graph backward makes (their sequence
        numbers, hence which a later backward runs first)."""
        names = self._node.spec.inputs
        order = (sorted(range(len(formulas)), key=lambda i: names[i])
                 if len(names) == len(formulas) else range(len(formulas)))
        out: list[Tensor | None] = [None] * len(formulas)
        for i in order:
            if self._node.should_compute(i):
                out[i] = formulas[i]()
        return out


@dataclass(frozen=True)
class OpSpec:
    grad_fn: str                                  # torch's node class name
    inputs: tuple[str, ...]                       # forward input names, in edge order
    saves: dict[str, tuple[str, ...]] = field(default_factory=dict)  # input -> saved names read
    backward: Callable[[Ctx, Tensor], Grads] = lambda ctx, g: [g]
    # torch's node also saves its index tensors (IndexBackward0's and IndexPutBackward0's
    # `indices`), which a backward without retain_graph frees like any saved tensor; here the
    # positions are plain attributes, so only their freeing is modelled (pack hooks do not see them)
    saves_indices: bool = False
    # outputs besides the result that a formula reads (cummax's indices, aminmax's min
    # and max), given as tensor attributes: saved after the inputs, in this order
    saved_outputs: tuple[str, ...] = ()
    # forward mode's formula (see the module docstring); None: not written yet
    jvp: Jvp | str | None = None
    # the inputs whose tangents the jvp formula reads (torch's codegen: the result gets a
    # tangent only when one of them has one, e.g. leaky_relu_backward's reads grad_output's
    # alone); None: every input
    jvp_reads: tuple[str, ...] | None = None
    # (attribute, op) pairs: a non-differentiable tensor argument the jvp formula passes
    # whole, not its primal, to an op without a forward formula, which refuses it when it
    # is dual (soft_margin_loss's `target` to soft_margin_loss_backward)
    jvp_whole: tuple[tuple[str, str], ...] = ()
    # the order torch saves (and pack hooks see) the saved values in, where it is not their
    # names' sorted order (log_sigmoid's self before buffer)
    save_order: tuple[str, ...] = ()
    # derived from `saves`: some formula reads the result, so it is saved whenever recorded
    saves_result: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.jvp, str) and self.jvp not in JVP_SHORTHANDS:
            raise AssertionError(f"{self.grad_fn}: jvp {self.jvp!r} is none of {JVP_SHORTHANDS}")
        if self.jvp == "auto_element_wise" and len(self.inputs) != 1:
            raise AssertionError(f"{self.grad_fn}: auto_element_wise needs one input, "
                             f"not {len(self.inputs)}")
        object.__setattr__(self, "saves_result",
                           any("result" in self.saves.get(name, ()) for name in self.inputs))


class OpNode(Node):
    def __init__(self, spec: OpSpec, edges: list[Edge], attrs: dict[str, Any]) -> None:
        super().__init__(edges)
        self.spec = spec
        self.attrs = attrs
        self.saved: dict[str, SavedVariable] = {}

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        g = grads[0]
        # torch's generated nodes compute nothing when no input needs a grad (every edge
        # None: an input that only requires grad through its base, a view made under
        # no_grad), whose saved values were never kept.
        if all(fn is None for fn, _ in self.next_edges):
            return [None] * len(self.next_edges)
        ctx = self.unpacked()
        # for an undefined input they return undefined grads, but only after unpacking
        return [None] * len(self.next_edges) if g is None else list(self.spec.backward(ctx, g))

    def unpacked(self) -> Ctx:
        """The node's Ctx: torch's generated apply unpacks every saved value first, whichever
        grads the running backward wants and even when its input grads are undefined (a
        linalg.vector_norm of ord 0 gives none): a modified or freed one raises."""
        if self.spec.saves_indices and self.__dict__.get("indices_released"):
            raise RuntimeError(messages.BACKWARD_TWICE)
        return Ctx(self)

    def release_variables(self) -> None:
        for sv in self.saved.values():
            sv.release()
        self.indices_released = True

    def __getattr__(self, name: str) -> Any:
        # grad_fn._saved_self etc., for introspection like torch's generated properties.
        # A name the spec saves but this node did not (no input needed it) reads None, as
        # torch's property of an undefined SavedVariable; a name the node's class does not
        # have raises as torch's (h39cov: it read None, IndexBackward0's _saved_indices).
        saved = self.__dict__.get("saved", {})
        if name.startswith("_saved_"):
            key = name[len("_saved_"):]
            if key in saved:
                return saved[key].unpack(self, in_backward=False)
            if key in self.__dict__.get("attrs", {}):
                return self.attrs[key]
            if key in self._saved_names():
                return None
        elif name.startswith("_raw_saved_"):
            # torch's SavedTensor object itself (register_hooks, data, unpack_hook)
            key = name[len("_raw_saved_"):]
            if key in saved or key in self._saved_names():
                return saved.get(key)
        raise AttributeError(messages.no_attribute(type(self).__name__, name))

    def _saved_names(self) -> set[str]:
        """Every name this node's spec can save (its generated class's properties)."""
        spec = self.__dict__.get("spec")
        return {n for names in spec.saves.values() for n in names} if spec else set()


# torch's fallback node for an op without a derivatives.yaml entry is a hand-written C++ node,
# named in full (autograd_not_implemented_fallback.cpp; h32ops: found by ctc_loss's case)
node_class("NotImplemented", OpNode).name = lambda self: "torch::autograd::NotImplemented"


def differentiable(inputs: Sequence[Tensor | None]) -> bool:
    return is_recording() and any(t is not None and t.requires_grad for t in inputs)


def build_node(spec: OpSpec, edges: list[Edge], inputs: Sequence[Tensor | None],
               result: Tensor, attrs: dict[str, Any], with_result: bool = True) -> OpNode:
    """The node of one op; `with_result=False` leaves the result to `save_result` (torch
    saves an output after setting its history, which saved-tensor pack hooks can see)."""
    node: OpNode = node_class(spec.grad_fn, OpNode)(spec, edges, attrs)
    wanted = {s for i, name in enumerate(spec.inputs) for s in spec.saves.get(name, ())
              if s == "result" or node.needs(i)}
    if wanted:
        by_name: dict[str, Any] = dict(zip(spec.inputs, inputs, strict=False))
        # Tensor attributes (where's condition) are saved too, with the same checks.
        by_name.update({k: v for k, v in attrs.items() if isinstance(v, Tensor)})
        # torch saves the inputs (by name, or in save_order) before the forward runs and its
        # outputs after
        outputs = [n for n in spec.saved_outputs if n in wanted]
        first = sorted(wanted - set(outputs), key=lambda n: (
            spec.save_order.index(n) if n in spec.save_order else len(spec.save_order), n))
        for name in first + outputs:
            if name == "result":
                if with_result:
                    save_result(node, result)
                continue
            t = by_name.get(name)
            if t is not None:
                node.saved[name] = SavedVariable(t, is_output=False)
    node.input_metadata = [result._meta()]
    return node


def save_result(node: OpNode, result: Tensor) -> None:
    """Save an op's result for its node if the formula reads it (an output is never a
    leaf: the op gives it this node as history)."""
    if node.spec.saves_result:
        node.saved["result"] = SavedVariable(result, is_output=True, is_leaf=False)


def record(spec: OpSpec, result: Tensor, inputs: Sequence[Tensor | None],
           **attrs: Any) -> Tensor:
    """Attach a grad_fn to a freshly computed result if autograd must track it, and its
    tangent if an input has one at the current dual level."""
    if forward_ad.active():
        forward_ad.record_tangent(spec, inputs, result, attrs)
        forward_ad.mark_batched(result, inputs)
    if not (result._dtype.is_differentiable and differentiable(inputs)):
        return result
    edges = [engine.gradient_edge(t) if t is not None else (None, 0) for t in inputs]
    node = build_node(spec, edges, inputs, result, attrs, with_result=False)
    result._set_grad_fn(node)
    save_result(node, result)
    return result


# ---- one node for several outputs (unbind and split, var_mean, the decompositions) ------

class MultiOutputNode(OpNode):
    """An OpNode whose formula receives the grads of all its outputs (None for unused)."""

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        ctx = self.unpacked()   # before the undefined grads' early return, as torch's
        if all(g is None for g in grads):
            return [None] * len(self.next_edges)
        return list(self.spec.backward(ctx, grads))  # type: ignore[arg-type]


def record_multi_output(spec: OpSpec, src: Tensor, outs: Sequence[Tensor],
                        attrs: dict[str, Any]) -> None:
    """One node of `spec` over src whose outputs are all of `outs` (unbind, var_mean)."""
    record_multi_input(spec, [src], outs, attrs)


def record_multi_input(spec: OpSpec, inputs: Sequence[Tensor | None], outs: Sequence[Tensor],
                       attrs: dict[str, Any]) -> None:
    """One node of `spec` over several inputs (None: an absent optional one) whose outputs
    are all of `outs` (native_group_norm, triangular_solve)."""
    edges = [engine.gradient_edge(t) if t is not None else (None, 0) for t in inputs]
    node = build_node(spec, edges, list(inputs), outs[0], attrs)
    multi = node_class(spec.grad_fn, MultiOutputNode)(spec, node.next_edges, node.attrs)
    multi.saved = node.saved
    multi.input_metadata = [o._meta() for o in outs]
    for i, out in enumerate(outs):
        out._set_grad_fn(multi, i)


# (h33ops) the fallback node of an op with several outputs (the fused attention backward's
# three grads) is the same C++ node
node_class("NotImplemented", MultiOutputNode).name = (
    lambda self: "torch::autograd::NotImplemented")
