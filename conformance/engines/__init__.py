"""Engines shipped with the harness, each a module to name with `--engine` (the protocol they
follow is conformance/run/engine.py): `conformance.engines.compiled_autograd` (PyTorch's
compiled autograd) and `conformance.engines.torch_compile` (torch.compile, op by op). Their
dotted names are public: the expectations files are named after them."""
