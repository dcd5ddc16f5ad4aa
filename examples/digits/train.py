"""A small CNN on the 8x8 digits data set that ships with scikit-learn (no download).

The demo workload of trainbench: real PyTorch training (on CUDA when a GPU is there, on
the CPU otherwise), with DataLoader worker processes so the run has a process tree. It
logs loss, accuracy, epochs, an evaluation phase and per-step timing (data wait, compute,
samples per second) through the trainbench client, and prints them per epoch.

    trainbench run --python /usr/bin/python3 examples/digits/train.py --epochs 15 --batch-size 64
"""
import argparse
import pathlib
import sys
import time

import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

try:
    import trainbench  # on PYTHONPATH under `trainbench run`
except ImportError:  # run directly from a checkout: every call below is then a no-op
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
    import trainbench


def build_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 4 * 4, 128),
        nn.ReLU(),
        nn.Linear(128, 10),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--device", choices=["auto", "cpu", "cuda"], default="auto", help="auto: the GPU when PyTorch sees one"
    )
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    cuda = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
    device = torch.device("cuda" if cuda else "cpu")
    digits = load_digits()
    x = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(digits.target, dtype=torch.long)
    split = int(len(x) * 0.8)
    train = TensorDataset(x[:split], y[:split])
    test_x, test_y = x[split:].to(device), y[split:].to(device)
    loader = DataLoader(
        train, batch_size=args.batch_size, shuffle=True, num_workers=args.workers, persistent_workers=args.workers > 0
    )

    model = build_model().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    print(f"training on {len(train)} images ({device}), testing on {len(test_x)}", flush=True)
    training_started, cpu_started = time.perf_counter(), time.process_time()
    with trainbench.Run() as run:
        run.log_params({"device": device.type, "train_images": len(train)})
        for epoch in range(1, args.epochs + 1):
            run.epoch()
            model.train()
            started = time.perf_counter()
            total_loss, seen = 0.0, 0
            # Epoch 2 is the NVTX range "profile" that the nsys and ncu listeners capture.
            profiled = cuda and epoch == 2
            if profiled:
                torch.cuda.nvtx.range_push("profile")
            for images, labels in run.steps(loader):
                images, labels = images.to(device), labels.to(device)
                optimizer.zero_grad()
                loss = loss_fn(model(images), labels)
                loss.backward()
                optimizer.step()
                value = loss.item()
                run.log_metric("loss", value)
                total_loss += value * len(labels)
                seen += len(labels)
            if profiled:
                torch.cuda.nvtx.range_pop()
            elapsed = time.perf_counter() - started
            with run.phase("eval"):
                model.eval()
                with torch.no_grad():
                    accuracy = (model(test_x).argmax(1) == test_y).float().mean().item()
            run.log_metrics(
                {"epoch_loss": total_loss / seen, "accuracy": accuracy, "epoch_samples_per_second": seen / elapsed},
                step=epoch,
            )
            print(
                f"epoch {epoch:2d}  loss {total_loss / seen:.4f}  test accuracy {accuracy:.3f}  "
                f"{seen / elapsed:.0f} samples/s",
                flush=True,
            )
    print(
        f"trained {args.epochs} epochs in {time.perf_counter() - training_started:.3f} s "
        f"({time.process_time() - cpu_started:.3f} s CPU in this process)",
        flush=True,
    )


if __name__ == "__main__":
    main()
