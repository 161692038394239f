"""Golden-output guard: refactorings keep every shipped and reproduce scenario's
simulated output byte-identical. A change meant to move results re-records with
`python3 tests/golden/golden_cases.py --record` and says why in its commit."""
import sys
from pathlib import Path

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
sys.path.insert(0, str(GOLDEN))

import golden_cases  # noqa: E402


def test_every_golden_output_is_unchanged():
    got = golden_cases.outputs(golden_cases.cases())
    recorded = {p.stem for p in (GOLDEN / "outputs").glob("*.json")}
    assert recorded == set(got), "the set of golden cases changed: re-record"
    differ = [n for n, text in got.items() if (GOLDEN / "outputs" / f"{n}.json").read_text() != text]
    assert not differ, f"{len(differ)} golden outputs differ, first: {differ[:5]}"
