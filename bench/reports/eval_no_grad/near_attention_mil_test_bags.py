# Source: https://github.com/AMLab-Amsterdam/AttentionDeepMIL/issues/20
# Report: testing the attention-MIL model used 25-30 GiB of GPU memory; the fix named in the issue is to run test() under torch.no_grad()
# Shape: the whole test loop sits inside torch.no_grad(), so the bag forward saves no activations and only floats are accumulated
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class AttentionMIL(nn.Module):
    def __init__(self, feat=500, hidden=128):
        super().__init__()
        self.extractor = nn.Sequential(
            nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(20, 50, 5), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.fc = nn.Sequential(nn.Linear(50 * 4 * 4, feat), nn.ReLU())
        self.attention = nn.Sequential(nn.Linear(feat, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.classifier = nn.Sequential(nn.Linear(feat, 1), nn.Sigmoid())

    def forward(self, x):
        x = x.squeeze(0)
        h = self.fc(self.extractor(x).view(x.size(0), -1))
        a = F.softmax(self.attention(h).t(), dim=1)
        m = torch.mm(a, h)
        y_prob = self.classifier(m)
        y_hat = torch.ge(y_prob, 0.5).float()
        return y_prob, y_hat, a

    @staticmethod
    def objective(y_prob, y):
        y_prob = torch.clamp(y_prob, min=1e-5, max=1.0 - 1e-5)
        return -(y * torch.log(y_prob) + (1.0 - y) * torch.log(1.0 - y_prob)).mean()

    @staticmethod
    def classification_error(y_hat, y):
        return 1.0 - y_hat.eq(y).float().mean().item()


def train(model, optimizer, train_loader, epoch):
    model.train()
    train_loss, train_error = 0.0, 0.0
    for data, label in train_loader:
        data, bag_label = data.cuda(), label[0].float().cuda()
        optimizer.zero_grad()
        y_prob, y_hat, _ = model(data)
        loss = model.objective(y_prob, bag_label)
        train_loss += loss.item()
        train_error += model.classification_error(y_hat, bag_label)
        loss.backward()
        optimizer.step()
    n = len(train_loader)
    print("Epoch: {}, Loss: {:.4f}, Train error: {:.4f}".format(epoch, train_loss / n, train_error / n))


def test(model, test_loader):
    model.eval()
    test_loss, test_error = 0.0, 0.0
    with torch.no_grad():
        for batch_idx, (data, label) in enumerate(test_loader):
            bag_label = label[0].float().cuda()
            instance_labels = label[1]
            data = data.cuda()
            y_prob, y_hat, attention_weights = model(data)
            loss = model.objective(y_prob, bag_label)
            test_loss += loss.item()
            test_error += model.classification_error(y_hat, bag_label)
            if batch_idx < 5:
                weights = np.round(attention_weights.detach().cpu().numpy()[0], decimals=3).tolist()
                print("instances", list(zip(instance_labels.numpy()[0].tolist(), weights)))
    n = len(test_loader)
    print("Test Set, Loss: {:.4f}, Test error: {:.4f}".format(test_loss / n, test_error / n))


def main(train_loader, test_loader, epochs=20):
    model = AttentionMIL().cuda()
    optimizer = optim.Adam(model.parameters(), lr=5e-4, betas=(0.9, 0.999), weight_decay=1e-4)
    for epoch in range(1, epochs + 1):
        train(model, optimizer, train_loader, epoch)
    test(model, test_loader)
