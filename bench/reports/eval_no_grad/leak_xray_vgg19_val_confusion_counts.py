# Source: https://github.com/LiorOhana94/Pneumonia-Detection-System/blob/5173eca78cb56c92ad6412179c5c1ada5f16bfc4/train_vgg19.script.py
# Report: audit of a pneumonia X-ray VGG19 training script: after model.eval() the per-epoch validation loop runs every batch through the model with autograd on (no no_grad), saving activations for a backward that never comes; losses are read with .item() and the TP/FP/TN/FN counters are integer device tensors
# Shape: script-style epoch loop with train phase, then eval phase computing loss, accuracy and confusion counts per batch; counters converted with .tolist() after the loop; per-epoch lists of floats
# Expect: TML003 line 39
import torch
import torch.nn as nn


def train_and_validate(model, dataloaders, num_epochs=99, lr=1e-4, wd=0.03, log_path="train_log.txt"):
    class_weights = torch.tensor([0.8, 1.0]).cuda()
    criterion = nn.CrossEntropyLoss(weight=class_weights)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=wd)
    model.cuda()
    train_losses, train_accs, val_losses, val_accs = [], [], [], []
    log = open(log_path, "w+")
    for epoch in range(num_epochs):
        log.write(f"EPOCH: {epoch + 1}\n")
        model.train()
        running_loss, running_corrects, count = 0.0, 0, 0
        for images, labels in dataloaders["train"]["loader"]:
            images, labels = images.cuda(), labels.cuda()
            outputs = model(images)
            optimizer.zero_grad()
            loss = criterion(outputs, labels)
            _, preds = torch.max(outputs, 1)
            running_corrects += torch.sum(preds == labels.data)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
            count += 1
        train_losses.append(running_loss / count)
        train_accs.append(float(running_corrects) / dataloaders["train"]["length"])

        model.eval()
        val_running_loss, val_running_corrects, count = 0.0, 0, 0
        TP = FP = TN = FN = 0
        for images, labels in dataloaders["val"]["loader"]:
            images, labels = images.cuda(), labels.cuda()
            outputs = model(images)  # expect: TML003
            _, preds = torch.max(outputs, 1)
            val_running_corrects += torch.sum(preds == labels.data)
            loss = criterion(outputs, labels)
            val_running_loss += loss.item()
            count += 1
            TP += torch.sum(preds - labels.data * 2 == -1)
            FP += torch.sum(preds - labels.data * 2 == 1)
            TN += torch.sum(preds - labels.data * 2 == 0)
            FN += torch.sum(preds - labels.data * 2 == -2)
        val_acc = float(val_running_corrects) / dataloaders["val"]["length"]
        val_accs.append(val_acc)
        val_losses.append(val_running_loss / count)
        recall = float(TP.tolist()) / (TP.tolist() + FN.tolist() + 0.1)
        precision = float(TP.tolist()) / (TP.tolist() + FP.tolist() + 0.1)
        f1 = 2 * recall * precision / (recall + precision + 0.1)
        log.write(f"Validation loss: {val_running_loss / count}\nValidation accuracy: {val_acc}\n")
        log.write(f"Recall: {recall:.2f} Precision: {precision:.2f} F1: {f1:.2f}\n")
        if val_acc >= max(val_accs):
            torch.save(model.state_dict(), "best.model")
    log.close()
    return train_losses, train_accs, val_losses, val_accs
