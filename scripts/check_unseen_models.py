#!/usr/bin/env python3
"""Exports models this project was not written against to ONNX and checks
each one end to end: `heterps compile` + `heterps run` against onnxruntime,
through scripts/compare_with_ort.py (1e-4 relative). Image models come from
torchvision; text, vision and speech transformers (`hf_` names, from BERT
and GPT-2 to Llama, Whisper's encoder and MobileViT; `--models hf` for all
of scripts/hf_models.py) from Hugging Face transformers in small
configurations (the same export paths at a fraction of the size); timm
classifiers as `timm_<name>` (at 64x64 where they take an image size): all
from PyPI, with random weights, nothing downloaded.

Weights: torchvision's own initialisation leaves some outputs trivially
zero (ViT's head starts at zero, ConvNeXt's layer scales at 1e-6, batch
norms at identity statistics), which would make a comparison vacuous. So
every parameter and buffer that holds a single repeated value is redrawn
from a seeded generator: matrices and filters ~ N(0, 1/fan_in), scales in
[0.5, 1.5), shifts in [-0.1, 0.1), running variances in [0.5, 1.5).

Each model is exported at --opset (default 17) with a symbolic batch (and
with --sequence N, text models also with symbolic `sequence` and
`decoder_sequence` dims, bound at compile time by `--dim` to N and N / 2:
the masks and positions such exports compute from the input's shape must
then fold), by
torch's TorchScript exporter or, with --exporter dynamo, by its torch.export
one (the default from torch 2.9, which writes opset 18 and newer forms:
Reduce* axes inputs, Split num_outputs, Col2Im, ...), and compiled at every
--batches value. Prints one line per (model, batch) and, with --out, a
markdown table. Exits non-zero if any case fails.

Usage: check_unseen_models.py --heterps BIN --cluster FILE
         [--models a,b,...] [--batches 1,4] [--opset 17]
         [--exporter torchscript|dynamo] [--sequence N] [--out FILE.md]
         [--keep DIR]
"""
import argparse
import datetime
import math
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings

import hf_models

# Whole torchvision classifiers, small configurations of the
# transformer families (the same code paths at a fraction of the size),
# and segmentation models.
DEFAULT_MODELS = [
    "squeezenet1_1", "shufflenet_v2_x0_5", "mobilenet_v2", "mobilenet_v3_small",
    "mnasnet0_5", "efficientnet_b0", "regnet_x_400mf", "resnet18",
    "googlenet", "densenet121", "alexnet", "convnext_tiny",
    "tiny_vit", "tiny_swin", "vit_b_16", "swin_t",
    "lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large",
    # Hugging Face transformers (scripts/hf_models.py has the whole list).
    "hf_bert", "hf_gpt2", "hf_t5", "hf_llama", "hf_vit", "hf_wav2vec2",
    "hf_whisper_encoder",
]
# Segmentation models: their heads upsample bilinearly (Resize, linear).
SEGMENTATION = {"lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large",
                "deeplabv3_resnet50", "fcn_resnet50"}


def build(name):
    """(module, example inputs of batch 1, input names)."""
    import torch
    if name.startswith("hf_"):
        return hf_models.build(name)
    if name.startswith("timm_"):
        model, size = build_timm_model(name[len("timm_"):])
        return model, (torch.randn(1, 3, size, size),), ["input"]
    model, size = build_image_model(name)
    return model, (torch.randn(1, 3, size, size),), ["input"]


# timm models at a small input where they take one (`img_size`), else at
# the size their architecture needs.
TIMM_SIZES = {"inception_v3": 75, "crossvit_tiny_240": 240,
              "efficientformer_l1": 224}


def build_timm_model(name):
    """A timm classifier (random weights, 10 classes) and its input size:
    `timm_<name>` on the command line."""
    import timm
    import timm.layers
    # timm's fused attention traces is_causal as a tensor, which the
    # TorchScript exporter rejects; the unfused path is the same math.
    timm.layers.set_fused_attn(False)
    size = TIMM_SIZES.get(name, 56 if "patch14" in name else 64)
    try:
        model = timm.create_model(name, pretrained=False, num_classes=10,
                                  img_size=size)
    except TypeError:  # no img_size: a convolutional net
        model = timm.create_model(name, pretrained=False, num_classes=10)
    return model, size


def build_image_model(name):
    import torchvision
    from torchvision.models import swin_transformer, vision_transformer
    if name == "tiny_vit":
        return vision_transformer.VisionTransformer(
            image_size=32, patch_size=8, num_layers=2, num_heads=2,
            hidden_dim=32, mlp_dim=64, num_classes=10), 32
    if name == "tiny_swin":
        return swin_transformer.SwinTransformer(
            patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 2],
            window_size=[4, 4], num_classes=10), 32
    if name in SEGMENTATION:
        import torch
        from torchvision.models import segmentation

        class MainOutput(torch.nn.Module):
            """The "out" entry of the model's dict of outputs."""

            def __init__(self, net):
                super().__init__()
                self.net = net

            def forward(self, x):
                return self.net(x)["out"]

        kwargs = dict(weights=None, weights_backbone=None, num_classes=21)
        if name != "lraspp_mobilenet_v3_large":
            kwargs["aux_loss"] = False
        return MainOutput(getattr(segmentation, name)(**kwargs)), 224
    if name == "googlenet":  # no auxiliary heads at inference
        return torchvision.models.googlenet(weights=None, aux_logits=False,
                                            init_weights=True), 224
    return getattr(torchvision.models, name)(weights=None), 224


def redraw_constant_tensors(model, seed):
    import torch
    gen = torch.Generator().manual_seed(seed)
    tensors = list(model.named_parameters()) + list(model.named_buffers())
    with torch.no_grad():
        for name, t in tensors:
            if not t.is_floating_point() or t.numel() == 0:
                continue
            flat = t.reshape(-1)
            if not bool(torch.all(flat == flat[0])):
                continue
            if name.endswith("running_var"):
                t.copy_(torch.rand(t.shape, generator=gen) + 0.5)
            elif name.endswith("running_mean") or name.endswith("bias"):
                t.copy_((torch.rand(t.shape, generator=gen) - 0.5) * 0.2)
            elif t.dim() >= 2 and t.shape[0] > 1 and name.endswith("weight"):
                fan_in = max(1, t.numel() // t.shape[0])
                t.copy_(torch.randn(t.shape, generator=gen) / math.sqrt(fan_in))
            else:  # scales: norm weights, layer scales, class tokens
                t.copy_(torch.rand(t.shape, generator=gen) + 0.5)


def sequence_dims(name, input_names, sequence):
    """{input: {axis: dim name}} of a text model's symbolic sequence axes,
    and the --dim bindings for them; nothing for other models or without
    --sequence."""
    if not sequence or not name.startswith("hf_") or \
            hf_models.input_kind(name) not in ("text", "seq2seq"):
        return {}, []
    axes = {"input": {1: "sequence"}, "decoder_input": {1: "decoder_sequence"}}
    lengths = {"sequence": sequence, "decoder_sequence": max(1, sequence // 2)}
    dims = {n: axes[n] for n in input_names}
    bound = sorted({d for a in dims.values() for d in a.values()})
    return dims, [f"{d}={lengths[d]}" for d in bound]


def export(name, path, seed, opset=17, exporter="torchscript", sequence=0):
    import torch
    # torchvision's own initialisation draws from the global generator:
    # seed it too, so that a run's weights (and the table) repeat.
    torch.manual_seed(seed)
    model, inputs, input_names = build(name)
    model.eval()
    redraw_constant_tensors(model, seed)
    batched = {name: {0: "N"} for name in input_names + ["output"]}
    dims, bindings = sequence_dims(name, input_names, sequence)
    for input_name, axes in dims.items():
        batched[input_name].update(axes)
    if dims:
        batched["output"][1] = "output_sequence"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, inputs, path, opset_version=opset,
                          dynamo=exporter == "dynamo",
                          input_names=input_names, output_names=["output"],
                          dynamic_axes=batched)
    return bindings


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--heterps", required=True)
    p.add_argument("--cluster", required=True)
    p.add_argument("--models", default=",".join(DEFAULT_MODELS))
    p.add_argument("--batches", default="1,4")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--exporter", choices=["torchscript", "dynamo"],
                   default="torchscript")
    p.add_argument("--sequence", type=int, default=0,
                   help="export text models with symbolic sequence dims and "
                        "bind them to this length at compile time")
    p.add_argument("--out", help="write the results as a markdown table")
    p.add_argument("--keep", help="keep the exported .onnx files here")
    args = p.parse_args()
    models = args.models.split(",")
    if "hf" in models:  # every Hugging Face model in place of "hf"
        at = models.index("hf")
        models[at:at + 1] = hf_models.names()

    compare = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "compare_with_ort.py")
    rows, failures = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.keep or tmp
        os.makedirs(workdir, exist_ok=True)
        for name in models:
            path = os.path.join(workdir, name + ".onnx")
            try:
                bindings = export(name, path, args.seed, args.opset,
                                  args.exporter, args.sequence)
            except Exception as e:  # an exporter failure is not ours
                print(f"{name}: SKIP export failed: {type(e).__name__}: {e}")
                rows.append((name, "-", "export failed", "", "", ""))
                continue
            for batch in [int(b) for b in args.batches.split(",")]:
                start = time.time()
                r = subprocess.run(
                    [sys.executable, compare, path, "--heterps", args.heterps,
                     "--cluster", args.cluster, "--strategy", "cpu-only",
                     "--throughput", "1", "--batch", str(batch),
                     "--seed", str(args.seed), "--max-id", str(hf_models.VOCABULARY),
                     *[f"--dim={b}" for b in bindings]],
                    capture_output=True, text=True)
                seconds = time.time() - start
                out = (r.stdout + r.stderr).strip()
                m = re.search(r"max error (\S+) \(max \|reference\| (\S+)\)", out)
                ok = r.returncode == 0
                failures += not ok
                first_error = next((l for l in out.splitlines()
                                    if "FAIL" in l or "error" in l), "")
                status = "ok" if ok else "FAIL " + first_error[:300]
                print(f"{name} batch {batch}: {status}"
                      + (f" max error {m.group(1)} max |ref| {m.group(2)}" if m else "")
                      + f" ({seconds:.0f} s)", flush=True)
                rows.append((name, str(batch), "ok" if ok else "FAIL",
                             m.group(1) if m else "", m.group(2) if m else "",
                             f"{seconds:.0f}"))
    if args.out:
        import torch
        import torchvision
        import onnxruntime
        try:
            import transformers
            hf_version = f"transformers {transformers.__version__}, "
        except ImportError:
            hf_version = ""
        with open(args.out, "w") as f:
            f.write(f"Produced by `python3 scripts/check_unseen_models.py "
                    f"--heterps {args.heterps} --cluster {args.cluster} "
                    f"--models {args.models} "
                    f"--batches {args.batches} --opset {args.opset} "
                    f"--exporter {args.exporter} "
                    + (f"--sequence {args.sequence} " if args.sequence else "")
                    + f"--out {args.out}` on "
                    f"{datetime.date.today()}: torch {torch.__version__}, "
                    f"torchvision {torchvision.__version__}, {hf_version}onnxruntime "
                    f"{onnxruntime.__version__}, opset {args.opset}, "
                    f"{args.exporter} exporter.\n\n")
            f.write("| model | batch | result | max error | largest reference value | seconds |\n")
            f.write("|---|---|---|---|---|---|\n")
            for row in rows:
                f.write("| " + " | ".join(row) + " |\n")
    print(f"failed: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
