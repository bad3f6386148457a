"""Generated programs under the active hypothesis profile (ci unless chosen otherwise)."""

from conformance.generated_suite import test_generated_programs_agree_with_torch

__all__ = ["test_generated_programs_agree_with_torch"]
