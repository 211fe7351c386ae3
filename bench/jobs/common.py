"""What the job benchmarks share: the CTR job they run (model, data, job file)."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(os.path.dirname(HERE))
MPIRUN_ARGS = ["--oversubscribe", "--allow-run-as-root"]
# On the local Slurm cluster: TCP between the fake nodes, ranks that yield
# the oversubscribed cores.
SLURM_MPIRUN_ARGS = MPIRUN_ARGS + ["--mca", "btl", '"self,tcp"', "--mca",
                                   "mpi_yield_when_idle", '"1"']
WORKERS, SHARDS, BATCH = 2, 2, 128


def sh(cmd, env=None, check=True):
    result = subprocess.run(cmd, capture_output=True, text=True,
                            env=dict(os.environ, **(env or {})))
    if check and result.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{result.stdout}{result.stderr}")
    return result


def prepare(heterps, work):
    sh([sys.executable, os.path.join(PROJECT, "bench", "generate_ctr_model.py"),
        "--layout", "criteo", "--hidden", "32", "--buckets", "1000", "--batch", "64",
        "-o", os.path.join(work, "m.onnx")])
    sh([heterps, "compile", os.path.join(work, "m.onnx"), "--cluster",
        os.path.join(PROJECT, "clusters", "local-cpu.yaml"), "--throughput", "1",
        "--strategy", "cpu-only", "--train", "--loss", "bce", "--batch", "64",
        "-o", os.path.join(work, "b")])
    sh([heterps, "datagen", "ctr", "--rows", "20000", "--seed", "1", "-o",
        os.path.join(work, "d.tsv")])


def job_file(work, steps, checkpoint_every, max_restarts, workers=None, batch=None,
             name="job", backend="mpirun"):
    """A job file; `workers` and `batch` are (initial, min, max) ranges;
    `backend` mpirun or slurm."""
    workers = workers or (WORKERS, WORKERS, WORKERS)
    batch = batch or (BATCH, BATCH, BATCH)
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as out:
        out.write(f"""name: bench
bundle: {work}/b
data: {work}/d.tsv
steps: {steps}
train_args: [--hash-buckets, "1000", --log-every, "10"]
workers: {{initial: {workers[0]}, min: {workers[1]}, max: {workers[2]}}}
ps_shards: {{initial: {SHARDS}}}
batch: {{initial: {batch[0]}, min: {batch[1]}, max: {batch[2]}}}
checkpoint: {{every: {checkpoint_every}, keep: 3}}
restart: {{max_restarts: {max_restarts}, backoff: 1s, heartbeat_timeout: 60s}}
backend: {{kind: {backend}, mpirun_args: [{", ".join(SLURM_MPIRUN_ARGS if backend == "slurm" else MPIRUN_ARGS)}]}}
""")
    return path
