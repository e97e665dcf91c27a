"""bench/device_plan.py, the next device call kept in the repository: every
variant names cases that exist (a typo would cost a device call: the case
is skipped there as "not compiled"), every variant is checked before it is
timed, and the summary compares each row with main's same case. No GPU
needed (nothing is compiled or run here)."""

import json
import os
import sys

import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import device_plan  # noqa: E402
import gpu_cases  # noqa: E402
import gpu_recipes  # noqa: E402


def test_variants_name_existing_cases():
    cases = {c["name"] for c in gpu_cases.CASES}
    checks = cases | {c["name"] for c in gpu_recipes.CHECK_CASES}
    benches = {c["name"] for c in gpu_cases.CASES if c["bench"]} | \
        {c["name"] for c in gpu_recipes.BENCH_CASES}
    names = [v["name"] for v in device_plan.VARIANTS]
    assert len(names) == len(set(names)) and names[0] == "main"
    for v in device_plan.VARIANTS:
        assert v["check"], v["name"]
        assert set(v["check"]) <= checks, (v["name"], set(v["check"]) - checks)
        assert set(v["bench"]) <= benches, (v["name"], set(v["bench"]) - benches)
    # Every timed case of a variant is also timed by main (the baseline of
    # the same call).
    main = set(device_plan.VARIANTS[0]["bench"])
    for v in device_plan.VARIANTS[1:]:
        assert set(v["bench"]) <= main, (v["name"], set(v["bench"]) - main)


def test_unknown_variant_is_an_error():
    with pytest.raises(SystemExit, match="no variant nope"):
        device_plan.selected(["nope"])


def test_summary_against_main(tmp_path, capsys):
    rows = {"main": [10.0, 10.4], "pf1": [8.0, 8.2]}
    for name, us in rows.items():
        for rep, t in enumerate(us):
            (tmp_path / f"plan_{name}_{rep + 1}.json").write_text(json.dumps(
                {"rows": [{"case": "mm_m16_n14336_k4096", "us": t,
                           "variant": "decode_w4a16_wgmma"}]}))
    device_plan.summarize(str(tmp_path), 2, device_plan.selected(
        ["main", "pf1"]))
    out = capsys.readouterr().out
    assert "| pf1 | mm_m16_n14336_k4096 | decode_w4a16_wgmma | 8.00 / 8.20 " \
           "| 10.20 | -20.6% |" in out
    summary = json.loads((tmp_path / "plan_summary.json").read_text())
    assert [s["variant"] for s in summary] == ["main", "pf1"]
    assert summary[1]["main_us"] == pytest.approx(10.2)
