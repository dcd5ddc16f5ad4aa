"""A learning-rate sweep whose runs each log 300 metrics a step (loss, accuracy, and a gradient
and weight norm for each of 149 layers), for the figures of a many-metric store:

    for lr in 0.001 0.002 0.005 0.01 0.02 0.05; do
      trainbench run --store sweep.db -q -e sweep -w lr -n "lr $lr" -l top -- python3 examples/sweep/sweep.py $lr
    done
    trainbench plot --store sweep.db "lr 0.001" "lr 0.002" "lr 0.005" "lr 0.01" "lr 0.02" "lr 0.05" \
      -m train.loss -o sweep-loss.png
"""
import math
import random
import sys

import trainbench

lr = float(sys.argv[1])
random.seed(int(lr * 1e5))
with trainbench.Run() as run:
    run.log_param("lr", lr)
    run.log_param("batch-size", 64)
    loss = 2.3
    for step in range(300):
        loss = loss * (1 - lr * 2) + 0.002 * random.random()
        metrics = {"loss": loss, "accuracy": 1 - loss / 2.5}
        for layer in range(149):
            metrics[f"grad_norm/layer{layer:03d}"] = math.exp(-step * lr) * (1 + layer / 50) + 0.01 * random.random()
            metrics[f"weight_norm/layer{layer:03d}"] = 1 + step * lr * 0.1 + layer * 0.01
        run.log_metrics(metrics, step=step)
