# Source: https://github.com/cameron-git/ml_utils/blob/fc77b006122323d0813c3fa7226ad5258af2bd24/ml_utils/train/train_step.py
# Report: audit: train_step(model, batch, optimizer, accelerator) clears gradients with optimizer.zero_grad() before the forward; this is the variant that line avoided, the helper backprops and steps with no reset anywhere
# Shape: train() calls the per-batch helper, which runs accelerator.backward(outputs["loss"]), clips and calls optimizer.step() but never zeroes, so every update uses the running sum of all earlier batches' gradients
# Expect: TML002 line 15
import torch
from accelerate import Accelerator


def train_step(model, batch, optimizer, accelerator, lr_scheduler=None, max_grad_norm=None):
    outputs = model(**batch)
    accelerator.backward(outputs["loss"])
    grad_norm = None
    if max_grad_norm is not None:
        grad_norm = accelerator.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()  # expect: TML002
    if lr_scheduler is not None:
        lr_scheduler.step()
    outputs["grad_norm"] = grad_norm
    return outputs


def log_metrics(metrics, step, split, interval, accelerator):
    averaged = {f"{split}_{k}": v / interval for k, v in metrics.items()}
    accelerator.log(averaged, step=step)
    return {k: 0.0 for k in metrics}


def test(model, loader, accelerator, metric_names, step, max_steps=None):
    model.eval()
    metrics = {k: 0.0 for k in metric_names}
    n = 0
    with torch.no_grad():
        for n, batch in enumerate(loader, start=1):
            outputs = model(**batch)
            for k in metrics:
                metrics[k] += outputs[k].item()
            if max_steps is not None and n >= max_steps:
                break
    log_metrics(metrics, step, "val", max(n, 1), accelerator)
    model.train()


def train(model, optimizer, train_loader, val_loader, metric_names, train_steps,
          log_interval=50, val_interval=500, lr_scheduler=None, max_grad_norm=1.0):
    accelerator = Accelerator(log_with="tensorboard", project_dir="runs")
    model, optimizer, train_loader, val_loader = accelerator.prepare(
        model, optimizer, train_loader, val_loader
    )
    train_metrics = {k: 0.0 for k in metric_names}
    model.train()
    step = 0
    while step < train_steps:
        for batch in train_loader:
            outputs = train_step(model, batch, optimizer, accelerator,
                                 lr_scheduler=lr_scheduler, max_grad_norm=max_grad_norm)
            for k in train_metrics:
                train_metrics[k] += outputs[k].item()
            if step % log_interval == 0:
                train_metrics = log_metrics(train_metrics, step, "train",
                                            log_interval if step else 1, accelerator)
                if outputs["grad_norm"] is not None:
                    accelerator.log({"grad_norm": outputs["grad_norm"].item()}, step=step)
            if step % val_interval == 0:
                test(model, val_loader, accelerator, metric_names, step, max_steps=100)
            step += 1
            if step >= train_steps:
                break
    accelerator.end_training()
