# Source: https://github.com/ODD2/DFD-CLIP/blob/61f7da5017d75b8be38993ae57ba2e86473c1dde/src/callbacks/metrics.py
# Report: deepfake-detection trainer/evaluator (accelerate) computes metrics through on_batch_end callbacks; fixed variant of the rmse metric that keeps host copies of each batch's expected score and labels
# Shape: update_metrics(agent) (no_grad) calls metric.add_batch(...) on metric objects stored in agent.calcs; rmse.add_batch now appends .cpu() copies, the HF evaluate metrics convert to host arrays and losses are kept as .item() floats, so no device tensor accumulates
# Expect: near-miss: must be silent
from collections import defaultdict

import evaluate
import torch
import wandb


class rmse:
    def __init__(self):
        self.expects = []
        self.labels = []

    def add_batch(self, pred_labels, pred_probs, labels):
        b, w = pred_probs.shape
        weights = torch.tensor([i for i in range(w)]).float().to(pred_probs.device)
        self.expects.append((pred_probs @ weights).cpu())
        self.labels.append(labels.cpu())

    def compute(self):
        expects = torch.cat(self.expects)
        labels = torch.cat(self.labels)
        self.expects, self.labels = [], []
        return {"rmse": torch.sqrt(torch.sum(torch.pow(expects - labels, 2) / len(expects))).item()}


class accuracy:
    def __init__(self):
        self.calc = evaluate.load("accuracy")

    def add_batch(self, pred_labels, pred_probs, labels):
        self.calc.add_batch(references=labels.to(torch.float32), predictions=pred_labels.to(torch.float32))

    def compute(self):
        return self.calc.compute()


class Evaluator:
    def __init__(self, config, accelerator, dataloaders):
        self.config = config
        self.accelerator = accelerator
        self.callbacks = defaultdict(list)
        self.dataloaders = {name: accelerator.prepare(dl) for name, dl in dataloaders.items()}

    def add_callback(self, onevent, callback, **kwargs):
        self.callbacks[onevent].append(callback)
        for k, v in kwargs.items():
            setattr(self, k, v)

    def trigger_callbacks(self, onevent):
        for callback in self.callbacks.get(onevent, []):
            callback(self)

    @torch.no_grad()
    def run(self, trainer):
        self.trigger_callbacks("on_evaluation_start")
        self.steps = trainer.steps
        self.model = trainer.model.eval()
        for name in self.dataloaders:
            for batch in self.dataloaders[name]:
                task_index = batch[-1][0]
                task_losses, task_logits = self.model(*batch[:3], single_task=task_index)
                self.batch_losses = {name: task_losses[task_index].detach()}
                self.batch_logits = {name: task_logits[task_index].detach()}
                self.batch_labels = {name: batch[1].detach()}
                self.trigger_callbacks("on_batch_end")
        self.trigger_callbacks("on_evaluation_end")


@torch.no_grad()
def init_metrics(agent):
    agent.calcs = {cfg.name: {setup: globals()[setup]() for setup in cfg.types} for cfg in agent.config.metrics}
    agent.losses = {}


@torch.no_grad()
def update_metrics(agent):
    pred_labels = {name: logits.argmax(dim=-1) for name, logits in agent.batch_logits.items()}
    pred_probs = {name: logits.softmax(dim=-1) for name, logits in agent.batch_logits.items()}
    pred_labels, pred_probs, batch_labels, batch_losses = agent.accelerator.gather_for_metrics(
        (pred_labels, pred_probs, agent.batch_labels, agent.batch_losses))
    if not agent.accelerator.is_local_main_process:
        return
    for name, labels in batch_labels.items():
        for metric in agent.calcs[name].values():
            metric.add_batch(pred_labels=pred_labels[name].to(torch.float32), pred_probs=pred_probs[name].to(torch.float32), labels=labels.to(torch.float32))
    for name, loss in batch_losses.items():
        agent.losses.setdefault(name, []).append(loss.mean().item())


@torch.no_grad()
def compute_metrics(agent):
    if agent.steps % agent.training_eval_interval:
        return
    results = {}
    for lname, calcs in agent.calcs.items():
        for mname, metric in calcs.items():
            results[f"metric/{lname}/{mname}"] = metric.compute()[mname]
    for lname, values in agent.losses.items():
        results[f"loss/{lname}"] = sum(values) / len(values)
        values.clear()
    wandb.log({f"{type(agent).__name__}/{k}".lower(): v for k, v in results.items()}, step=agent.steps)


def register_evaluator_callbacks(evaluator):
    evaluator.add_callback("on_batch_end", update_metrics)
    if evaluator.accelerator.is_local_main_process:
        evaluator.add_callback("on_evaluation_start", init_metrics)
        evaluator.add_callback("on_evaluation_end", compute_metrics, training_eval_interval=1)
