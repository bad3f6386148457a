"""autograd-conformance: the harness that runs case programs on torch and on an engine under
test, and reports where they diverge."""

__version__ = "0.1.0"
