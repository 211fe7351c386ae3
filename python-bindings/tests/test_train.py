"""Bundle.train: a training bundle of a shipped model trained from NumPy."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import heterps
from conftest import LOCAL_CPU, SHIPPED, require_models


def task(rows: int, seed: int):
    """MNIST-shaped images whose class a hidden linear teacher decides from
    the 14x14 image the model's max-pool recovers."""
    teacher = np.random.default_rng(99).normal(size=(196, 10))
    small = np.random.default_rng(seed).normal(size=(rows, 196))
    image = np.repeat(np.repeat(small.reshape(rows, 1, 14, 14), 2, axis=2), 2, axis=3)
    return {"image": image.astype(np.float32),
            "label": np.argmax(small @ teacher, axis=1).astype(np.int64)}


@pytest.fixture(scope="module")
def training_bundle(cache_dir):
    require_models()
    return heterps.compile(str(SHIPPED["mnist-mlp"].file), cluster=str(LOCAL_CPU), train=True,
                           loss="softmax-ce", optimizer="adam", learning_rate=0.003,
                           batch=32, static_batch=True, cache_dir=cache_dir)


def test_metrics_per_log_interval(training_bundle):
    assert training_bundle.training
    run = training_bundle.train(task(2048, 1), steps=100, log_every=25, eval=task(512, 2))
    metrics = list(run)
    train = [m for m in metrics if m["kind"] == "train"]
    [evaluation] = [m for m in metrics if m["kind"] == "eval"]
    assert [m["step"] for m in train] == [25, 50, 75, 100]
    assert all(m["steps"] == 100 and m["samples_per_second"] > 0 for m in train)
    assert train[-1]["loss"] < 0.6 * train[0]["loss"]
    # Chance is about 0.15 (the teacher's largest class).
    assert evaluation["accuracy"] > 0.3 and evaluation["samples"] == 512
    summary = run.summary
    assert summary["steps"] == 100 and summary["samples"] == 3200 and not summary["interrupted"]
    assert summary["eval_accuracy"] == pytest.approx(evaluation["accuracy"], abs=1e-4)
    times = summary["step_seconds"]
    assert set(times) == {"data", "stages", "update", "server_calls"}
    assert times["stages"] > 0 and times["update"] > 0
    assert times["data"] + times["stages"] + times["update"] <= summary["seconds"]


def test_leaving_the_loop_stops_after_a_checkpoint(training_bundle, tmp_path):
    run = training_bundle.train(task(256, 3), steps=1000, log_every=2,
                                checkpoint_dir=tmp_path / "ckpt", checkpoint_every=1000)
    for metrics in run:
        if metrics["step"] >= 4:
            break
    summary = run.summary
    assert summary["interrupted"] and 4 <= summary["steps"] < 1000
    assert summary["last_checkpoint"].startswith(str(tmp_path / "ckpt"))


def test_training_errors(training_bundle, compiled):
    with pytest.raises(heterps.Error, match=r"not a training bundle"):
        compiled("mnist-mlp").train(task(64, 4), steps=1)
    data = task(64, 4)
    del data["label"]
    with pytest.raises(heterps.Error, match=r"label"):
        list(training_bundle.train(data, steps=1))
    with pytest.raises(TypeError, match=r"Criteo TSV path or a dict"):
        training_bundle.train(42, steps=1)
    # Counts are integers, named when not: int() would take 3.5 as 3.
    with pytest.raises(TypeError, match=r"steps must be an integer, got 3\.5"):
        training_bundle.train(task(64, 4), steps=3.5)
    with pytest.raises(TypeError, match=r"batch must be an integer, got '64'"):
        training_bundle.train(task(64, 4), steps=1, batch="64")
    with pytest.raises(ValueError, match=r"seed=-1 is outside \[0, "):
        training_bundle.train(task(64, 4), steps=1, seed=-1)
    with pytest.raises(ValueError, match=r"threads=1099511627776 is outside"):
        training_bundle.train(task(64, 4), steps=1, threads=2 ** 40)
    # The trainer's field is 32 bits wide: pybind11 would refuse it unnamed.
    with pytest.raises(ValueError, match=r"sparse_staleness=1099511627776 is outside"):
        training_bundle.train(task(64, 4), steps=1, sparse_staleness=2 ** 40)
    assert next(iter(training_bundle.train(task(64, 4), steps=np.int64(1))))
    # One NaN feature would train every parameter it reaches to NaN.
    poisoned = task(64, 4)
    poisoned["image"][5, 0, 3, 7] = np.nan
    # Arrays are named as given, not by the trainer's flag and scratch file.
    with pytest.raises(heterps.Error, match=r"the data array 'image': sample 5 holds NaN \(element 91\)"):
        training_bundle.train(poisoned, steps=1).run()
    poisoned["image"][5, 0, 3, 7] = 0
    poisoned["image"][63, 0, 0, 0] = -np.inf
    with pytest.raises(heterps.Error, match=r"sample 63 holds -inf"):
        training_bundle.train(task(64, 4), eval=poisoned, steps=1).run()


def test_training_errors_name_the_arrays(training_bundle):
    """Errors about arrays name them as given, wherever the trainer names
    the scratch file it reads them from."""
    data = task(64, 4)
    data["label"] = data["label"][:50]
    with pytest.raises(heterps.Error) as caught:
        training_bundle.train(data, steps=1).run()
    assert str(caught.value).endswith(
        "the arrays disagree on the number of samples: the data array 'image' holds 64, "
        "the data array 'label' holds 50")
    data["label"] = task(64, 4)["label"].astype("<U2")
    with pytest.raises(heterps.Error) as caught:
        training_bundle.train(task(64, 4), eval=data, steps=1).run()
    assert str(caught.value).startswith(
        "the eval array 'label' is not a valid .npy file: element type '<U2' is not supported")
    data["label"] = data["label"].astype(object)
    with pytest.raises(ValueError, match=r"data input 'label' holds Python objects \(dtype object\)"):
        training_bundle.train(data, steps=1)
    # Said before the run starts, by the argument's name: a key not a str
    # got pybind11's dump of a 30-argument signature, a big-endian array
    # "not a valid .npy file" at the first step.
    with pytest.raises(TypeError, match=r"data input names must be str, got 0 \(int\)"):
        training_bundle.train({0: task(64, 4)["image"]}, steps=1)
    swapped = task(64, 4)
    swapped["image"] = swapped["image"].astype(">f4")
    with pytest.raises(ValueError, match=r"data input 'image' is big-endian \(dtype >f4\); "
                                         r"give array.astype\('<f4'\)"):
        training_bundle.train(swapped, steps=1)
    # A Criteo file's errors name the argument, not the CLI's flag (the
    # trainer's text, as the file's reader words it).
    from heterps import training
    arrays = {}
    training._files("missing.tsv", "eval", [], arrays)
    assert training._named_arrays("--eval: cannot open 'missing.tsv': No such file or directory",
                                  arrays) == "eval: cannot open 'missing.tsv': No such file or directory"


def test_ctrl_c_stops_training(training_bundle, tmp_path):
    """SIGINT while training: KeyboardInterrupt in the loop, the trainer
    stopped after its current step, with that step checkpointed."""
    import os
    import signal
    import threading

    run = training_bundle.train(task(256, 5), steps=100000, log_every=1,
                                checkpoint_dir=tmp_path / "ckpt", checkpoint_every=100000)
    timer = None
    with pytest.raises(KeyboardInterrupt):
        for metrics in run:
            if timer is None:
                timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
                timer.start()
    timer.join()
    summary = run.summary
    assert summary["interrupted"] and 1 <= summary["steps"] < 100000
    assert summary["last_checkpoint"]


def test_metrics_match_the_cli(training_bundle, tmp_path):
    """The same bundle, data and seed trained by `heterps run --train`
    prints the metrics Bundle.train yields (the same trainer underneath)."""
    import subprocess
    from pathlib import Path

    from heterps.training import parse_progress

    # The build the package came from: BUILD/python/heterps/__init__.py.
    cli_binary = Path(heterps.__file__).resolve().parents[2] / "bin" / "heterps"

    data, evaluation = task(1024, 3), task(256, 4)
    args = []
    for role, arrays in (("data", data), ("eval", evaluation)):
        for name, array in arrays.items():
            path = tmp_path / f"{role}-{name}.npy"
            np.save(path, array)
            args += [f"--{role}-input", f"{name}={path}"]
    cli = subprocess.run(
        [str(cli_binary), "run", str(training_bundle.path), "--train",
         *args, "--steps", "40", "--log-every", "10", "--seed", "5"],
        capture_output=True, text=True, check=True)
    keys = ("kind", "step", "loss", "accuracy")

    def comparable(metrics):
        return [tuple(m.get(k) for k in keys) for m in metrics if m]

    expected = comparable(parse_progress(line) for line in cli.stderr.splitlines())
    ours = comparable(training_bundle.train(data, steps=40, log_every=10, seed=5,
                                            eval=evaluation))
    assert len(expected) == 5 and ours == expected


def test_passes_and_the_rocksdb_tier_train_the_same_parameters(cache_dir, tmp_path):
    """pass_steps trains in passes through the pass cache (pass_memory cuts
    them short), ps_memory_rows / ps_storage_dir keep rows beyond the budget
    in RocksDB: NCF's four embedding tables end bit for bit as on the direct
    path."""
    require_models()
    bundle = heterps.compile(str(SHIPPED["ncf"].file), cluster=str(LOCAL_CPU), train=True,
                             loss="bce", optimizer="adagrad", learning_rate=0.05, batch=64,
                             static_batch=True, strategy="cpu-only", cache_dir=cache_dir)
    rng = np.random.default_rng(5)
    rows = 640
    data = {"user_input_0": rng.integers(0, 3706, (rows, 1)).astype(np.int64),
            "item_input_0": rng.integers(0, 3706, (rows, 1)).astype(np.int64),
            "label": rng.integers(0, 2, (rows, 1)).astype(np.float32)}
    direct = bundle.train(data, steps=12, batch=128, dump_parameters=tmp_path / "direct").run()
    training = bundle.train(data, steps=12, batch=128, dump_parameters=tmp_path / "passes",
                            pass_steps=5, pass_memory="600K", ps_memory_rows=40,
                            ps_storage_dir=tmp_path / "rocksdb")
    passes = training.run()
    assert passes["train_loss"] == direct["train_loss"]
    # The memory bound cut the passes of 5 steps short.
    counts = [re.match(r"passes: \d+, of \d+ to (\d+) steps; distinct rows [0-9.]+% of the keys$",
                       line) for line in training.log if line.startswith("passes: ")]
    assert len(counts) == 1 and counts[0] and int(counts[0].group(1)) < 5, training.log
    files = sorted(p.name for p in (tmp_path / "direct").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "passes").iterdir())
    assert any(name.endswith(".rows.npy") for name in files)
    for name in files:
        a, b = np.load(tmp_path / "direct" / name), np.load(tmp_path / "passes" / name)
        assert a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8)), name
    with pytest.raises(heterps.Error, match=r"--ps-memory-rows needs --ps-storage-dir DIR"):
        bundle.train(data, steps=1, ps_memory_rows=40).run()
    # An id outside its table: named with the step whose ids a pass reads.
    bad = dict(data, item_input_0=data["item_input_0"].copy())
    bad["item_input_0"][300, 0] = 99999
    with pytest.raises(heterps.Error, match=r"step 3: the ids the pass reads ahead: "
                                            r"sparse table '.*' has \d+ rows; id 99999 is outside"):
        bundle.train(bad, steps=4, batch=128, pass_steps=2).run()
    with pytest.raises(TypeError, match=r"pass_memory must be an integer, got 1\.5"):
        bundle.train(data, steps=1, pass_steps=2, pass_memory=1.5).run()
    with pytest.raises(heterps.Error, match=r"--pass-memory '1\.5': give bytes"):
        bundle.train(data, steps=1, pass_steps=2, pass_memory="1.5").run()
    # Sparse updates one step late: deterministic, and unchanged by
    # evaluations (which see them applied and put the rows back after) and
    # by checkpoints (which save them unapplied).
    stale = [bundle.train(data, steps=12, batch=128, sparse_staleness=1,
                          threads=threads).run()["train_loss"] for threads in (1, 2)]
    assert stale[0] == stale[1] != direct["train_loss"]
    # Evaluations see the held-back update but do not change training.
    evaluated = bundle.train(data, steps=12, batch=128, sparse_staleness=1,
                             eval=data, eval_every=1).run()
    assert evaluated["train_loss"] == stale[0]
    every = bundle.train(data, steps=12, batch=128, sparse_staleness=1,
                         checkpoint_dir=tmp_path / "every", checkpoint_every=1).run()
    assert every["train_loss"] == stale[0]
    with pytest.raises(heterps.Error, match=r"pass_cache_device 'tpu': give 'host' or 'gpu'"):
        bundle.train(data, steps=1, pass_steps=2, pass_cache_device="tpu").run()
    # The pass cache in GPU memory: the direct path's bits where a GPU is,
    # one clear error before the first step elsewhere.
    on_gpu = dict(steps=12, batch=128, pass_steps=5, pass_cache_device="gpu",
                  dump_parameters=tmp_path / "gpu")
    if shutil.which("nvidia-smi") and subprocess.call(["nvidia-smi", "-L"]) == 0:
        assert bundle.train(data, **on_gpu).run()["train_loss"] == direct["train_loss"]
    else:
        with pytest.raises(heterps.Error, match=r"pass cache on the GPU: no usable CUDA device"):
            bundle.train(data, **on_gpu).run()
    # Over GPUs sharing the pass's keys: device 0 three times where there
    # is one GPU.
    if shutil.which("nvidia-smi") and subprocess.call(["nvidia-smi", "-L"]) == 0:
        assert bundle.train(data, **on_gpu, pass_cache_gpus=[0, 0, 0]).run()[
            "train_loss"] == direct["train_loss"]
    with pytest.raises(TypeError, match=r"pass_cache_gpus must be a list of integers, got '0,1'"):
        bundle.train(data, steps=1, pass_steps=2, pass_cache_gpus="0,1").run()
    with pytest.raises(ValueError, match=r"pass_cache_gpus=-1 is outside"):
        bundle.train(data, steps=1, pass_steps=2, pass_cache_gpus=[0, -1]).run()
    with pytest.raises(heterps.Error, match=r"pass_cache_gpus: give at least one CUDA device"):
        bundle.train(data, steps=1, pass_steps=2, pass_cache_gpus=[]).run()
    with pytest.raises(heterps.Error, match=r"--pass-cache-gpus needs the pass cache in GPU memory"):
        bundle.train(data, steps=1, pass_steps=2, pass_cache_gpus=[0, 1]).run()


def test_plans_say_their_micro_batches_per_step(cache_dir):
    """A training plan records the micro-batches of a step (chosen, or fixed
    by micro_batches) and what such steps reach; the plan's summary says so
    where a step takes more than one."""
    require_models()
    h100 = Path(LOCAL_CPU).parent / "h100-host.yaml"
    common = dict(cluster=str(h100), throughput=1, strategy="sparse-on-cpu", train=True,
                  loss="bce", optimizer="adagrad", batch=64, static_batch=True,
                  cache_dir=cache_dir)
    chosen = heterps.place(str(SHIPPED["ncf"].file), **common)
    assert chosen["micro_batches"] >= 1
    assert 0 < chosen["step_throughput"] <= chosen["throughput"]
    fixed = heterps.place(str(SHIPPED["ncf"].file), micro_batches=3, **common)
    assert fixed["micro_batches"] == 3, fixed
    assert chosen["step_throughput"] != fixed["step_throughput"]
    assert "3 micro-batches per step, " in fixed._repr_html_()
    inference = heterps.place(str(SHIPPED["ncf"].file), cluster=str(h100), throughput=1,
                              strategy="sparse-on-cpu", batch=64, static_batch=True,
                              cache_dir=cache_dir)
    assert "micro_batches" not in inference


def test_training_follows_the_plans_step_shape(cache_dir, tmp_path):
    """Offered passes (pass_steps at compile time), a plan whose lookups run
    on a GPU takes them, records every shape's price, and training follows
    it unless told otherwise: bit for bit the direct path's losses."""
    require_models()
    h100 = Path(LOCAL_CPU).parent / "h100-host.yaml"
    common = dict(cluster=str(h100), throughput=1, strategy="gpu-only", train=True,
                  loss="bce", optimizer="adagrad", learning_rate=0.05, batch=64,
                  static_batch=True, cache_dir=cache_dir)
    plan = heterps.place(str(SHIPPED["ncf"].file), pass_steps=4, pass_distinct_fraction=0.1,
                         **common)
    assert plan["pass_steps"] == 4 and plan["pass_cache_device"] == "gpu", plan
    assert [(s["pass_steps"], s["sparse_staleness"]) for s in plan["step_shapes"]] == [
        (0, 0), (4, 0)]
    assert "; step: passes of 4 steps in gpu memory</p>" in plan._repr_html_()
    bundle = heterps.compile(str(SHIPPED["ncf"].file), pass_steps=4,
                             pass_distinct_fraction=0.1, **common)
    assert bundle.plan["pass_steps"] == 4
    rng = np.random.default_rng(5)
    rows = 640
    data = {"user_input_0": rng.integers(0, 3706, (rows, 1)).astype(np.int64),
            "item_input_0": rng.integers(0, 3706, (rows, 1)).astype(np.int64),
            "label": rng.integers(0, 2, (rows, 1)).astype(np.float32)}
    run = dict(steps=10, batch=128, gpu_stages_on_cpu=True)
    planned = bundle.train(data, pass_cache_device="host", **run)
    result = planned.run()
    assert any("passes of 4 steps through a pass cache in host memory, as the plan says"
               in line for line in planned.log), planned.log
    assert any(line.startswith("passes: 3, of 2 to 4 steps") for line in planned.log)
    direct = bundle.train(data, pass_steps=0, **run)
    assert direct.run()["train_loss"] == result["train_loss"]
    assert not any("as the plan says" in line for line in direct.log)


def test_training_waits_passively_in_openmp():
    """The OpenMP runtime the native module links reads OMP_WAIT_POLICY as
    it loads; importing heterps sets it first (spinning workers steal the
    cores the parameter server needs), unless the user set it."""
    import os
    import sys

    def spin_counts(extra):
        env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
        env.update(extra, OMP_DISPLAY_ENV="verbose")
        result = subprocess.run([sys.executable, "-c", "import heterps"], env=env,
                                capture_output=True, text=True, check=True)
        return re.findall(r"GOMP_SPINCOUNT = '(\d+)'", result.stdout + result.stderr)

    assert spin_counts({}) == ["0"]
    assert spin_counts({"OMP_WAIT_POLICY": "ACTIVE"}) != ["0"]


def test_training_options_are_typed_and_named(training_bundle):
    """bool("no") is True: flags are True or False, and an unknown option
    is named as Bundle.train's."""
    for options, message in [(dict(shuffle="no"), r"shuffle must be True or False, got 'no'"),
                             (dict(resume=1), r"resume must be True or False"),
                             (dict(dense_parameters_on_gpu="false"), r"dense_parameters_on_gpu must be"),
                             (dict(checkpoint_dir=123), r"checkpoint_dir must be a path"),
                             (dict(checkpoint_every=2.5), r"checkpoint_every must be an integer"),
                             (dict(turbo=1), r"unknown training option 'turbo' \(the options: steps, ")]:
        with pytest.raises(TypeError, match=message):
            training_bundle.train(task(64, 4), steps=1, **options)
    with pytest.raises(heterps.Error, match=r"is a training bundle: train it"):
        training_bundle.run({name: value[:training_bundle.batch]
                             for name, value in task(64, 4).items()})
    # Without the label too: before 2026-12-02 a ValueError asked for it.
    images = {"image": task(64, 4)["image"][:training_bundle.batch]}
    with pytest.raises(heterps.Error, match=r"is a training bundle: train it"):
        training_bundle.run(images)


def test_a_bundle_opened_by_a_relative_path_trains_after_chdir(training_bundle, tmp_path,
                                                               monkeypatch):
    """Bundle keeps its path absolute: before 2026-12-01 one opened by a
    relative path looked for its directory in the new working directory."""
    shutil.copytree(training_bundle.path, tmp_path / "b")
    monkeypatch.chdir(tmp_path)
    bundle = heterps.Bundle("b")
    monkeypatch.chdir("/")
    run = bundle.train(task(128, 4), steps=2, log_every=1)
    assert [m["step"] for m in run if m["kind"] == "train"] == [1, 2]


def test_frozen_weights_stay_constants(cache_dir, tmp_path):
    """frozen= (--freeze) keeps the named initializers out of training: the
    first layer of a pretrained model, say; the rest trains."""
    require_models()
    frozen = heterps.compile(str(SHIPPED["mnist-mlp"].file), cluster=str(LOCAL_CPU), train=True,
                             loss="softmax-ce", optimizer="adam", learning_rate=0.003,
                             batch=32, static_batch=True, cache_dir=cache_dir,
                             frozen=["fc1.weight", "fc1.bias"])
    manifest = json.loads((Path(frozen.path) / "manifest.json").read_text())
    assert sorted(p["name"] for p in manifest["training"]["parameters"]) == [
        "fc2.bias", "fc2.weight"]
    metrics = frozen.train(task(256, 5), steps=8, dump_parameters=tmp_path / "dump").run()
    assert np.isfinite(metrics["train_loss"])
    assert sorted(p.name for p in (tmp_path / "dump").iterdir()) == [
        "fc2.bias.npy", "fc2.weight.npy"]
    with pytest.raises(TypeError, match=r"frozen must be a list of strings"):
        heterps.compile(str(SHIPPED["mnist-mlp"].file), cluster=str(LOCAL_CPU), train=True,
                        loss="softmax-ce", batch=32, static_batch=True, cache_dir=cache_dir,
                        frozen="fc1.weight")
    with pytest.raises(heterps.Error, match=r"frozen weight 'fc3.weight' \(--freeze\) is not a "
                                            r"weight \(initializer\) of the model"):
        heterps.compile(str(SHIPPED["mnist-mlp"].file), cluster=str(LOCAL_CPU), train=True,
                        loss="softmax-ce", batch=32, static_batch=True, cache_dir=cache_dir,
                        frozen=["fc3.weight"])
