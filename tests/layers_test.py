#!/usr/bin/env python3
"""Lower layers never include upper ones. The layers, from the bottom:

  include/schmp/ (the user contract; internal/ is the engine's side of Job::run)
  io/            readers and output files
  kernels/       the workers' kernels (kernels/include/schmp/kernels/ is public)
  runtime/       MPI transport, process layout, signals, flags, the trace
  engine/        scheduler, coordinator loop, workers, launch
  apps/ tools/ bench/ examples/ (programs, on top)

A file may include files of its own layer or below. usage: layers_test.py SOURCE_DIR
"""
import os
import re
import sys

LAYERS = ["include", "io", "kernels", "runtime", "engine", "apps"]
TOP = {"tools": "apps", "bench": "apps", "examples": "apps"}
INCLUDE = re.compile(r'^#include\s+["<]([^">]+)[">]', re.M)


def layer_of(path):
    top = path.split(os.sep, 1)[0]
    top = TOP.get(top, top)
    return LAYERS.index(top) if top in LAYERS else None


def resolve(root, source, header):
    """The project file `header` names from `source`, relative to the root, or None (a system header)."""
    for base in (os.path.dirname(source), "", "include", os.path.join("kernels", "include")):
        candidate = os.path.normpath(os.path.join(base, header))
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def main():
    root = sys.argv[1]
    failures = []
    checked = 0
    for folder in set(LAYERS) | set(TOP):
        for directory, _, files in os.walk(os.path.join(root, folder)):
            for name in files:
                if not name.endswith((".hpp", ".cpp", ".cu", ".h")):
                    continue
                source = os.path.relpath(os.path.join(directory, name), root)
                checked += 1
                mine = layer_of(source)
                with open(os.path.join(root, source), encoding="utf-8") as text:
                    for header in INCLUDE.findall(text.read()):
                        target = resolve(root, source, header)
                        if target is None:
                            continue
                        theirs = layer_of(target)
                        # The public kernels headers belong to the kernels layer, not the contract's.
                        if target.startswith(os.path.join("kernels", "include")):
                            theirs = LAYERS.index("kernels")
                        if theirs is not None and mine is not None and theirs > mine:
                            failures.append(f"{source}: includes {target}, a layer above it")
    if checked < 100:
        print(f"layers: only {checked} source files under {root}: not the project's root?")
        return 1
    for failure in failures:
        print(failure)
    if failures:
        return 1
    print("layers: no file includes a layer above its own")
    return 0


if __name__ == "__main__":
    sys.exit(main())
