"""Mechanism files: bodies, joints and force elements, turned into a lockstep model header.

A mechanism file (docs/reference/mechanism-file.md) is TOML like an equations file, but it names
bodies, joints and forces instead of M, Q and Phi. The joints are split into a spanning tree, whose
joint coordinates are the model's q, and the joints that close loops, whose conditions are its
constraints (model.py, MechanismReader.build_tree); the generated header evaluates the tree by the library's composite-rigid-body
and recursive Newton-Euler algorithms (include/lockstep/multibody/), so no equation of motion is ever
written out symbolically. Everything after the header -- compilation, cache, `lockstep check`, every
method and backend -- is the path model headers already take.
"""
