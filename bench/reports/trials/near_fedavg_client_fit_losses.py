# Source: https://github.com/laurent-vouriot/Federated-Learning/blob/1510c97e8e66a2299c44a85b8a8bdbd80882cb45/README.md
# Report: audit of a FedAvg MNIST notebook: fit() calls loss.detach() as a bare statement and appends the graph-attached loss, evaluate() appends CUDA loss tensors; the fix takes .item() before storing
# Shape: same per-client, per-round nets and fit()/evaluate() methods; both loops store loss.item() floats, while the CPU accuracy tensors built from .item() are still stacked at the end
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class FederatedNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 20, 7)
        self.conv2 = torch.nn.Conv2d(20, 40, 7)
        self.head = torch.nn.Linear(2560, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        return self.head(x.flatten(1))

    def get_parameters(self):
        return {name: p.data for name, p in self.named_parameters()}

    def apply_parameters(self, params):
        with torch.no_grad():
            for name, p in self.named_parameters():
                p.copy_(params[name])

    def _process_batch(self, batch):
        images, labels = (t.to(device, non_blocking=True) for t in batch)
        outputs = self(images)
        loss = F.cross_entropy(outputs, labels)
        acc = torch.tensor((outputs.argmax(1) == labels).sum().item() / len(labels))
        return loss, acc

    def fit(self, dataset, epochs, lr, batch_size=128):
        loader = DataLoader(dataset, batch_size, shuffle=True)
        optimizer = torch.optim.SGD(self.parameters(), lr)
        history = []
        for epoch in range(epochs):
            losses, accs = [], []
            for batch in loader:
                loss, acc = self._process_batch(batch)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                losses.append(loss.item())
                accs.append(acc)
            history.append((sum(losses) / len(losses), torch.stack(accs).mean().item()))
        return history

    def evaluate(self, dataset, batch_size=128):
        losses, accs = [], []
        with torch.no_grad():
            for batch in DataLoader(dataset, batch_size):
                loss, acc = self._process_batch(batch)
                losses.append(loss.item())
                accs.append(acc)
        return sum(losses) / len(losses), torch.stack(accs).mean().item()


class Client:
    def __init__(self, client_id, dataset):
        self.client_id = client_id
        self.dataset = dataset

    def train(self, global_params, epochs, lr):
        net = FederatedNet().to(device)
        net.apply_parameters(global_params)
        net.fit(self.dataset, epochs, lr)
        return net.get_parameters()


def fed_avg(clients, dev_set, rounds=20, epochs=3, lr=2e-2):
    global_net = FederatedNet().to(device)
    total = sum(len(c.dataset) for c in clients)
    history = []
    for rnd in range(rounds):
        current = global_net.get_parameters()
        merged = {name: torch.zeros_like(p) for name, p in current.items()}
        for client in clients:
            local = client.train(current, epochs, lr)
            for name in merged:
                merged[name] += len(client.dataset) / total * local[name]
        global_net.apply_parameters(merged)
        history.append(global_net.evaluate(dev_set))
    return history
