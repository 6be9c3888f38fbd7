# Source: https://github.com/SanoScience/CXR-FL/blob/93b1410d1ebeb4964428deafef9a349e2a06cadf/classification/utils.py
# Report: the CXR-FL test_single_label() loop with the per-batch predictions and labels moved to the host before they are kept (.cpu()), the usual fix for GPU-resident eval outputs
# Shape: same no_grad loop and same lists that outlive it; each appended value is now a CPU copy, so device memory stays flat over the test set
# Expect: near-miss: must be silent
import json

import torch
import torch.nn.functional as F
from sklearn.metrics import accuracy_score, classification_report

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def accuracy(y_pred, y_true):
    y_pred = F.softmax(y_pred, dim=1)
    top_p, top_class = y_pred.topk(1, dim=1)
    equals = top_class == y_true.view(*top_class.shape)
    return torch.mean(equals.type(torch.FloatTensor)).item()


def test_single_label(model, device, logger, test_loader, criterion, classes_names):
    test_running_loss = 0.0
    test_running_accuracy = 0.0
    test_preds = []
    test_labels = []
    model.eval()
    logger.info("Testing: ")
    with torch.no_grad():
        for batch_idx, (image, batch_label) in enumerate(test_loader):
            image = image.to(device=device, dtype=torch.float32)
            batch_label = batch_label.to(device=device)

            logits = model(image)
            loss = criterion(logits, batch_label)
            test_running_loss += loss.item()
            test_running_accuracy += accuracy(logits, batch_label)

            y_pred = F.softmax(logits, dim=1)
            top_p, top_class = y_pred.topk(1, dim=1)
            test_preds.append(top_class.cpu())
            test_labels.append(batch_label.view(*top_class.shape).cpu())

            if batch_idx % 50 == 0:
                logger.info(f"batch_idx: {batch_idx} running_loss: "
                            f"{test_running_loss / (batch_idx + 1):.4f}")

    test_preds = torch.cat(test_preds, dim=0).tolist()
    test_labels = torch.cat(test_labels, dim=0).tolist()
    report_json = json.dumps(
        classification_report(test_labels, test_preds, target_names=classes_names, output_dict=True))
    test_loss = test_running_loss / len(test_loader)
    test_acc = accuracy_score(test_labels, test_preds)
    logger.info(f" Test Loss: {test_loss:.4f} Test Acc: {test_acc:.4f}")
    return test_acc, test_loss, report_json


class RSNAClient:
    """Flower NumPyClient-style wrapper: evaluate() runs once per FL round."""

    def __init__(self, model, test_loader, criterion, logger, classes_names):
        self.model = model
        self.test_loader = test_loader
        self.criterion = criterion
        self.logger = logger
        self.classes_names = classes_names

    def evaluate(self, parameters, config):
        acc, loss, report = test_single_label(self.model, DEVICE, self.logger, self.test_loader,
                                              self.criterion, self.classes_names)
        return float(loss), len(self.test_loader), {"accuracy": acc, "report": report}
