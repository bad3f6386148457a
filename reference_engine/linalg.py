"""torch.linalg: its functions are registry rows (`linalg.<name>`, reference_engine/
registry.py), whose forwards live in ops/ (ops/linalg_functions.py names them); the facade
sets each one here. (ops/linalg.py is another module: the products mm, mv, matmul, ...)"""
