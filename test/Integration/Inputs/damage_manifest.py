#!/usr/bin/env python3
"""Copies a bundle and changes its manifest.json, for tests of damaged
bundles: damage_manifest.py SRC DST STATEMENT... runs each Python statement
with the manifest as `m`."""
import json
import shutil
import sys

source, destination, *statements = sys.argv[1:]
shutil.rmtree(destination, ignore_errors=True)
shutil.copytree(source, destination)
path = destination + "/manifest.json"
with open(path) as f:
    m = json.load(f)
for statement in statements:
    exec(statement, {"m": m})
with open(path, "w") as f:
    json.dump(m, f)
