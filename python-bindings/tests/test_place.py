"""heterps.place, Bundle.plan and heterps.Cluster."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import heterps
from conftest import LOCAL_CPU, PAPER, SHIPPED, require_models


def without_timing(plan):
    return {k: v for k, v in plan.items() if k != "solve_seconds"}


def test_place_matches_the_cli_plan(tmp_path):
    """place() returns the plan `heterps compile` records in its bundle, with
    the fields heterps-translate --hps-to-plan prints."""
    require_models()
    model = SHIPPED["mnist-mlp"].file
    plan = heterps.place(str(model), str(PAPER), 100000, "gpu-only", cache_dir=tmp_path)
    assert plan["strategy"] == "gpu-only" and plan["cluster"] == "paper"
    assert plan["stages"] and all(s["device"].startswith("gpu.") for s in plan["stages"])
    # The build the package came from: BUILD/python/heterps/__init__.py.
    tools = Path(heterps.__file__).resolve().parents[2] / "bin"
    subprocess.run([tools / "heterps", "compile", model, "--cluster", PAPER, "--throughput",
                    "100000", "--strategy", "gpu-only", "-o", tmp_path / "cli"],
                   check=True, capture_output=True)
    assert without_timing(plan) == without_timing(heterps.Bundle(tmp_path / "cli").plan)
    imported = tmp_path / "m.mlir"
    subprocess.run([tools / "heterps-translate", "--import-onnx", model, "-o", imported], check=True)
    placed = subprocess.run(
        [tools / "heterps-opt", "--hps-legalize-onnx=strict=1",
         f"--hps-place=cluster={PAPER} throughput=100000 strategy=gpu-only inference=true",
         imported],
        check=True, capture_output=True, text=True).stdout
    printed = subprocess.run([tools / "heterps-translate", "--hps-to-plan"], input=placed,
                             check=True, capture_output=True, text=True).stdout
    assert set(plan) == set(json.loads(printed))
    assert set(plan["stages"][0]) == set(json.loads(printed)["stages"][0])


def test_bundle_plan_is_the_placement(compiled, tmp_path):
    bundle = compiled("resnet20")
    plan = bundle.plan
    assert plan is not None and plan["feasible"]
    again = heterps.place(str(SHIPPED["resnet20"].file), str(LOCAL_CPU), 1000, "dp",
                          cache_dir=tmp_path)
    assert without_timing(again) == without_timing(plan)
    layers = [layer for stage in plan["stages"] for layer in stage["layers"]]
    assert layers and len(layers) == len(set(layers))


def test_cluster_from_yaml_and_dict(tmp_path):
    require_models()
    paper = heterps.Cluster.load(PAPER)
    assert paper.name == "paper" and "device_classes" in paper.text and paper.spec is None
    local = heterps.Cluster.local_cpu()
    assert local.spec["device_classes"][0]["kind"] == "cpu"
    plan = heterps.place(str(SHIPPED["mnist-mlp"].file), local, 1000, "dp", cache_dir=tmp_path)
    assert plan["cluster"] == "local"
    assert {s["device"] for s in plan["stages"]} == {"cpu.local"}
    spec = local.spec
    spec["name"] = "renamed"
    plan = heterps.place(str(SHIPPED["mnist-mlp"].file), spec, 1000, "dp", cache_dir=tmp_path)
    assert plan["cluster"] == "renamed"
    with pytest.raises(TypeError):
        heterps.Cluster("clusters/paper.yaml")


def test_plan_renders_as_a_table(tmp_path):
    """A plan shows in notebooks as a table of its stages."""
    require_models()
    plan = heterps.place(str(SHIPPED["mnist-mlp"].file), str(PAPER), 100000, "gpu-only",
                         cache_dir=tmp_path)
    assert isinstance(plan, dict)
    page = plan._repr_html_()
    assert "<table>" in page and "gpu-only" in page and "paper" in page
    assert page.count("<tr><td>") == len(plan["stages"])
    assert all(s["device"] in page for s in plan["stages"])
    assert "step:" not in page  # the direct step
