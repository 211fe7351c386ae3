# -*- Python -*-
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "HETERPS"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtext", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.heterps_obj_root, "test")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Real models live beside the project (../shared/models), never copied in.
models = os.path.normpath(os.path.join(config.heterps_src_root, "..", "shared", "models"))
config.substitutions.append(("%models", models))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%heterps_bin", config.heterps_tools_dir))
config.substitutions.append(("%project", config.heterps_src_root))
# The precompiled StageSupport.h of the C++ stage builds (GNU compilers).
stage_pch = os.path.join(config.heterps_obj_root, "lib", "stage-pch")
config.substitutions.append(("%stage_pch", stage_pch))
config.substitutions.append(("%stage_cxx_flags", config.stage_cxx_flags))
if os.path.exists(os.path.join(stage_pch, "heterps", "Runtime", "StageSupport.h.gch")):
    config.available_features.add("stage-pch")
if os.path.isdir("/usr/share/libonnx-testdata/data/node"):
    config.available_features.add("onnx-testdata")
if os.path.isdir(models):
    config.available_features.add("shared-models")
traces = os.path.normpath(os.path.join(config.heterps_src_root, "..", "shared", "traces"))
config.substitutions.append(("%traces", traces))
if os.path.isdir(os.path.join(traces, "pollux-osdi21")):
    config.available_features.add("shared-traces")

def python_has(module):
    return subprocess.call([config.python_executable, "-c", "import " + module],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0

# Tests that build binary models need the onnx Python package.
if python_has("onnx") and python_has("numpy"):
    config.available_features.add("onnx-python")
# End-to-end checks compare with onnxruntime (PyPI).
if python_has("onnxruntime"):
    config.available_features.add("onnxruntime")
# Unseen-model checks export torchvision models (PyPI; not a build
# dependency).
if python_has("torchvision"):
    config.available_features.add("torchvision")
# torch.onnx's default (dynamo) exporter needs onnxscript (PyPI).
if python_has("torch") and python_has("onnxscript"):
    config.available_features.add("torch-dynamo-export")
# ... and small Hugging Face transformers (PyPI; not a build dependency).
if python_has("transformers") and python_has("torch"):
    config.available_features.add("transformers")
# GPU stage programs compile where nvcc is; they run where a GPU is.
if os.path.exists("/usr/local/cuda/bin/nvcc") or shutil.which("nvcc"):
    config.available_features.add("nvcc")
if shutil.which("nvidia-smi") and subprocess.call(
        ["nvidia-smi", "-L"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
    config.available_features.add("cuda-gpu")

# Multi-process training tests start jobs with Open MPI's mpirun, and need a
# heterps built with the MPI runtime (heterps_rt_mpi, built where MPI is).
if shutil.which("mpirun") and os.path.exists(
        os.path.join(config.heterps_obj_root, "runtime", "libheterps_rt_mpi.a")):
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun_args", "--mpirun-arg=--oversubscribe --mpirun-arg=--allow-run-as-root"))

# Slurm tests submit to the local one-machine cluster that
# scripts/slurm/cluster.sh starts (scripts/test.sh does, before the tests).
slurm_conf = os.environ.get("SLURM_CONF", "/tmp/heterps-slurm/slurm.conf")
slurm_why = None
if "mpi" not in config.available_features:
    slurm_why = "the Slurm tests run MPI jobs, and there is no MPI"
elif not shutil.which("scontrol"):
    slurm_why = "no scontrol on PATH (slurm-client is not installed)"
elif not os.path.exists(slurm_conf):
    slurm_why = "no " + slurm_conf + " (start the cluster: scripts/slurm/cluster.sh start)"
elif subprocess.call(["scontrol", "ping"], env=dict(os.environ, SLURM_CONF=slurm_conf),
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) != 0:
    slurm_why = "the Slurm controller of " + slurm_conf + " does not answer"
# Its tests run one at a time (test/Integration/Slurm/lit.local.cfg).
lit_config.parallelism_groups["slurm"] = 1
# A test whose feature is missing is reported unsupported; say why once.
for feature, why in [
        ("shared-traces", "no " + os.path.join(traces, "pollux-osdi21")),
        ("mpi", "no mpirun on PATH, or heterps built without the MPI runtime"),
        ("onnx-python", "the onnx or numpy Python package is missing "
                        "(scripts/setup.sh installs them)")]:
    if feature not in config.available_features:
        lit_config.note("tests that need '" + feature + "' unsupported: " + why)
if slurm_why:
    lit_config.note("Slurm tests unsupported: " + slurm_why)
else:
    config.available_features.add("slurm")
    config.environment["SLURM_CONF"] = slurm_conf

tools = [
    ToolSubst("heterps", unresolved="fatal"),
    ToolSubst("heterps-opt", unresolved="fatal"),
    ToolSubst("heterps-profile", unresolved="fatal"),
    ToolSubst("heterps-translate", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, [config.heterps_tools_dir, config.llvm_tools_dir])
