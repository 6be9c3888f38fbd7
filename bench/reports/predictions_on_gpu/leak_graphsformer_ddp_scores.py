# Source: https://github.com/happay-ending/graphsformerCPI/blob/d3e6483afd6783d29effa9ec21b77c98e6fc7551/multi_train_utils/train_eval_utils.py
# Report: (one edit away from the repository's correct code) GraphsformerCPI's DDP compound-protein trainer all-reduces loss.data for logging and collects every batch's labels, predictions and class-1 scores for epoch-level AUC/F1 on each rank
# Shape: the class-1 scores are kept as score.to('cpu') tensors until the epoch ends; a .cpu()/.to('cpu') copy keeps requires_grad and a grad_fn chain into that step's graph, so every batch's autograd graph objects stay referenced for the whole epoch (growth per step) and the scores need .detach() before being kept
# Expect: TML001 line 58
import sys

import torch
import torch.distributed as dist
from sklearn.metrics import accuracy_score, f1_score, roc_auc_score
from tqdm import tqdm


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def reduce_value(value, average=True):
    world_size = dist.get_world_size() if dist.is_initialized() else 1
    if world_size < 2:
        return value
    with torch.no_grad():
        dist.all_reduce(value)
        if average:
            value /= world_size
    return value


def classified_scores(y_true, y_score, y_pred):
    return {'auc': roc_auc_score(y_true, y_score), 'acc': accuracy_score(y_true, y_pred),
            'f1': f1_score(y_true, y_pred)}


def to_inputs(features, device):
    return [torch.tensor(f, dtype=torch.float32, device=device) for f in features[:6]]


def classified_train_one_epoch(model, optimizer, data_loader, criterion, device, epoch):
    model.train()
    train_y_true, train_y_pred, train_y_score = [], [], []
    mean_loss = 0.0
    optimizer.zero_grad()
    if is_main_process():
        data_loader = tqdm(data_loader, file=sys.stdout)

    for step, (features, labels) in enumerate(data_loader):
        labels = labels.to(device)
        logits, cpd_attn, prt_attn, cross_attn = model(*to_inputs(features, device))
        loss = criterion(logits, labels)
        loss.backward()

        reduced_loss = reduce_value(loss.data, average=True)
        mean_loss += reduced_loss.item()

        pred = logits.argmax(dim=1)
        score = torch.select(logits, 1, 1)
        train_y_true += labels.to('cpu').numpy().flatten().tolist()
        train_y_pred += pred.to('cpu').detach().numpy().flatten().tolist()
        train_y_score.append(score.to('cpu'))  # expect: TML001

        if is_main_process():
            data_loader.desc = "Train: [Epoch {}] [loss {:.3f}]".format(epoch, loss.item())
        if not torch.isfinite(loss):
            print('WARNING: non-finite loss, ending training ', loss)
            sys.exit(1)
        optimizer.step()
        optimizer.zero_grad()

    if device != torch.device("cpu"):
        torch.cuda.synchronize(device)
    mean_loss /= (step + 1)
    scores = classified_scores(y_true=train_y_true, y_score=torch.cat(train_y_score).tolist(), y_pred=train_y_pred)
    return scores, mean_loss


@torch.no_grad()
def classified_evaluate(model, data_loader, criterion, device):
    model.eval()
    y_true, y_pred, y_score = [], [], []
    mean_loss = 0.0
    for step, (features, labels) in enumerate(data_loader):
        labels = labels.to(device)
        logits, _, _, _ = model(*to_inputs(features, device))
        loss = criterion(logits, labels)
        y_true += labels.to('cpu').numpy().flatten().tolist()
        y_pred += logits.argmax(dim=1).to('cpu').numpy().flatten().tolist()
        y_score += torch.select(logits, 1, 1).to('cpu').numpy().flatten().tolist()
        mean_loss += reduce_value(loss.data, average=True).item()
    mean_loss /= (step + 1)
    return classified_scores(y_true=y_true, y_score=y_score, y_pred=y_pred), mean_loss
