# Modelled on: https://github.com/SPOClab-ca/dn3/issues/38
# Report: near-miss: predictions kept as Python numbers / lists, not device tensors.
import torch


class BaseProcess:
    def __init__(self, classifier, device="cuda"):
        self.classifier = classifier.to(device)
        self.device = device

    def predict(self, dataset_loader):
        self.classifier.eval()
        predictions, confidences = [], []
        with torch.no_grad():
            for x, _ in dataset_loader:
                out = self.classifier(x.to(self.device))
                prob, pred = out.softmax(dim=1).max(dim=1)
                predictions.extend(pred.tolist())
                confidences.append(prob.mean().item())
        return predictions, confidences
