"""Hypothesis strategies that build random autograd Programs.

They build the same IR the YAML cases parse into (`conformance.case.program`), from small named
pieces, each a function of a `Dice` (the action's random choices), the generator's symbolic
`State` (which names exist, their shapes, dtypes, whether they require grad, whether their
values are positive) and the `GenSettings` (sizes, dtypes, devices), called by the one
composite strategy `programs()`. The pieces are rows of one table, `ACTIONS`.

The ops come from the engine's op registry (`reference_engine.registry`), not from a list
of their own: every differentiable row is generated in its function, method and in-place
forms (and as an operator where it has one), or is named in `registry.NOT_GENERATED` with
the reason; `conformance.gen.op_table` holds that table, `conformance.gen.op_calls` the
piece that draws from it, `conformance.gen.custom_functions` the custom Functions a program
declares, `conformance.gen.pieces` the other pieces, `conformance.gen.forward` the
forward-mode and complex blocks, and `conformance.gen.state` the settings, state, dice and
leaves every piece shares.

Not generated on purpose: an op mixing float32 and float64 operands (every input of an op
takes its first input's dtype). A float32 result promoted into a float64 one is compared at
float64's tolerance, and float32 rounding that depends on a BLAS kernel's summation order
(addmm, mm) is not the reference engine's to reproduce (found by the generator: a float32
addmm one ulp off, seen through `torch.sub(addmm(...), float64)`). Leaves of both dtypes
still meet in a program's final loss.

The mix is steered, by construction, towards the behaviour that matters: the error paths
(backward twice through freed buffers, modified saved tensors, in-place on leaves and their
views, multi-output views, no_grad) are reached by motifs that set them up on purpose, and
most programs end in a backward or grad call.

Drawing: hypothesis' per-draw bookkeeping dominated the cost of a program, so each part
(a leaf, an action, the ending) is ONE integer draw, the seed of the part's `Dice`; every
choice in it, which action and which op included, is decoded from that seed. The shrinker
deletes whole parts (one draw each). A draw is a bare choice, without a span of its own
(`seed_source`), or, where it goes through a strategy, has a label of its own (its
position): hypothesis mutates an example by copying a span over another of the same label,
and with one label for every action it spent most of its calls on such copies (207 of 266
for 200 programs: a quarter overran, a tenth repeated a program already drawn), where a new
program costs the same and differs more.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, given
from hypothesis import seed as hseed
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from conformance.case import program as ir
from conformance.gen.custom_functions import custom_function
from conformance.gen.forward import complex_chain, dual_block, own_dual_block
from conformance.gen.op_calls import registry_op
from conformance.gen.pieces import (
    Piece,
    autograd_grad,
    backward,
    backward_twice,
    final_backward,
    grad_mode_block,
    hook,
    inplace,
    loop,
    matmul,
    modify_saved,
    new_leaf,
    shape_assert,
    tensor_state,
    view,
)
from conformance.gen.state import (
    DEFAULT,
    SEED,
    SEED_MAX,
    Dice,
    Emit,
    GenSettings,
    State,
    leaf,
)


@dataclass(frozen=True)
class Action:
    """One kind of step a program takes: the piece that builds it, how often it is drawn
    (relative weight), and the feature families (conformance.case.vocabulary) it is there for."""

    name: str
    piece: Piece
    weight: int
    features: frozenset[str]


def _action(name_: str, piece: Piece, weight: int, *features: str) -> Action:
    return Action(name_, piece, weight, frozenset(features))


# Ops dominate (the registry's rows, each with a share of programs big enough to compare its
# backward); motifs are frequent enough to reach their error paths in a good share.
ACTIONS: tuple[Action, ...] = (
    _action("op", registry_op, 60, "ops", "reductions", "views", "matmul", "inplace"),
    _action("matmul", matmul, 1, "matmul"),
    _action("view", view, 2, "views"),
    _action("inplace", inplace, 1, "inplace"),
    _action("backward", backward, 2, "backward_options", "retain_graph", "higher_order"),
    _action("grad", autograd_grad, 2, "autograd_grad", "higher_order"),
    _action("hook", hook, 1, "hooks"),
    _action("state", tensor_state, 1, "data", "retain_grad", "requires_grad"),
    _action("grad_mode", grad_mode_block, 1, "grad_mode"),
    _action("loop", loop, 1, "retain_graph"),
    _action("assert", shape_assert, 1),
    _action("function", custom_function, 1, "custom_function"),
    _action("backward_twice", backward_twice, 1, "retain_graph"),
    _action("modify_saved", modify_saved, 1, "inplace"),
    _action("leaf", new_leaf, 1),
    # The dual-level block, weight 10 (h32fwd, 2026-11-27): forward.own_dual_block (duals of
    # its own leaves, each piece and unpack a draw of its own) lets the shrinker cut a wrong
    # mul jvp down to a few statements (tests/test_generator_finds_faults.py). With it, the
    # default profile's first 250 programs agree with torch (benchmarks/generator_probe.py
    # 250: 0 diverge) after the engine fixes the probe led to: 2 of 250 diverged before
    # (index_select's error on its dim-1 path, index_fill_'s partial fill before its error;
    # programs 138 and 175). Earlier probes: 33 of 150 with every row at weight 15 (h27gen),
    # 53 of 250 with 326 rows (h30gen): a tangent's version and is_view, fixed since or
    # listed in forward.FORWARD_PENDING.
    _action("dual", own_dual_block, 10, "forward_ad", "custom_function"),
    # The complex chain: weight 0, not in the default mix (COMPLEX draws it). Weight 5
    # was tried (h39fwd, stop 45): the default profile's 250 programs agreed with torch
    # (generator_probe.py 250: 0 diverge; 150 of seed 45: 1, complex sqrt's double-backward
    # graph, fixed), 64 % drew a chain and every complex op's gradient was compared in at
    # least 10 %; but the draws it moves left tests/test_generator_finds_faults.py's
    # neg_result_claims_leaf search shrinking to 11 statements, over its bound of 8 (the
    # fault found, the shrunk program holding no complex statement). The complex table's
    # fixes stand (forward.complex_chain: log and sqrt not drawn after a neg; complex sub;
    # the twin for complex values): generator_probe.py 100 --table COMPLEX: 0 diverge.
    _action("complex", complex_chain, 0, "complex"),
)
BY_NAME: dict[str, Action] = {a.name: a for a in ACTIONS}
WEIGHTED: tuple[Action, ...] = tuple(a for a in ACTIONS for _ in range(a.weight))
# An action's draw ends the program with probability 1/STOP (a program has at most
# settings.max_actions): with the op action's weight, about 20 op actions per program under
# the default settings (measured: 5,050 in the default profile's 250 programs), so that each
# of the registry's ~270 ops is the first op of an action in about 5 % of programs or more
# (the floors in tests/conformance/test_strategies.py).
STOP = 60
MOTIFS = (BY_NAME["modify_saved"], BY_NAME["backward_twice"])
# Tables of one kind of action (`programs(actions=...)`): forward-mode programs, every
# action a dual-level block (the JVP fault-injection benchmark, the per-op jvp floors),
# and complex ones.
FORWARD: tuple[Action, ...] = (
    _action("dual", dual_block, 1, "forward_ad", "custom_function"),)
COMPLEX: tuple[Action, ...] = (BY_NAME["complex"],)


@st.composite
def programs(draw: st.DrawFn, settings: GenSettings = DEFAULT,
             actions: tuple[Action, ...] = WEIGHTED) -> ir.Program:
    """A random program: a few leaves, then ops and autograd actions (each drawn from
    `actions`), often a final backward."""
    state = State()
    stmts: list[ir.Stmt] = []

    def add(emit: Emit) -> None:
        nonlocal state
        stmts.extend(emit.stmts)
        state = emit.state

    # Every part may shrink away (an action with nothing to act on draws a leaf first), so
    # a failing program shrinks to the few statements its failure needs. Each part is one
    # draw, which with the draw before it seeds the part's dice (hypothesis repeats a drawn
    # value often across examples; the pair keeps the parts diverse, while deleting a part,
    # the shrinker's main move, changes only the part after it). The value 0, which
    # hypothesis draws often and the shrinker aims at, skips the part; any other multiple
    # of STOP ends the actions. (0 ending them all left a quarter of the default profile's
    # programs without an op.) A drawn count would instead tie every later draw to it.
    codes = [0]
    seed = seed_source(draw)

    def dice() -> Dice | None:
        code = seed()
        codes.append(code)
        return Dice(code << 32 | codes[-2]) if code % STOP else None

    for _ in range(2):
        leaf_dice = dice()
        if leaf_dice is not None:
            add(leaf(leaf_dice, state, settings))
    for _ in range(settings.max_actions):
        action_dice = dice()
        if action_dice is None:
            if codes[-1]:
                break
            continue
        if not state.vars:
            add(leaf(action_dice, state, settings))
        action_dice.parts = dice
        add(action_dice.pick(actions).piece(action_dice, state, settings))
    # the final backward comes before a motif, which would leave its own freed or modified
    # graph as the newest names: the backward is through the ops drawn so far
    end = dice() or Dice(codes[-2])
    if not state.vars:
        add(leaf(end, state, settings))
    if end.chance(9, 10):
        add(final_backward(end, state, settings))
    if end.chance(2, 5):
        add(end.pick(MOTIFS).piece(end, state, settings))
    # Function classes first: a class statement defines a name later statements call.
    classes = tuple(s for s in stmts if isinstance(s, ir.FunctionClass))
    rest = tuple(s for s in stmts if not isinstance(s, ir.FunctionClass))
    return ir.Program(classes + rest)


def seed_source(draw: st.DrawFn) -> Callable[[], int]:
    """What draws a part's seed, 0..SEED_MAX. Where `draw` is the bound method of
    hypothesis' ConjectureData (as @composite passes it), the choice is drawn from that
    object itself: a draw through a strategy (its validation, a span, its bounds' weights)
    cost three times the choice, and a program makes one per part. Anywhere else (a
    hypothesis without that method), through SEED, with a label per position (see
    "Drawing" above)."""
    draw_integer = getattr(getattr(draw, "__self__", None), "draw_integer", None)
    if callable(draw_integer):
        return functools.partial(draw_integer, 0, SEED_MAX)
    labels = (f"part {i}" for i in itertools.count())
    return lambda: draw(SEED, label=next(labels))


def sample_programs(n: int, settings: GenSettings = DEFAULT,
                    actions: tuple[Action, ...] = WEIGHTED,
                    seed: int | None = None) -> list[ir.Program]:
    """The first `n` programs hypothesis generates, derandomized (the same list on every
    run and machine): what the `default` profile's run meets, for measurements (of the
    table `actions`: FORWARD, COMPLEX). With a `seed`, the programs hypothesis draws from
    that seed instead (hypothesis' @seed overrides the derandomized digest): another sample
    of the same distribution, as the tests that draw under other profiles or settings
    meet (benchmarks/generator_probe.py --seed)."""
    from conformance.gen import profiles  # registers the profiles

    drawn: list[ir.Program] = []

    # every setting from the `default` profile, whatever profile is loaded: the programs
    # hypothesis draws depend on the settings, not only on the seed
    assert "default" in profiles.PROFILES

    # (two functions: hypothesis derandomizes from a digest of the test's source, so the
    # default table's keeps the source the `default` profile's programs were drawn with)
    @hsettings(parent=hsettings.get_profile("default"), max_examples=n,
               phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(programs(settings))
    def collect(program: ir.Program) -> None:
        drawn.append(program)

    @hsettings(parent=hsettings.get_profile("default"), max_examples=n,
               phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(programs(settings, actions))
    def collect_table(program: ir.Program) -> None:
        drawn.append(program)

    test = collect if actions is WEIGHTED else collect_table
    with without_local_constants():
        (test if seed is None else hseed(seed)(test))()
    return drawn


@contextlib.contextmanager
def without_local_constants() -> Iterator[None]:
    """Hypothesis mixes into its draws constants it reads from the source of the modules
    imported so far (and caches them), so the same derandomized test draws other programs
    after other imports: in a script, alone under pytest, and in the full suite. Without
    them the list depends on nothing but the code here."""
    from hypothesis.internal.conjecture import providers

    if not all(hasattr(providers, n) for n in (
            "_get_local_constants", "CONSTANTS_CACHE", "Constants", "SortedSet")):
        yield  # a hypothesis without local constants (older) or with them moved (newer)
        return
    sorted_set = providers.SortedSet
    empty = providers.Constants(integers=sorted_set(), floats=sorted_set(), bytes=sorted_set(),
                                strings=sorted_set())
    original, cache = providers._get_local_constants, providers.CONSTANTS_CACHE
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE = type(cache)(1024)
    try:
        yield
    finally:
        providers._get_local_constants, providers.CONSTANTS_CACHE = original, cache
