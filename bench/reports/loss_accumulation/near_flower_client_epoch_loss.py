# Source: https://github.com/adap/flower/blob/main/doc/source/tutorial-series-get-started-with-flower-pytorch.ipynb
# Report: Flower federated-learning tutorial (fixed variant): each simulated client's local train() sums loss.item() into epoch_loss, as test() already does
# Shape: epoch_loss is a Python float that outlives the batch loop; only floats are added to it, so each batch's graph is freed after backward; test() runs under torch.no_grad() and reduces with .item()
# Expect: near-miss: must be silent
from collections import OrderedDict
from typing import List

import flwr as fl
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
NUM_CLIENTS = 10


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def train(net, trainloader, epochs: int, verbose=False):
    """Local training on one client's partition."""
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(net.parameters())
    net.train()
    for epoch in range(epochs):
        correct, total, epoch_loss = 0, 0, 0.0
        for batch in trainloader:
            images, labels = batch["img"].to(DEVICE), batch["label"].to(DEVICE)
            optimizer.zero_grad()
            outputs = net(images)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            # Metrics
            epoch_loss += loss.item()
            total += labels.size(0)
            correct += (torch.max(outputs.data, 1)[1] == labels).sum().item()
        epoch_loss /= len(trainloader.dataset)
        if verbose:
            print(f"Epoch {epoch + 1}: train loss {epoch_loss}, accuracy {correct / total}")


def test(net, testloader):
    """Evaluate the network on one client's validation partition."""
    criterion = torch.nn.CrossEntropyLoss()
    correct, total, loss = 0, 0, 0.0
    net.eval()
    with torch.no_grad():
        for batch in testloader:
            images, labels = batch["img"].to(DEVICE), batch["label"].to(DEVICE)
            outputs = net(images)
            loss += criterion(outputs, labels).item()
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
    return loss / len(testloader.dataset), correct / total


def set_parameters(net, parameters: List[np.ndarray]):
    params_dict = zip(net.state_dict().keys(), parameters)
    net.load_state_dict(OrderedDict({k: torch.Tensor(v) for k, v in params_dict}), strict=True)


def get_parameters(net) -> List[np.ndarray]:
    return [val.cpu().numpy() for _, val in net.state_dict().items()]


class FlowerClient(fl.client.NumPyClient):
    def __init__(self, net, trainloader, valloader):
        self.net, self.trainloader, self.valloader = net, trainloader, valloader

    def get_parameters(self, config):
        return get_parameters(self.net)

    def fit(self, parameters, config):
        set_parameters(self.net, parameters)
        train(self.net, self.trainloader, epochs=1, verbose=True)
        return get_parameters(self.net), len(self.trainloader), {}

    def evaluate(self, parameters, config):
        set_parameters(self.net, parameters)
        loss, accuracy = test(self.net, self.valloader)
        return float(loss), len(self.valloader), {"accuracy": float(accuracy)}


def make_client_fn(trainloaders, valloaders):
    def client_fn(cid: str):
        net = Net().to(DEVICE)
        return FlowerClient(net, trainloaders[int(cid)], valloaders[int(cid)]).to_client()
    return client_fn


def run_simulation(trainloaders, valloaders, num_rounds=5):
    strategy = fl.server.strategy.FedAvg(fraction_fit=1.0, fraction_evaluate=0.5,
                                         min_fit_clients=10, min_evaluate_clients=5,
                                         min_available_clients=NUM_CLIENTS)
    client_resources = {"num_cpus": 1, "num_gpus": 1.0 if DEVICE.type == "cuda" else 0.0}
    return fl.simulation.start_simulation(
        client_fn=make_client_fn(trainloaders, valloaders), num_clients=NUM_CLIENTS,
        config=fl.server.ServerConfig(num_rounds=num_rounds), strategy=strategy,
        client_resources=client_resources)
