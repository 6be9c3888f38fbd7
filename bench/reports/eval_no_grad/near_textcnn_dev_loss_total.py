# Source: https://github.com/649453932/Chinese-Text-Classification-Pytorch/blob/35f68b163ebca3fea168e9f20057380dba849e49/train_eval.py
# Report: audit: evaluate() sums the dev cross-entropy as a tensor (loss_total += loss) and returns it, but the whole loop runs under torch.no_grad(), so nothing is graph-attached
# Shape: as the repo has it: loss_total stays a no-grad device scalar summed in place, predictions leave as numpy; the tensor accumulator holds no graph and does not grow
# Expect: near-miss: must be silent
import time

import numpy as np
import torch
import torch.nn.functional as F
from sklearn import metrics


def evaluate(config, model, data_iter, test=False):
    model.eval()
    loss_total = 0
    predict_all = np.array([], dtype=int)
    labels_all = np.array([], dtype=int)
    with torch.no_grad():
        for texts, labels in data_iter:
            outputs = model(texts)
            loss = F.cross_entropy(outputs, labels)
            loss_total += loss
            labels = labels.data.cpu().numpy()
            predic = torch.max(outputs.data, 1)[1].cpu().numpy()
            labels_all = np.append(labels_all, labels)
            predict_all = np.append(predict_all, predic)
    acc = metrics.accuracy_score(labels_all, predict_all)
    if test:
        report = metrics.classification_report(labels_all, predict_all,
                                               target_names=config.class_list, digits=4)
        return acc, loss_total / len(data_iter), report
    return acc, loss_total / len(data_iter)


def train(config, model, train_iter, dev_iter):
    start = time.time()
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    total_batch, last_improve = 0, 0
    dev_best_loss = float("inf")
    for epoch in range(config.num_epochs):
        print(f"Epoch [{epoch + 1}/{config.num_epochs}]")
        for trains, labels in train_iter:
            outputs = model(trains)
            model.zero_grad()
            loss = F.cross_entropy(outputs, labels)
            loss.backward()
            optimizer.step()
            if total_batch % 100 == 0:
                predic = torch.max(outputs.data, 1)[1].cpu()
                train_acc = metrics.accuracy_score(labels.data.cpu(), predic)
                dev_acc, dev_loss = evaluate(config, model, dev_iter)
                if dev_loss < dev_best_loss:
                    dev_best_loss = float(dev_loss)
                    torch.save(model.state_dict(), config.save_path)
                    last_improve = total_batch
                print(f"iter {total_batch:>6} train loss {loss.item():.3f} acc {train_acc:.2%} "
                      f"dev loss {float(dev_loss):.3f} acc {dev_acc:.2%} ({time.time() - start:.0f}s)")
                model.train()
            total_batch += 1
            if total_batch - last_improve > config.require_improvement:
                print("No optimization for a long time, auto-stopping...")
                return
