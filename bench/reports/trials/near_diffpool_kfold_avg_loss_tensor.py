# Source: https://github.com/RexYing/diffpool/blob/8dfb97cf60c2376ac804761837b9966f1d302acb/train.py
# Report: audit of DiffPool's 10-fold benchmark: train() sums the graph-attached batch loss into avg_loss for the whole epoch (avg_loss += loss) and parks that tensor in best_val_result['loss'] across epochs, and evaluate() runs the GNN after model.eval() with no no_grad, once for a train subset and once for the fold's validation set every epoch
# Shape: fixed variant: avg_loss sums loss.detach() (a plain float is stored in best_val_result) and evaluate() wraps its batch loop in torch.no_grad(); the ten-fold driver, per-fold encoder and histories are unchanged
# Expect: near-miss: must be silent
import numpy as np
import sklearn.metrics as metrics
import torch
import torch.nn as nn


def evaluate(dataset, model, name="Validation", max_num_examples=None, batch_size=20):
    model.eval()
    labels, preds = [], []
    with torch.no_grad():
        for batch_idx, data in enumerate(dataset):
            adj = data["adj"].float().cuda()
            h0 = data["feats"].float().cuda()
            labels.append(data["label"].long().numpy())
            assign_input = data["assign_feats"].float().cuda()
            ypred = model(h0, adj, data["num_nodes"].int().numpy(), assign_x=assign_input)
            _, indices = torch.max(ypred, 1)
            preds.append(indices.cpu().numpy())
            if max_num_examples is not None and (batch_idx + 1) * batch_size > max_num_examples:
                break
    labels, preds = np.hstack(labels), np.hstack(preds)
    result = {"acc": metrics.accuracy_score(labels, preds),
              "F1": metrics.f1_score(labels, preds, average="micro")}
    print(name, "accuracy:", result["acc"])
    return result


def train(dataset, model, args, val_dataset=None):
    optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=0.001)
    best_val_result = {"epoch": 0, "loss": 0, "acc": 0}
    train_accs, val_accs = [], []
    for epoch in range(args.num_epochs):
        avg_loss = 0.0
        model.train()
        for batch_idx, data in enumerate(dataset):
            model.zero_grad()
            adj = data["adj"].float().cuda()
            h0 = data["feats"].float().cuda()
            label = data["label"].long().cuda()
            assign_input = data["assign_feats"].float().cuda()
            ypred = model(h0, adj, data["num_nodes"].int().numpy(), assign_x=assign_input)
            loss = model.loss(ypred, label)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            avg_loss += loss.detach()
        avg_loss = float(avg_loss) / (batch_idx + 1)
        print("Avg loss:", avg_loss)
        train_accs.append(evaluate(dataset, model, name="Train", max_num_examples=100)["acc"])
        val_result = evaluate(val_dataset, model, name="Validation")
        val_accs.append(val_result["acc"])
        if val_result["acc"] > best_val_result["acc"] - 1e-7:
            best_val_result["acc"] = val_result["acc"]
            best_val_result["epoch"] = epoch
            best_val_result["loss"] = avg_loss
        print("Best val result:", best_val_result)
    return model, val_accs


def benchmark_task_val(args, graphs, prepare_val_data, build_encoder):
    all_vals = []
    for i in range(10):
        train_dataset, val_dataset, max_num_nodes, input_dim, assign_dim = prepare_val_data(graphs, args, i)
        model = build_encoder(max_num_nodes, input_dim, assign_dim, args).cuda()
        _, val_accs = train(train_dataset, model, args, val_dataset=val_dataset)
        all_vals.append(np.array(val_accs))
    all_vals = np.mean(np.vstack(all_vals), axis=0)
    print(all_vals, np.max(all_vals), np.argmax(all_vals))
    return all_vals
