"""For each bundle directory: per stage source, whether its run has forward
statements, backward (guarded) ones or both, and whether every push is
guarded by `if (!evaluating)`."""
import json
import os
import re
import sys

for bundle in sys.argv[1:]:
    manifest = json.load(open(os.path.join(bundle, "manifest.json")))
    for stage in manifest["stages"]:
        name = stage["name"]
        source = [f for f in os.listdir(bundle)
                  if re.fullmatch(re.escape(name) + r"\.(cpp|cu)", f)][0]
        lines = open(os.path.join(bundle, source)).read().splitlines()
        # Kernel runs, fused loops and server calls of the run (and its
        # runSteps parts), with whether a guard encloses them.
        statements = []
        guard = False  # inside `    if (!evaluating) {` ... `    }`
        for line in lines:
            if line == "    if (!evaluating) {":
                guard = True
            elif guard and line == "    }":
                guard = False
            elif re.search(r"->run(Gradient)?\(|forEachElement\(|stagePush|"
                           r"stagePull", line):
                statements.append((line, guard))
        guarded = sum(1 for _, g in statements if g)
        pushes = [g for line, g in statements if "stagePush" in line]
        kind = ("backward" if guarded == len(statements) else
                "forward" if guarded == 0 else "forward and backward")
        label = os.path.basename(bundle.rstrip("/"))
        if guarded == 0:
            print(f"{label} {name}: {kind}, no guard"
                  + (", UNGUARDED PUSH" if pushes else ""))
        else:
            print(f"{label} {name}: {kind}, {guarded} guarded statements, "
                  f"{len(pushes)} pushes, "
                  + ("all guarded" if all(pushes) else "SOME UNGUARDED"))
