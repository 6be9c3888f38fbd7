# Source: https://github.com/01joja/D7047E/blob/3004dc7eda1be1784feb1f667ecaa46417461c6f/training.py
# Report: LTU D7047E deep-learning course project (pneumonia X-rays), validation pass fixed: network.eval() and the loop under torch.no_grad(), network.train() before the next epoch
# Shape: the validation forward runs under no_grad (no saved activations); training losses and validation losses kept as .item() floats
# Expect: near-miss: must be silent
import copy
import pickle

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader


def create_network():
    return nn.Sequential(
        nn.Conv2d(1, 2, kernel_size=5, padding=1), nn.LeakyReLU(),
        nn.Conv2d(2, 2, kernel_size=5, padding=1), nn.LeakyReLU(),
        nn.MaxPool2d(kernel_size=2),
        nn.Conv2d(2, 4, kernel_size=3, padding=1), nn.LeakyReLU(),
        nn.Conv2d(4, 4, kernel_size=3, padding=1), nn.LeakyReLU(),
        nn.MaxPool2d(kernel_size=2),
        nn.Flatten(),
        nn.Linear(29584, 4096),
        nn.Linear(4096, 2),
    )


def save_best(network, path="best_network"):
    with open(path, 'wb') as f:
        pickle.dump(network, f, protocol=pickle.HIGHEST_PROTOCOL)


def run(data_train, data_val, device, epochs=10, batch_size=200, learning_rate=1e-3):
    train_loader = DataLoader(data_train, batch_size=batch_size, shuffle=True)
    validation_loader = DataLoader(data_val, batch_size=batch_size, shuffle=True)

    network = create_network().to(device)
    optimizer = optim.Adam(network.parameters(), lr=learning_rate)
    loss_function = nn.CrossEntropyLoss()
    best_model = copy.deepcopy(network)
    validation_loss = 9000

    for epoch in range(epochs):
        network.train()
        new_trainingloss = 0
        i = 0
        for train_nr, (images, labels) in enumerate(train_loader):
            i += 1
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            prediction = network(images)
            loss = loss_function(prediction, labels)
            loss.backward()
            optimizer.step()
            print('\rEpoch {} [{}/{}] - Loss: {:.4f} train'.format(
                epoch + 1, train_nr + 1, len(train_loader), loss.item()), end='')
            new_trainingloss += loss.item()

        total_val_loss = 0
        i = 0
        network.eval()
        with torch.no_grad():
            for val_nr, (images, labels) in enumerate(validation_loader):
                i += 1
                images, labels = images.to(device), labels.to(device)
                prediction = network(images)
                loss = loss_function(prediction, labels).item()
                total_val_loss += loss
                print('\rEpoch {} [{}/{}] - Loss: {:.4f} val'.format(
                    epoch + 1, val_nr + 1, len(validation_loader), loss), end='')

        new_validationloss = total_val_loss / i
        if new_validationloss < validation_loss:
            validation_loss = new_validationloss
            best_model = copy.deepcopy(network)
            save_best(best_model)
    return best_model
