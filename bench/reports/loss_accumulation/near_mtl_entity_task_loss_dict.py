# Source: https://github.com/geraltofrivia/multitask-entitylevel-nlp/blob/064f2541143e1ac5ef24536912b58b2374ff8671/src/loops.py
# Report: multi-task entity-level NLP loop (coref / NER / pruner heads); each task's loss is read from the model's output dict and kept per task for the epoch log as a float
# Shape: per_epoch_loss (bound per epoch, outside the batch loop) is a dict of lists; the value appended is loss.item(), and compute_metrics reduces with .detach().item() inside the helper
# Expect: near-miss: must be silent
import numpy as np
import torch


def compute_metrics(metrics, logits, labels):
    return {name: fn(logits=logits, labels=labels).cpu().detach().item() for name, fn in metrics.items()}


def aggregate_metrics(inter_epoch, intra_epoch):
    for task in inter_epoch:
        for name, values in intra_epoch[task].items():
            inter_epoch[task][name].append(np.mean(values))
    return inter_epoch


def move_to(instance, device):
    for key, value in instance.items():
        if isinstance(value, torch.Tensor):
            instance[key] = value.to(device)
        elif isinstance(value, dict):
            instance[key] = move_to(value, device)
    return instance


def weighted_sum(losses, tasks, scales):
    stacked = torch.hstack([losses[t] for t in sorted(tasks)])
    return torch.sum(stacked * scales)


def training_loop(epochs, tasks, opt, model, device, make_train, make_dev, eval_fns, loss_scales):
    train_loss = {t: [] for t in tasks}
    train_metrics = {t: {m: [] for m in eval_fns[t]} for t in tasks}
    valid_metrics = {t: {m: [] for m in eval_fns[t]} for t in tasks}

    for epoch in range(epochs):
        trn_ds, dev_ds = make_train(), make_dev()
        per_epoch_loss = {t: [] for t in tasks}
        per_epoch_tr = {t: {m: [] for m in eval_fns[t]} for t in tasks}
        per_epoch_vl = {t: {m: [] for m in eval_fns[t]} for t in tasks}

        for i, instance in enumerate(trn_ds):
            opt.zero_grad()
            instance = move_to(instance, device)
            outputs = model(**instance)

            for task in instance["tasks"]:
                task_loss = outputs["loss"][task]
                per_epoch_loss[task].append(task_loss.item())
                key = "logits" if task != "pruner" else "logits_after_pruning"
                scores = compute_metrics(eval_fns[task], outputs[task][key], outputs[task]["labels"])
                for name, value in scores.items():
                    per_epoch_tr[task][name].append(value)

            loss = weighted_sum(outputs["loss"], tasks, loss_scales)
            loss.backward()
            opt.step()
            del loss, outputs
            trn_ds[i] = move_to(instance, "cpu")

        with torch.no_grad():
            for instance in dev_ds:
                instance = move_to(instance, device)
                outputs = model(**instance)
                for task in instance["tasks"]:
                    key = "logits" if task != "pruner" else "logits_after_pruning"
                    scores = compute_metrics(eval_fns[task], outputs[task][key], outputs[task]["labels"])
                    for name, value in scores.items():
                        per_epoch_vl[task][name].append(value)

        for task in tasks:
            train_loss[task].append(float(np.mean(per_epoch_loss[task])))
        train_metrics = aggregate_metrics(train_metrics, per_epoch_tr)
        valid_metrics = aggregate_metrics(valid_metrics, per_epoch_vl)
        print(f"epoch {epoch}: " + " | ".join(f"{t} loss {train_loss[t][-1]:.4f}" for t in tasks))

    return train_metrics, valid_metrics, train_loss
