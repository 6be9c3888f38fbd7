"""Property tests (issue 16): on mutated fixtures and on programs generated from Python's grammar,
``check`` never fails inside and ``fix --unsafe-fixes`` writes code that parses, is idempotent, and
leaves programs without findings byte for byte. A bounded, derandomized number of examples here;
``bench/fuzz.py`` runs the same properties on as many as wanted."""
import importlib.util
import sys
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

_spec = importlib.util.spec_from_file_location("fuzz", Path(__file__).resolve().parents[1] / "bench" / "fuzz.py")
fuzz = importlib.util.module_from_spec(_spec)
sys.modules["fuzz"] = fuzz
_spec.loader.exec_module(fuzz)

CORPUS = fuzz.corpus()
BOUNDED = settings(max_examples=60, derandomize=True, deadline=None, database=None,
                   suppress_health_check=list(HealthCheck))


@BOUNDED
@given(st.sampled_from(CORPUS), st.randoms(use_true_random=False))
def test_mutated_fixtures(source, rng):
    program = fuzz.mutate(source, rng)
    assert fuzz.problems(program) == [], program.decode("utf-8", "replace")


@pytest.mark.parametrize("mutation", fuzz.MUTATIONS, ids=lambda m: m.__name__)
def test_each_mutation_on_a_training_script(mutation):
    source = (Path(fuzz.REPO_ROOT) / "bench" / "samples" / "train_classifier.py").read_bytes()
    import random

    for seed in range(3):
        program = mutation(source.decode(), random.Random(seed)).encode()
        assert fuzz.problems(program) == [], program.decode()


def test_generated_programs():
    pytest.importorskip("hypothesmith")
    for program in fuzz.generated_programs(15, seed=0, batch=15):
        assert fuzz.problems(program) == [], program.decode("utf-8", "replace")
