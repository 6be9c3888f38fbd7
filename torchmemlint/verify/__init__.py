"""``torchmemlint verify``: replay the code around each finding and measure what it costs.

Nothing here imports torch: only the replay children (``server``, ``harness``, ``meters``,
``retention``) do, so that ``torchmemlint check`` and the flake8 plugin never pay for it.
"""
from torchmemlint.verify.runner import Limits, ReplayError
from torchmemlint.verify.verifier import FileFindings, Settings, VerifyResult, verify_findings, verify_paths

__all__ = ["FileFindings", "Limits", "ReplayError", "Settings", "VerifyResult", "verify_findings", "verify_paths"]
