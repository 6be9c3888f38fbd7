# Source: https://github.com/SPOClab-ca/dn3/issues/38
# Report: GPU memory filled during prediction and evaluation because outputs, predictions and labels stayed on the GPU in the base process after the model was done with them.
# Shape: a trainable-process class runs its classifier batch by batch under no_grad and keeps the outputs and the device labels in lists it concatenates only at the end.
# Expect: TML004 lines 23, 24
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
                outputs.append(logits)  # expect: TML004
                targets.append(labels)  # expect: TML004
        return torch.cat(outputs), torch.cat(targets)

    def evaluate(self, loader):
        logits, labels = self.predict(loader)
        return {"accuracy": (logits.argmax(-1) == labels).float().mean().item()}
