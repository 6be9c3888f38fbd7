# Source: https://github.com/SPOClab-ca/dn3/issues/38
# Report: the fix moves outputs, predictions and labels to the CPU as soon as the model is done with them.
# Shape: same trainable-process predict loop under no_grad; each batch's outputs and labels are moved to the CPU before they are kept.
# Expect: near-miss: must be silent
import torch


class StandardClassification:
    def __init__(self, classifier, device):
        self.classifier = classifier.to(device)
        self.device = device

    def forward(self, batch):
        inputs, labels = (t.to(self.device) for t in batch)
        return self.classifier(inputs), labels

    def predict(self, loader):
        self.classifier.eval()
        outputs, targets = [], []
        with torch.no_grad():
            for batch in loader:
                logits, labels = self.forward(batch)
                outputs.append(logits.cpu())
                targets.append(labels.cpu())
        return torch.cat(outputs), torch.cat(targets)

    def evaluate(self, loader):
        logits, labels = self.predict(loader)
        return {"accuracy": (logits.argmax(-1) == labels).float().mean().item()}
