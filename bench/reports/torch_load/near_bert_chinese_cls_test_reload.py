# Source: https://github.com/649453932/Bert-Chinese-Text-Classification-Pytorch/blob/050a7b0dc75d8a2d7fd526002c4642d5329a0c27/train_eval.py
# Report: audited: test() reloads the best BERT checkpoint with torch.load and no map_location (tensors land on the GPU they were saved from)
# Shape: fixed variant: torch.load(config.save_path, map_location=config.device); evaluate still sums the loss tensor under torch.no_grad() (not graph-attached, must stay silent)
# Expect: near-miss: must be silent
import time

import numpy as np
import torch
import torch.nn.functional as F
from sklearn import metrics


def train(config, model, train_iter, dev_iter, test_iter, optimizer):
    dev_best_loss = float("inf")
    total_batch = 0
    last_improve = 0
    model.train()
    for epoch in range(config.num_epochs):
        print("Epoch [{}/{}]".format(epoch + 1, config.num_epochs))
        stop = False
        for trains, labels in train_iter:
            outputs = model(trains)
            model.zero_grad()
            loss = F.cross_entropy(outputs, labels)
            loss.backward()
            optimizer.step()
            if total_batch % 100 == 0:
                true = labels.data.cpu()
                predic = torch.max(outputs.data, 1)[1].cpu()
                train_acc = metrics.accuracy_score(true, predic)
                dev_acc, dev_loss = evaluate(config, model, dev_iter)
                if dev_loss < dev_best_loss:
                    dev_best_loss = dev_loss
                    torch.save(model.state_dict(), config.save_path)
                    last_improve = total_batch
                print("Iter {} train loss {:.3f} acc {:.2%} val loss {:.3f} val acc {:.2%}".format(
                    total_batch, loss.item(), train_acc, dev_loss, dev_acc))
                model.train()
            total_batch += 1
            if total_batch - last_improve > config.require_improvement:
                print("No optimization for a long time, auto-stopping...")
                stop = True
                break
        if stop:
            break
    test(config, model, test_iter)


def test(config, model, test_iter):
    start_time = time.time()
    state = torch.load(config.save_path, map_location=config.device)
    model.load_state_dict(state)
    model.eval()
    test_acc, test_loss, report, confusion = evaluate(config, model, test_iter, test=True)
    print("Test Loss: {:.3f}, Test Acc: {:.2%}".format(test_loss, test_acc))
    print(report)
    print(confusion)
    print("Time usage:", time.time() - start_time)


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
            predic = torch.max(outputs.data, 1)[1].cpu().numpy()
            labels_all = np.append(labels_all, labels.data.cpu().numpy())
            predict_all = np.append(predict_all, predic)
    acc = metrics.accuracy_score(labels_all, predict_all)
    if test:
        report = metrics.classification_report(
            labels_all, predict_all, target_names=config.class_list, digits=4)
        confusion = metrics.confusion_matrix(labels_all, predict_all)
        return acc, loss_total / len(data_iter), report, confusion
    return acc, loss_total / len(data_iter)
