# Source: https://github.com/christianversloot/machine-learning-articles/blob/509a60dcca67c135bb0bb4fca8bc68ccb826716b/how-to-use-k-fold-cross-validation-with-pytorch.md
# Report: K-fold cross-validation tutorial: a fresh network per fold, running loss printed every 500 mini-batches, per-fold accuracy under no_grad
# Shape: current_loss += loss.item() keeps a Python float (reset every 500 steps); fold accuracy comes from .item() counts inside torch.no_grad()
# Expect: near-miss: must be silent
import torch
from torch import nn
from torch.utils.data import DataLoader, SubsetRandomSampler
from sklearn.model_selection import KFold


def reset_weights(m):
    for layer in m.children():
        if hasattr(layer, "reset_parameters"):
            layer.reset_parameters()


class SmallConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Conv2d(1, 10, kernel_size=3), nn.ReLU(), nn.Flatten(),
            nn.Linear(26 * 26 * 10, 50), nn.ReLU(), nn.Linear(50, 10),
        )

    def forward(self, x):
        return self.layers(x)


def cross_validate(dataset, k_folds=5, num_epochs=1, device="cuda"):
    loss_function = nn.CrossEntropyLoss()
    results = {}
    splitter = KFold(n_splits=k_folds, shuffle=True)
    for fold, (train_ids, test_ids) in enumerate(splitter.split(dataset)):
        trainloader = DataLoader(dataset, batch_size=10, sampler=SubsetRandomSampler(train_ids))
        testloader = DataLoader(dataset, batch_size=10, sampler=SubsetRandomSampler(test_ids))

        network = SmallConvNet().to(device)
        network.apply(reset_weights)
        optimizer = torch.optim.Adam(network.parameters(), lr=1e-4)

        for epoch in range(num_epochs):
            current_loss = 0.0
            for i, (inputs, targets) in enumerate(trainloader):
                inputs, targets = inputs.to(device), targets.to(device)
                optimizer.zero_grad()
                loss = loss_function(network(inputs), targets)
                loss.backward()
                optimizer.step()
                current_loss += loss.item()
                if i % 500 == 499:
                    print("loss after mini-batch %5d: %.3f" % (i + 1, current_loss / 500))
                    current_loss = 0.0

        torch.save(network.state_dict(), f"./model-fold-{fold}.pth")

        correct, total = 0, 0
        with torch.no_grad():
            for inputs, targets in testloader:
                inputs, targets = inputs.to(device), targets.to(device)
                outputs = network(inputs)
                _, predicted = torch.max(outputs.data, 1)
                total += targets.size(0)
                correct += (predicted == targets).sum().item()
        results[fold] = 100.0 * correct / total
        print("accuracy for fold %d: %d %%" % (fold, results[fold]))

    return sum(results.values()) / len(results)
