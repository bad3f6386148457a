"""Generated programs under the active hypothesis profile (ci unless chosen otherwise)."""

from conformance.generated_suite import (
    _programs_from_the_generator_alone,
    test_generated_programs_agree_with_torch,
)

__all__ = ["_programs_from_the_generator_alone", "test_generated_programs_agree_with_torch"]
