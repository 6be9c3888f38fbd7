"""torchmemlint: find PyTorch GPU-memory antipatterns, fix them, and prove them at run time."""

__version__ = "0.1.0"
