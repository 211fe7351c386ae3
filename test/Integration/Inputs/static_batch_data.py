#!/usr/bin/env python3
"""Training data the shipped batch-1 models can learn, as .npy arrays.

  static_batch_data.py mnist DIR --rows N --seed S
      DIR/image.npy: f32 [N, 1, 28, 28], standard normal pixels;
      DIR/label.npy: i64 [N], the class a hidden random linear teacher
      scores highest on the 2x2 max-pooled image, which is what the MNIST
      MLP sees (MaxPool 2x2, then a 196-128-10 MLP).
  static_batch_data.py ncf DIR --rows N --seed S
      DIR/user.npy, DIR/item.npy: i64 [N, 1] ids (300 users, 200 items of
      MovieLens-1M's 6040 and 3706); DIR/label.npy: f32 [N, 1], whether
      hidden 4-dim user and item factors agree (a dot product > 0).

The teachers have fixed seeds, so a train and an eval set share them.
Prints the largest class's share (chance).
"""
import argparse
import os

import numpy as np


def mnist(n, rng):
    image = rng.normal(size=(n, 1, 28, 28)).astype(np.float32)
    pooled = image.reshape(n, 14, 2, 14, 2).max(axis=(2, 4)).reshape(n, 196)
    teacher = np.random.default_rng(7).normal(size=(196, 10))
    # Centred by the expected maximum of 4 normals so no class dominates.
    label = ((pooled - 1.0294) @ teacher).argmax(axis=1).astype(np.int64)
    return {"image": image, "label": label}, np.bincount(label).max() / n


def ncf(n, rng):
    users = np.random.default_rng(7).normal(size=(6040, 4))
    items = np.random.default_rng(8).normal(size=(3706, 4))
    user = rng.integers(0, 300, (n, 1)).astype(np.int64)
    item = rng.integers(0, 200, (n, 1)).astype(np.int64)
    agree = (users[user[:, 0]] * items[item[:, 0]]).sum(axis=1) > 0
    label = agree.astype(np.float32).reshape(n, 1)
    return {"user": user, "item": item, "label": label}, max(
        agree.mean(), 1 - agree.mean())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["mnist", "ncf"])
    parser.add_argument("directory")
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    args = parser.parse_args()
    make = mnist if args.kind == "mnist" else ncf
    arrays, chance = make(args.rows, np.random.default_rng(args.seed))
    os.makedirs(args.directory, exist_ok=True)
    for name, array in arrays.items():
        np.save(os.path.join(args.directory, name + ".npy"), array)
    print("rows %d, largest class %.3f" % (args.rows, chance))


if __name__ == "__main__":
    main()
