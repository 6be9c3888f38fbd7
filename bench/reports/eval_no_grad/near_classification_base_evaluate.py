# Source: https://github.com/yhytoto12/MMsys/blob/494642757f69bd72e5ff2b1fe0ff0a8c3b820a82/test_model.py
# Report: audit: evaluate() builds [model.validation_step(b) for b in val_loader] with no no_grad decorator (and no eval()), so ImageClassificationBase.validation_step (utils.py) runs each ResNet forward with autograd on
# Shape: same base class and comprehension, but evaluate() is decorated with @torch.no_grad() and calls model.eval() first, so every validation_step forward runs grad-free; the kept dicts hold detached CPU scalars
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


def accuracy(outputs, labels):
    preds = outputs.argmax(dim=1)
    return torch.tensor((preds == labels).sum().item() / len(preds))


class ImageClassificationBase(nn.Module):
    def training_step(self, batch):
        images, labels = batch
        return F.cross_entropy(self(images), labels)

    def validation_step(self, batch):
        images, labels = batch
        out = self(images)
        loss = F.cross_entropy(out, labels)
        return {"val_loss": loss.detach().cpu(), "val_acc": accuracy(out, labels)}

    def validation_epoch_end(self, outputs):
        loss = torch.stack([o["val_loss"] for o in outputs]).mean()
        acc = torch.stack([o["val_acc"] for o in outputs]).mean()
        return {"val_loss": loss.item(), "val_acc": acc.item()}

    def epoch_end(self, epoch, result):
        print(f"epoch {epoch}: val_loss {result['val_loss']:.4f} val_acc {result['val_acc']:.4f}")


class SmallResNet(ImageClassificationBase):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.Conv2d(64, 128, 3, padding=1, stride=2), nn.BatchNorm2d(128), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.head = nn.Linear(128, num_classes)

    def forward(self, x):
        return self.head(self.features(x))


@torch.no_grad()
def evaluate(model, val_loader):
    model.eval()
    outputs = [model.validation_step(batch) for batch in val_loader]
    return model.validation_epoch_end(outputs)


def fit(epochs, lr, model, train_loader, val_loader, opt_func=torch.optim.SGD):
    optimizer = opt_func(model.parameters(), lr)
    history = []
    for epoch in range(epochs):
        model.train()
        for batch in train_loader:
            loss = model.training_step(batch)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        result = evaluate(model, val_loader)
        model.epoch_end(epoch, result)
        history.append(result)
    return history
