# Source: https://github.com/pdoyle5000/simple_net/blob/25cc2ca30b48bcffe4350ce28aa578052551cc01/train_cifar.py
# Report: audit of a CIFAR training script: the periodic test pass (under no_grad) appends every batch's predicted class tensor, still on the GPU, to all_preds so it can pickle them for a confusion matrix after training
# Shape: evaluation helper under torch.no_grad() collects labels (CPU), argmax predictions (CUDA) and image paths per batch into lists that live until the pickle at the end
# Expect: TML004 line 23
import pickle

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.tensorboard import SummaryWriter


def run_test_pass(net, test_loader, device="cuda"):
    correct, total = 0.0, 0.0
    all_labels, all_preds, all_paths = [], [], []
    with torch.no_grad():
        for inputs, labels, paths in test_loader:
            outputs = net(inputs.float().to(device))
            _, predicted = outputs.max(1)
            total += labels.size(0)
            correct += predicted.eq(labels.long().to(device)).sum().item()
            all_labels.append(labels)
            all_preds.append(predicted)  # expect: TML004
            all_paths.append(paths)
    return correct / total, {"labels": all_labels, "preds": all_preds, "paths": all_paths}


def main(net, train_loader, test_loader, output_model, epochs=400, device="cuda"):
    writer = SummaryWriter()
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=1e-3, momentum=0.9, weight_decay=5e-4)
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", patience=10)
    train_iter = 0
    dump = None
    for epoch in range(epochs):
        net.train()
        running_loss = 0.0
        for i, (inputs, labels, _) in enumerate(train_loader):
            optimizer.zero_grad()
            outputs = net(inputs.float().to(device))
            loss = criterion(outputs, labels.long().to(device))
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
            if i > 0 and i % 100 == 0:
                writer.add_scalar("TrainLoss", running_loss / 100, train_iter)
                train_iter += 1
                running_loss = 0.0

        if epoch % 5 == 0:
            net.eval()
            test_accuracy, dump = run_test_pass(net, test_loader, device)
            print(f"epoch {epoch}: test accuracy {test_accuracy:.4f}")
            writer.add_scalar("TestAccuracy", test_accuracy, epoch)
            scheduler.step(test_accuracy)

    torch.save(net.state_dict(), output_model)
    with open(output_model + ".preds.pkl", "wb") as fh:
        pickle.dump(dump, fh)
