# Modelled on: https://github.com/SPOClab-ca/dn3/issues/38
# Report: GPU memory filled during prediction/evaluation; outputs/predictions/labels had to be moved to the CPU.
import torch


class BaseProcess:
    def __init__(self, classifier, device="cuda"):
        self.classifier = classifier.to(device)
        self.device = device

    def predict(self, dataset_loader):
        self.classifier.eval()
        outputs = []
        with torch.no_grad():
            for batch in dataset_loader:
                batch = [t.to(self.device) for t in batch]
                out = self.classifier(batch[0])
                outputs.append(out)  # expect: TML004
        return outputs
